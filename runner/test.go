package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// Test is the test map: everything that defines one run. It is stored as
// test.json in the run directory, so a run can be repeated exactly.
type Test struct {
	Name string `json:"name"`
	// Scenario is the named scenario the test came from, if any.
	Scenario string `json:"scenario,omitempty"`
	Lock     string `json:"lock"`
	Nemesis  string `json:"nemesis"`
	Fencing  bool   `json:"fencing"`
	Workers  int    `json:"workers"`
	Keys     int    `json:"keys"`
	// Nodes is the ZooKeeper or etcd ensemble size (3, 5, or 1 for a
	// standalone server).
	Nodes int    `json:"nodes,omitempty"`
	Seed  uint64 `json:"seed"`
	// Workload is "register" (the default) or "inventory".
	Workload string `json:"workload"`
	// Stock is the inventory workload's initial stock per key.
	Stock int64 `json:"stock,omitempty"`
	// Failpoint is passed to the workers (see workloads.Config.Failpoint).
	Failpoint string `json:"failpoint,omitempty"`
	// Cluster is how the lock service runs: "local" processes (the
	// default, also for "") or "docker" containers (package containers).
	Cluster string `json:"cluster,omitempty"`
	// Service is the lock service to run the design on, when not its own:
	// one that fronts it (clusters.Service.Fronts: pgbouncer-transaction
	// for a postgres design); "" is the design's own service.
	Service string `json:"service,omitempty"`
	// ServiceVersion is the version of the lock service's server to run
	// (clusters.ServerVersion; "" is the service's default).
	ServiceVersion string `json:"service_version,omitempty"`
	// LibraryVersion is the version of the design's Go client library its
	// workers link (libraries.Library; "" is the one lockcheck pins).
	LibraryVersion string `json:"library_version,omitempty"`
	// External are the addresses of lock servers someone else runs, for
	// Cluster "external" (clusters.External).
	External []string `json:"external,omitempty"`
	// Topology is the path of a topology file (package topofile) that
	// names the servers someone else runs, for Cluster "external": their
	// roles, addresses, control commands and login variables. The run
	// directory keeps a copy (topology.yml).
	Topology string `json:"topology,omitempty"`

	Time           time.Duration `json:"time"`
	Lease          time.Duration `json:"lease"`
	AcquireTimeout time.Duration `json:"acquire_timeout"`
	Retry          time.Duration `json:"retry"`
	// Think is the wait inside the critical section; zero is allowed (the
	// CLI's default is 10ms).
	Think           time.Duration `json:"think"`
	OpTimeout       time.Duration `json:"op_timeout"`
	NemesisInterval time.Duration `json:"nemesis_interval"`
	NemesisDuration time.Duration `json:"nemesis_duration"`
	CheckTimeout    time.Duration `json:"check_timeout"`
	StuckBound      time.Duration `json:"stuck_bound"`

	// Store is the root of the store directory.
	Store string `json:"store"`
	// WorkerCmd runs one worker; empty means this binary's `worker`
	// subcommand. WorkerEnv is added to the worker's environment.
	WorkerCmd []string `json:"worker_cmd,omitempty"`
	WorkerEnv []string `json:"-"`
	// Quiet turns off the progress line.
	Quiet bool `json:"-"`
	// StopOnAnomaly stops the workload at the first double holder or
	// accepted stale write (checker.Watch), heals, and checks what was
	// recorded.
	StopOnAnomaly bool `json:"stop_on_anomaly,omitempty"`
	// NoObserve runs without the topology's release observer
	// (clusters.ReleaseObserver; --observe=false): the history gets no
	// server-release ops and the windows checker no windows. The verdict
	// is the same either way; it is there to show that, and to measure
	// what the observer costs.
	NoObserve bool `json:"no_observe,omitempty"`
	// Sections is how many critical sections a worker runs on one grant
	// before it releases (--sections; 0 means 1). A worker stops at the
	// first one that fails (its lock client refused it, or the fenced
	// resource did), as an application stops its work at an error; one
	// that ends in doubt retires it. More than one shows what a holder
	// does after its lock client told it the lock was gone: a worker that
	// ignores that goes on writing (the windows checker's "wrote after it
	// was told").
	Sections int `json:"sections,omitempty"`
	// Until, when set, ends the workload before Time is up as soon as the
	// history recorded so far satisfies it (asked every 100 ms); Time is
	// then the upper bound. Tests use it to wait for the event they need
	// instead of counting on a rate of grants in fixed time.
	Until func(history.History) bool `json:"-"`
	// countCommands asks Run for the commands the Redis lock nodes served
	// during the workload (Outcome.Commands); set by check bench only.
	countCommands bool
	// ownWorker says WorkerCmd is this binary's own worker, as `check
	// worker` serves it (the runner's tests run their test binary so):
	// its stdout goes to the run's mux, as the built-in worker's does.
	ownWorker bool
	// Started is when the run began (set by Run, stored in test.json).
	Started time.Time `json:"started"`
}

// maxSections bounds Test.Sections: a grant held for more critical sections
// than that would starve every other worker.
const maxSections = 1000

// sections returns how many critical sections a worker runs per grant.
func (t *Test) sections() int { return max(1, t.Sections) }

