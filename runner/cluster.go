package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/containers"
)

// clusterKind is one way to build a lock service's topology (--cluster):
// how to check that what it needs is there, and how to build it.
type clusterKind struct {
	// check refuses a service (and a plan) the kind cannot build, before
	// anything starts.
	check func(p plan) error
	// look checks that what the kind needs is installed or answers.
	look func(ctx context.Context, p plan) error
	// build returns the unstarted topology.
	build func(p plan, cfg clusters.TopologyConfig) (topology, error)
}

// Cluster kinds: local processes (the default) or Docker containers.
const (
	ClusterLocal  = "local"
	ClusterDocker = "docker"
)

// clusterKinds holds the --cluster values. Nothing changes it after init.
var clusterKinds = map[string]clusterKind{
	ClusterLocal: {
		check: func(plan) error { return nil },
		look:  func(_ context.Context, p plan) error { return p.service.Look() },
		build: func(p plan, cfg clusters.TopologyConfig) (topology, error) { return p.service.New(cfg), nil },
	},
	ClusterDocker: {
		check: func(p plan) error {
			_, err := containers.Find(p.service.Name)
			return err
		},
		look: func(ctx context.Context, p plan) error {
			b, err := containers.Find(p.service.Name)
			if err != nil {
				return err
			}
			if _, err := b.New(p.config(Test{}, "")); err != nil {
				return err
			}
			return b.Look(ctx)
		},
		build: func(p plan, cfg clusters.TopologyConfig) (topology, error) {
			b, err := containers.Find(p.service.Name)
			if err != nil {
				return nil, err
			}
			return b.New(cfg)
		},
	},
}

// findCluster returns the kind called name ("" is local), or an error
// naming the kinds.
func findCluster(name string) (clusterKind, error) {
	if name == "" {
		name = ClusterLocal
	}
	if k, ok := clusterKinds[name]; ok {
		return k, nil
	}
	var names []string
	for n := range clusterKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return clusterKind{}, fmt.Errorf("--cluster %q: want %s", name, strings.Join(names, " or "))
}

// failedTopology stands for a topology that could not be built: its Setup
// returns why.
type failedTopology struct{ err error }

func (f failedTopology) Setup(context.Context) error    { return f.err }
func (f failedTopology) Teardown(context.Context) error { return nil }
func (f failedTopology) Nodes() []clusters.Node         { return nil }
func (f failedTopology) LockAddrs(int) []string         { return nil }
func (f failedTopology) StorageAddr() string            { return "" }
