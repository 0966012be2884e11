package containers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/lookups"
)

// Builder is how one lock service (by its clusters.Service name) is built
// from containers.
type Builder struct {
	// Service is the name of the clusters.Service this builds.
	Service string
	// Images are the images the topology runs.
	Images []Image
	// New returns the unstarted topology for cfg, or an error when cfg asks
	// for something the container form does not have.
	New func(cfg clusters.TopologyConfig) (clusters.Topology, error)
}

// builders holds the registered builders; each service file adds its own
// from init and nothing changes it afterwards.
var builders []Builder

func register(b Builder) { builders = append(builders, b) }

// Find returns the builder of service, or an error naming the services that
// have one.
func Find(service string) (Builder, error) {
	lookups.Count("container")
	var names []string
	for _, b := range builders {
		if b.Service == service {
			return b, nil
		}
		names = append(names, b.Service)
	}
	sort.Strings(names)
	return Builder{}, fmt.Errorf("--cluster docker: service %s has no container topology (services with one: %s)", service, strings.Join(names, ", "))
}

// Look checks that a Docker engine answers and has every image b runs, and
// removes what earlier runs whose process is gone left behind. Its error is
// one line: no engine (wrapping ErrNoEngine), or a missing image (wrapping
// ErrMissingImage, naming `make images`).
func (b Builder) Look(ctx context.Context) error {
	e, err := connect(ctx)
	if err != nil {
		return fmt.Errorf("--cluster docker: %w", err)
	}
	defer e.close()
	var refs []string
	for _, img := range b.Images {
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