// Defaults fills every unset field that has a fixed default. Resolve fills
// the rest: the stock of a stock workload and the test's name.
func (t *Test) Defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if t.Nemesis == "" {
		t.Nemesis = "none"
	}
	if t.Workers == 0 {
		t.Workers = 10
	}
	if t.Keys == 0 {
		t.Keys = 1
	}
	if t.Nodes == 0 {
		t.Nodes = 3
	}
	if t.Workload == "" {
		t.Workload = workloads.WorkloadRegister
	}
	if t.Store == "" {
		t.Store = "store"
	}
	def(&t.Time, 30*time.Second)
	def(&t.Lease, time.Second)
	def(&t.AcquireTimeout, 2*t.Lease)
	def(&t.Retry, 10*time.Millisecond)
	def(&t.OpTimeout, 500*time.Millisecond)
	def(&t.NemesisInterval, 4*time.Second)
	def(&t.NemesisDuration, 3*t.Lease)
	def(&t.CheckTimeout, 60*time.Second)
}

// Validate reports the first problem with the test map, as a one-line error
// naming the flag, the value and the accepted range: it is Resolve without
// the plan. It checks the values as given: a zero Workers, Keys, Nodes,
// Time, Lease, Retry, OpTimeout, NemesisInterval or CheckTimeout is an error
// (Run calls Defaults first, which fills them; the CLI sets them all from
// its flags), while a zero AcquireTimeout, NemesisDuration or Stock means
// "derived from the others" and a zero Think or StuckBound is allowed.
func (t *Test) Validate() error {
	_, err := Resolve(*t)
	return err
}

// Ranges of the numeric fields, as the CLI's flags accept them.
const (
	maxWorkers  = 200
	maxKeys     = 1000
	maxDuration = 24 * time.Hour
)

// shortDur formats d without zero units: 24h, not 24h0m0s.
func shortDur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// validateNumbers checks every numeric field against its range.
func (t *Test) validateNumbers() error {
	type dur struct {
		flag     string
		v        time.Duration
		min, max time.Duration
		zero     string // what 0 means when it is allowed below min ("" when it is not)
	}
	durs := []dur{
		{"--time", t.Time, time.Millisecond, maxDuration, ""},
		{"--lease", t.Lease, time.Millisecond, time.Hour, ""},
		{"--think", t.Think, 0, time.Hour, ""},
		{"--acquire-timeout", t.AcquireTimeout, time.Millisecond, maxDuration, "default 2 x lease"},
		{"--retry", t.Retry, time.Millisecond, time.Minute, ""},
		{"--op-timeout", t.OpTimeout, time.Millisecond, time.Hour, ""},
		{"--nemesis-interval", t.NemesisInterval, time.Millisecond, maxDuration, ""},
		{"--nemesis-duration", t.NemesisDuration, time.Millisecond, maxDuration, "default 3 x lease"},
		{"--check-timeout", t.CheckTimeout, time.Millisecond, maxDuration, ""},
		{"--stuck-bound", t.StuckBound, time.Millisecond, maxDuration, "0: off"},
	}
	for _, d := range durs {
		if d.v == 0 && d.zero != "" || d.v >= d.min && d.v <= d.max {
			continue
		}
		want := fmt.Sprintf("want %s to %s", shortDur(d.min), shortDur(d.max))
		if d.zero != "" {
			want += fmt.Sprintf(" (%s)", d.zero)
		}
		return fmt.Errorf("%s %s: %s", d.flag, shortDur(d.v), want)
	}
	switch {
	case t.Workers < 1 || t.Workers > maxWorkers:
		return fmt.Errorf("--workers %d: want 1 to %d", t.Workers, maxWorkers)
	case t.Keys < 1 || t.Keys > maxKeys:
		return fmt.Errorf("--keys %d: want 1 to %d", t.Keys, maxKeys)
	case t.Nodes != 1 && t.Nodes != 3 && t.Nodes != 5:
		return fmt.Errorf("--nodes %d: want 1, 3 or 5", t.Nodes)
	case t.Stock < 0:
		return fmt.Errorf("--stock %d: want 1 or more (0: the default 100)", t.Stock)
	case t.Sections < 0 || t.Sections > maxSections:
		return fmt.Errorf("--sections %d: want 1 to %d", t.Sections, maxSections)
	}
	return nil
}

// controllerTimeout is how long the controller waits for a worker's reply
// before it records info and replaces the worker. It outlasts a pause, so a
// paused holder's operation completes, late, after the pause.
func (t *Test) controllerTimeout() time.Duration {
	d := 10 * time.Second
	for _, c := range []time.Duration{t.NemesisDuration + 5*time.Second, t.AcquireTimeout + 5*time.Second} {
		if c > d {
			d = c
		}
	}
	return d
}

// workerConfig is what a worker serving process needs to know of t, with
// the lock nodes and storage node it reaches.
func (t *Test) workerConfig(process int, lockAddrs []string, storage string) workloads.Config {
	return workloads.Config{
		Protocol: workloads.ProtocolVersion, Lock: t.Lock, Process: process, Seed: t.Seed,
		LockAddrs: lockAddrs, StorageAddr: storage,
		LeaseMS: t.Lease.Milliseconds(), AcquireTimeoutMS: t.AcquireTimeout.Milliseconds(),
		RetryMS: t.Retry.Milliseconds(), ThinkMS: t.Think.Milliseconds(),
		OpTimeoutMS: t.OpTimeout.Milliseconds(), Fencing: t.Fencing,
		Workload: t.Workload, Stock: t.Stock, Failpoint: t.Failpoint,
		SessionName: clusters.SessionName(process),
	}
}
