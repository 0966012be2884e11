package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/libraries"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/topofile"

	// The services in folders of their own register when linked in.
	_ "github.com/lockcheck/lockcheck/services"
	"github.com/lockcheck/lockcheck/workloads"
)

// Plan is a test map resolved once: the test with its derived defaults, the
// lock design, the workload, the lock service the design runs on, the
// nemesis kinds, and what those kinds ask of the topology and the workers.
// Every step of a run (the cluster, the workers, the store, the checkers,
// the report) reads the plan; none looks a name up again.
type Plan struct {
	// Test is the test map, validated, its derived defaults filled in.
	Test Test
	// Design is the lock design (--lock); zero in a plan for a bare
	// history (PlanFor).
	Design workloads.Design
	// Workload is what the critical section does (--workload).
	Workload workloads.Workload
	// Service is the lock service the design runs on.
	Service clusters.Service
	// Kinds are the nemesis kinds (--nemesis), timed or triggered, each
	// once; none for a control run.
	Kinds []nemesis.Kind
	// Timed are the kinds fired at seeded random times (named without a
	// trigger); Faults the faults bound to lock events or times
	// (package schedule).
	Timed  []nemesis.Kind
	Faults []schedule.Fault
	// Version is the server version the test asked for
	// (--service-version), the service's default when it asked for none;
	// zero for a service that lists no versions.
	Version clusters.ServerVersion
	// Library is the Go client library the design wraps (zero for none);
	// LibraryVersion the canonical version the test asked its workers to
	// link ("" for the pinned one).
	Library        libraries.Library
	LibraryVersion string

	// external is the topology file of an external cluster (nil for
	// none), and login the login its environment gives.
	external *topofile.File
	login    clusters.Login
	// clockShim: a nemesis moves lock servers' wall clocks.
	clockShim bool
	// clientClocks: a nemesis moves workers' client clocks.
	clientClocks bool
	// replicated: a nemesis fails a master over to its replicas.
	replicated bool
	// cluster builds the topology: local processes or containers
	// (Test.Cluster).
	cluster clusterKind
	// server is the path of Version's server binary, once Run found or
	// built it ("" until then: the service's installed server).
	server string
	// worker is the binary lockcheck's own workers run, once Run chose
	// it ("" for workers of another command).
	worker string
}

