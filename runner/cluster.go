package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
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
		look: func(context.Context, *Plan) error { return clusters.LookStorage() },
		build: func(p *Plan, cfg clusters.TopologyConfig) (topology, error) {
			return clusters.NewExternal(clusters.ExternalConfig{Addrs: p.Test.External, Workers: cfg.Workers, LogDir: cfg.LogDir}), nil
		},
	},
}

// resolveExternal refuses an external cluster its service cannot be
// pointed at, or that gives the design the wrong number of servers.
func resolveExternal(p *Plan) error {
	t := p.Test
	form := p.Service.External
	switch {
	case len(t.External) == 0:
		return errors.New("--cluster external: give the lock servers' addresses with --external HOST:PORT[,HOST:PORT...]")
	case form == nil:
		var with []string
		for _, s := range clusters.Services() {
			if s.External != nil {
				with = append(with, s.Name)
			}
		}
		return fmt.Errorf("--cluster external: lock %s's service %s needs more than its servers' addresses, which lockcheck cannot point its workers at yet (services it can: %s)",
			t.Lock, p.Service.Name, strings.Join(with, ", "))
	case !form.Ensemble && len(t.External) != p.Design.LockNodes:
		given := fmt.Sprintf("%d addresses were", len(t.External))
		if len(t.External) == 1 {
			given = "1 address was"
		}
		return fmt.Errorf("--external: lock %s uses %d lock servers, and %s given", t.Lock, p.Design.LockNodes, given)
	}
	for _, a := range t.External {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("--external %s: want HOST:PORT: %w", a, err)
		}
	}
	return nil
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
