package runner

import (
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
	p := plan{design: d, service: svc, kinds: kinds}
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
	return p.service.New(clusters.TopologyConfig{
		Workers: t.Workers, LockNodes: p.design.LockNodes, Nodes: t.Nodes, LogDir: logDir,
		ClockShim: p.clockShim, Replicated: p.replicated, Lease: t.Lease,
	})
}

// look checks that the plan's service is installed.
func (p plan) look() error { return p.service.Look() }
