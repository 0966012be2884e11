package containers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/testcontainers/testcontainers-go"
)

// Look checks that a Docker engine answers and has every image form runs
// (by short name, containers/images.txt) and the storage node's, and removes what earlier runs
// whose process is gone left behind. Its error is one line: no engine
// (wrapping ErrNoEngine), or a missing image (wrapping ErrMissingImage,
// naming `make images`).
func Look(ctx context.Context, form clusters.ContainerForm) error {
	e, err := connect(ctx)
	if err != nil {
		return fmt.Errorf("--cluster docker: %w", err)
	}
	defer e.close()
	if storageForm == nil {
		return errNoStorage
	}
	var refs []string
	for _, short := range append(append([]string(nil), form.Images...), storageForm.Image) {
		img, ok := ImageOf(short)
		if !ok {
			return fmt.Errorf("--cluster docker: image %q is not in containers/images.txt", short)
		}
		refs = append(refs, img.Ref())
	}
	if err := e.checkImages(ctx, refs...); err != nil {
		return fmt.Errorf("--cluster docker: %w", err)
	}
	if _, err := e.sweep(ctx); err != nil {
		return fmt.Errorf("--cluster docker: remove leftovers of earlier runs: %w", err)
	}
	return nil
}

// StorageForm is the container form of the storage node of the protected
// resource, which every container topology starts beside its lock nodes:
// the package of the service that serves it registers it
// (RegisterStorage).
type StorageForm struct {
	// Image is the short name of its image (containers/images.txt).
	Image string
	// Spec returns the storage node's container on nw.
	Spec func(nw *testcontainers.DockerNetwork) NodeSpec
}

var storageForm *StorageForm

// RegisterStorage sets the storage node's container form. A second
// registration, or one with no image or Spec, is a programming error and
// panics.
func RegisterStorage(f StorageForm) {
	if f.Image == "" || f.Spec == nil {
		panic("containers: storage form: Image and Spec are required")
	}
	if storageForm != nil {
		panic("containers: storage form registered twice")
	}
	storageForm = &f
}

// errNoStorage is returned when no package registered the storage form.
var errNoStorage = errors.New("--cluster docker: no storage node form registered (import the services package)")

// StorageSpec returns the storage node's container on nw, named
// clusters.StorageName.
func StorageSpec(nw *testcontainers.DockerNetwork) (NodeSpec, error) {
	if storageForm == nil {
		return NodeSpec{}, errNoStorage
	}
	return storageForm.Spec(nw), nil
}

// WaitStorage waits until the storage node answers (clusters.PingStorage).
func WaitStorage(ctx context.Context, n *Container) error {
	return WaitFor(ctx, 30*time.Second, clusters.StorageName, func() error { return clusters.PingStorage(n.Addr()) })
}
