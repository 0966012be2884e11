package runner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/nemesis"
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
	// Nodes is the ZooKeeper ensemble size (3, or 1 for a standalone server).
	Nodes int    `json:"nodes,omitempty"`
	Seed  uint64 `json:"seed"`
	// Workload is "register" (the default) or "inventory".
	Workload string `json:"workload"`
	// Stock is the inventory workload's initial stock per key.
	Stock int64 `json:"stock,omitempty"`
	// Failpoint is passed to the workers (see workloads.Config.Failpoint).
	Failpoint string `json:"failpoint,omitempty"`

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
	// Started is when the run began (set by Run, stored in test.json).
	Started time.Time `json:"started"`
}

// Defaults fills every unset field with its default.
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
		t.Workload = "register"
	}
	if t.Workload == "inventory" && t.Stock == 0 {
		t.Stock = 100
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
	if t.Name == "" && t.Scenario != "" {
		t.Name = t.Scenario
		if t.Fencing {
			t.Name += "-fenced"
		}
	}
	if t.Name == "" {
		t.Name = fmt.Sprintf("%s-%s", t.Lock, strings.ReplaceAll(t.Nemesis, ",", "+"))
		if t.Workload == workloads.WorkloadInventory || t.Workload == workloads.WorkloadRegisterInDB {
			t.Name += "-" + t.Workload
		}
		if t.Fencing {
			t.Name += "-fenced"
		}
	}
}

// Validate reports the first problem with the test map, as a one-line error.
func (t *Test) Validate() error {
	d, err := workloads.FindDesign(t.Lock)
	if err != nil {
		return err
	}
	if t.Workload == workloads.WorkloadRegisterInDB && len(d.Workloads) == 0 {
		return fmt.Errorf("--workload register-in-db: %s keeps no lock in a database transaction (see check list: pg-for-update, mysql-for-update, pg-advisory-xact)", d.Name)
	}
	if !d.RunsWorkload(t.Workload) {
		return fmt.Errorf("%s only runs the %s workload (--workload %s)", d.Name, strings.Join(d.Workloads, ", "), d.Workloads[0])
	}
	if d.NoLock && t.Fencing {
		return fmt.Errorf("--fencing: %s takes no lock and has no fencing tokens", d.Name)
	}
	if t.Fencing && !d.Tokens {
		return fmt.Errorf("%s hands out no fencing token: --fencing needs a lock design with monotonic tokens (see check list)", t.Lock)
	}
	if _, err := nemesis.Parse(t.Nemesis); err != nil {
		return err
	}
	if err := workloads.CheckFailpoint(t.Failpoint, t.Lock); err != nil {
		return err
	}
	switch {
	case t.Workload != "register" && t.Workload != "inventory" && t.Workload != workloads.WorkloadRegisterInDB:
		return fmt.Errorf("--workload %q: want register, inventory or register-in-db", t.Workload)
	case t.Workload == workloads.WorkloadRegisterInDB && t.Fencing:
		return errors.New("--fencing: with --workload register-in-db the register lives in the lock's own transaction; fencing is for the external storage node")
	case t.Stock < 0:
		return fmt.Errorf("--stock %d: want at least 0", t.Stock)
	case t.Workers < 1 || t.Workers > 200:
		return fmt.Errorf("--workers %d: want 1 to 200", t.Workers)
	case t.Nodes != 1 && t.Nodes != 3 && t.Nodes != 5:
		return fmt.Errorf("--nodes %d: want 1, 3 or 5", t.Nodes)
	case t.Keys < 1 || t.Keys > 1000:
		return fmt.Errorf("--keys %d: want 1 to 1000", t.Keys)
	case t.Time <= 0 || t.Time > 24*time.Hour:
		return fmt.Errorf("--time %s: want more than 0 and at most 24h", t.Time)
	case t.Lease < time.Millisecond:
		return fmt.Errorf("--lease %s: want at least 1ms", t.Lease)
	case t.NemesisInterval <= 0 || t.NemesisDuration <= 0:
		return errors.New("nemesis interval and duration must be positive")
	case strings.ContainsAny(t.Name, "/\\") || strings.HasPrefix(t.Name, "."):
		return fmt.Errorf("test name %q: no slashes, no leading dot", t.Name)
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