// Resolve checks t as given and resolves it into a Plan: every flag is
// checked against its range (a zero that would be filled by a default is an
// error: call t.Defaults first to fill them), every name (lock, workload,
// nemeses, service, cluster kind) is looked up exactly once, and the
// derived defaults (acquire timeout, fault duration, stock, name) are
// filled in. Its error is one line naming the flag, the value and what is
// accepted.
func Resolve(t Test) (*Plan, error) {
	d, err := workloads.FindDesign(t.Lock)
	if err != nil {
		return nil, err
	}
	if err := t.validateNumbers(); err != nil {
		return nil, err
	}
	w, err := workloads.FindWorkload(t.Workload)
	if err != nil {
		return nil, err
	}
	if err := checkWorkload(t, d, w); err != nil {
		return nil, err
	}
	if d.NoLock && t.Fencing {
		return nil, fmt.Errorf("--fencing: %s takes no lock and has no fencing tokens", d.Name)
	}
	if t.Fencing && !d.Tokens {
		return nil, fmt.Errorf("%s hands out no fencing token: --fencing needs a lock design with monotonic tokens (see check list)", t.Lock)
	}
	spec, err := schedule.Parse(t.Nemesis)
	if err != nil {
		return nil, err
	}
	if err := checkMarks(t, d, w, spec.Faults); err != nil {
		return nil, err
	}
	kinds := spec.Kinds
	if (len(t.External) > 0 || t.Topology != "") && t.Cluster != ClusterExternal {
		return nil, fmt.Errorf("--external goes with --cluster external (not %q)", t.Cluster)
	}
	cluster, err := findCluster(t.Cluster)
	if err != nil {
		return nil, err
	}
	svc, err := findService(t, d)
	if err != nil {
		return nil, err
	}
	version, err := resolveVersion(t, svc)
	if err != nil {
		return nil, err
	}
	lib, libVersion, err := ResolveLibrary(t, d)
	if err != nil {
		return nil, err
	}
	if err := workloads.CheckFailpoint(t.Failpoint, t.Lock); err != nil {
		return nil, err
	}
	t.Defaults()
	if w.Stock && t.Stock == 0 {
		t.Stock = workloads.DefaultStock
	}
	if t.Name == "" {
		t.Name = defaultName(t, w)
	}
	if strings.ContainsAny(t.Name, "/\\") || strings.HasPrefix(t.Name, ".") {
		return nil, fmt.Errorf("test name %q: no slashes, no leading dot", t.Name)
	}
	p := &Plan{Test: t, Design: d, Workload: w, Service: svc, Kinds: kinds, Timed: spec.Timed, Faults: spec.Faults,
		Version: version, Library: lib, LibraryVersion: libVersion, cluster: cluster}
	if err := cluster.resolve(p); err != nil {
		return nil, err
	}
	for _, k := range kinds {
		p.clockShim = p.clockShim || k.ClockShim
		p.clientClocks = p.clientClocks || k.ClientClocks
		p.replicated = p.replicated || k.Replicated
	}
	if t.Cluster == ClusterExternal {
		if err := refuseExternalFaults(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkWorkload refuses a workload the design does not run, or one that
// cannot go with --fencing.
// checkMarks refuses a fault bound to a mark (schedule.WorkerReports) the
// run's workers will not report: a renewal of a design that does not
// renew, a write of a design whose critical section is its lock's own
// (a guarded write, a register in the database), either of a design with
// its own worker in another language. A worker given with --worker-cmd
// is asked and may report them.
func checkMarks(t Test, d workloads.Design, w workloads.Workload, faults []schedule.Fault) error {
	if len(t.WorkerCmd) > 0 {
		return nil
	}
	for _, f := range faults {
		var why string
		switch ev := f.Trigger.Event; {
		case ev != schedule.EventWrite && ev != schedule.EventRenewal:
			continue
		case len(d.Worker) > 0:
			why = fmt.Sprintf("%s runs in its own worker (%s), which reports no %s", d.Name, strings.Join(d.Worker, " "), ev)
		case ev == schedule.EventRenewal && !d.Renews:
			why = d.Name + " does not renew its lease (no watchdog, no keepalive): there is no renewal to fire at"
		case ev == schedule.EventWrite && (d.Guarded || w.InLock):
			why = fmt.Sprintf("%s writes inside its lock's own transaction (workload %s), where lockcheck's worker reports no write", d.Name, w.Name)
		default:
			continue
		}
		return fmt.Errorf("--nemesis %s: %s", f, why)
	}
	return nil
}

func checkWorkload(t Test, d workloads.Design, w workloads.Workload) error {
	if w.Listed && !d.Runs(w) {
		return fmt.Errorf("--workload %s: %s does not run it (designs that do: %s; see check list)",
			w.Name, d.Name, strings.Join(workloads.DesignsRunning(w), ", "))
	}
	if w.InLock && t.Fencing {
		return fmt.Errorf("--fencing: with --workload %s the register lives in the lock's own transaction; fencing is for the external storage node", w.Name)
	}
	if !d.Runs(w) {
		return fmt.Errorf("%s only runs the %s workload (--workload %s)", d.Name, strings.Join(d.Workloads, ", "), d.Workloads[0])
	}
	return nil
}

// defaultName is the name of a test given none: its scenario's, else its
// lock, nemeses and (for a workload that says so) workload; "-fenced" for a
// fenced run.
func defaultName(t Test, w workloads.Workload) string {
	name := t.Scenario
	if name == "" {
		name = t.Lock
		if t.Service != "" {
			name += "@" + t.Service
		}
		name = fmt.Sprintf("%s-%s", name, shortNemesis(nameSafe.Replace(t.Nemesis)))
		if w.Named {
			name += "-" + w.Name
		}
	}
	if t.Fencing {
		name += "-fenced"
	}
	return name
}

// maxNemesisName bounds the --nemesis part of a default test name: the
// name is a directory, and a file name has at most 255 bytes.
const maxNemesisName = 120

// shortNemesis returns s, or when it is longer than maxNemesisName, its
// beginning and a hash of all of it: a schedule of many faults still
// names a directory, and two different ones different directories.
func shortNemesis(s string) string {
	if len(s) <= maxNemesisName {
		return s
	}
	sum := fnv.New32a()
	sum.Write([]byte(s))
	return fmt.Sprintf("%s...%08x", s[:maxNemesisName-11], sum.Sum32())
}

// nameSafe turns a --nemesis value into a part of a directory name: a
// triggered fault's spelling has characters (/ : * < #) that a path or a
// shell would take for its own.
var nameSafe = strings.NewReplacer(",", "+", "/", "-", ":", "_", "*", "x", "<", "lt", "#", "n", " ", "")

// PlanFor is the plan of a history with no test map (a bare history.jsonl
// given to check analyze): no design, the register workload, and t's
// values, defaults filled in. The checkers then judge with defaults.
func PlanFor(t Test) *Plan {
	t.Defaults()
	return &Plan{Test: t, Workload: workloads.Workload{Name: workloads.WorkloadRegister}}
}

// errNoPlan is Run's error for a nil plan.
var errNoPlan = errors.New("runner: no plan (call Resolve)")

// topology returns the unstarted cluster the plan runs on, its logs in
// logDir.
func (p *Plan) topology(logDir string) topology {
	c, err := p.cluster.build(p, p.config(logDir))
	if err != nil {
		return failedTopology{err}
	}
	return c
}

// config is the topology configuration of the plan, logs in logDir; the run
// id is the run directory's path under its test name.
func (p *Plan) config(logDir string) clusters.TopologyConfig {
	t := p.Test
	runID := t.Name
	if logDir != "" {
		runID += "-" + filepath.Base(filepath.Dir(logDir))
	}
	return clusters.TopologyConfig{
		Workers: t.Workers, LockNodes: p.Design.LockNodes, Nodes: t.Nodes, LogDir: logDir,
		ClockShim: p.clockShim, Replicated: p.replicated, Lease: t.Lease, RunID: runID, Server: p.server,
	}
}

// look checks that the plan's service is installed (local) or that a
// Docker engine with its images answers (docker).
func (p *Plan) look(ctx context.Context) error { return p.cluster.look(ctx, p) }

// replyTimeout is how long the controller waits for a worker's reply before
// it records info and replaces the worker: the test's (it outlasts a
// fault of --nemesis-duration), and a triggered fault's own duration and
// five seconds where that is longer, so that a worker paused by it answers,
// late, after the pause, as one paused by a timed fault does.
func (p *Plan) replyTimeout() time.Duration {
	d := p.Test.controllerTimeout()
	lease := p.Design.EffectiveLease(p.Test.Lease)
	for _, f := range p.Faults {
		if f.Duration != nil {
			d = max(d, f.Duration.Of(lease)+5*time.Second)
		}
	}
	return d
}

// faulted reports whether the plan lets a nemesis loose.
func (p *Plan) faulted() bool { return len(p.Kinds) > 0 }
