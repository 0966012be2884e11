package runner

import (
	"context"
	"path/filepath"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/workloads"
)

// plan is a test map resolved once: the lock design, the lock service it
// runs on, the nemesis kinds, and what those kinds ask of the topology and
// the workers. Every step of a run reads the plan instead of looking names
// up again.
type plan struct {
	design  workloads.Design
	service clusters.Service
	kinds   []nemesis.Kind
	// clockShim: a nemesis moves lock servers' wall clocks.
	clockShim bool
	// clientClocks: a nemesis moves workers' client clocks.
	clientClocks bool
	// replicated: a nemesis fails a master over to its replicas.
	replicated bool
	// cluster builds the topology: local processes or containers
	// (Test.Cluster).
	cluster clusterKind
}

// resolve looks up t's design, its service and its nemesis kinds. t must
// have passed Validate.
func resolve(t Test) (plan, error) {
	d, err := workloads.FindDesign(t.Lock)
	if err != nil {
		return plan{}, err
	}
	svc, err := clusters.FindService(d.Service)
	if err != nil {
		return plan{}, err
	}
	kinds, err := nemesis.Parse(t.Nemesis)
	if err != nil {
		return plan{}, err
	}
	cluster, err := findCluster(t.Cluster)
	if err != nil {
		return plan{}, err
	}
	p := plan{design: d, service: svc, kinds: kinds, cluster: cluster}
	for _, k := range kinds {
		p.clockShim = p.clockShim || k.ClockShim
		p.clientClocks = p.clientClocks || k.ClientClocks
		p.replicated = p.replicated || k.Replicated
	}
	return p, nil
}

// topology returns the unstarted cluster the plan runs on, its logs in
// logDir.
func (p plan) topology(t Test, logDir string) topology {
	c, err := p.cluster.build(p, p.config(t, logDir))
	if err != nil {
		return failedTopology{err}
	}
	return c
}

// config is the topology configuration of t, logs in logDir; the run id is
// the run directory's path under its test name.
func (p plan) config(t Test, logDir string) clusters.TopologyConfig {
	runID := t.Name
	if logDir != "" {
		runID += "-" + filepath.Base(filepath.Dir(logDir))
	}
	return clusters.TopologyConfig{
		Workers: t.Workers, LockNodes: p.design.LockNodes, Nodes: t.Nodes, LogDir: logDir,
		ClockShim: p.clockShim, Replicated: p.replicated, Lease: t.Lease, RunID: runID,
	}
}

// look checks that the plan's service is installed (local) or that a
// Docker engine with its images answers (docker).
func (p plan) look(ctx context.Context) error { return p.cluster.look(ctx, p) }
