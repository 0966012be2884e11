package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/containers"
	"github.com/lockcheck/lockcheck/internal/lookups"
)

// clusterKind is one way to build a lock service's topology (--cluster):
// how to resolve what it needs, how to check that it is there, and how to
// build it.
type clusterKind struct {
	// resolve refuses a plan the kind cannot build, before anything
	// starts, and keeps in it what the kind looked up.
	resolve func(p *Plan) error
	// look checks that what the kind needs is installed or answers.
	look func(ctx context.Context, p *Plan) error
	// build returns the unstarted topology.
	build func(p *Plan, cfg clusters.TopologyConfig) (topology, error)
}

// Cluster kinds: local processes (the default), Docker containers, or
// lock servers someone else runs.
const (
	ClusterLocal    = "local"
	ClusterDocker   = "docker"
	ClusterExternal = "external"
)

// clusterKinds holds the --cluster values. Nothing changes it after init.
var clusterKinds = map[string]clusterKind{
	ClusterLocal: {
		resolve: func(*Plan) error { return nil },
		look:    func(_ context.Context, p *Plan) error { return p.Service.Look() },
		build:   func(p *Plan, cfg clusters.TopologyConfig) (topology, error) { return p.Service.New(cfg), nil },
	},
	ClusterDocker: {
		resolve: func(p *Plan) error {
			if p.Service.Container == nil {
				var with []string
				for _, s := range clusters.Services() {
					if s.Container != nil {
						with = append(with, s.Name)
					}
				}
				return fmt.Errorf("--cluster docker: service %s has no container topology (services with one: %s)",
					p.Service.Name, strings.Join(with, ", "))
			}
			return nil
		},
		look: func(ctx context.Context, p *Plan) error {
			if _, err := p.Service.Container.New(p.config("")); err != nil {
				return err
			}
			return containers.Look(ctx, *p.Service.Container)
		},
		build: func(p *Plan, cfg clusters.TopologyConfig) (topology, error) { return p.Service.Container.New(cfg) },
	},
	ClusterExternal: {
		resolve: resolveExternal,
		// The storage node of the protected resource is a local server.
		look:  func(context.Context, *Plan) error { return clusters.LookStorage() },
		build: buildExternal,
	},
}

// findCluster returns the kind called name ("" is local), or an error
// naming the kinds.
func findCluster(name string) (clusterKind, error) {
	lookups.Count("cluster")
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
	return clusterKind{}, fmt.Errorf("--cluster %q: want %s or %s", name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// failedTopology stands for a topology that could not be built: its Setup
// returns why.
type failedTopology struct{ err error }

func (f failedTopology) Setup(context.Context) error    { return f.err }
func (f failedTopology) Teardown(context.Context) error { return nil }
func (f failedTopology) Nodes() []clusters.Node         { return nil }
func (f failedTopology) LockAddrs(int) []string         { return nil }
func (f failedTopology) StorageAddr() string            { return "" }
