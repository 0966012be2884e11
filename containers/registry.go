package containers

import (
	"context"
	"fmt"

	"github.com/lockcheck/lockcheck/clusters"
)

// register gives a service its container form (clusters.ContainerForm).
func register(service string, f clusters.ContainerForm) { clusters.RegisterContainerForm(service, f) }

// Look checks that a Docker engine answers and has every image form runs
// (by short name, containers/images.txt), and removes what earlier runs
// whose process is gone left behind. Its error is one line: no engine
// (wrapping ErrNoEngine), or a missing image (wrapping ErrMissingImage,
// naming `make images`).
func Look(ctx context.Context, form clusters.ContainerForm) error {
	e, err := connect(ctx)
	if err != nil {
		return fmt.Errorf("--cluster docker: %w", err)
	}
	defer e.close()
	var refs []string
	for _, short := range form.Images {
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
