package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/workloads"
)

// cmdRun is `check run`: it reads the flags (a scenario's first), runs one
// test, prints its verdict and returns the verdict's exit code.
func cmdRun(args []string, stdout, stderr io.Writer) (int, error) {
	args, scenario, err := scenarios.Expand(args)
	if err != nil {
		return exitError, err
	}
	var t runner.Test
	t.Scenario = scenario
	var seed clockSeed
	var workerCmd, scheduleFile string
	fs := newFlags("run", stderr)
	fs.StringVar(&t.Lock, "lock", "", "lock design to test (see check list)")
	fs.StringVar(&t.Nemesis, "nemesis", "none", "faults: none, or a comma-separated list of "+nemesisNames()+" (see check list), each fired at seeded random times or, spelled `KIND@EVENT[+OFFSET][:DURATION]`, at a lock event (pause@grant+5ms:lease+1s; docs/triggers.md)")
	fs.StringVar(&scheduleFile, "schedule", "", "a schedule `file` of triggered faults (a run's schedule.json, or one written by hand; docs/triggers.md), added to --nemesis")
	fs.BoolVar(&t.Fencing, "fencing", false, "pass fencing tokens to the protected resource, which rejects stale ones")
	fs.IntVar(&t.Workers, "workers", 10, "number of worker processes")
	fs.IntVar(&t.Keys, "keys", 1, "number of distinct lock keys")
	fs.StringVar(&t.Workload, "workload", "register", "what the critical section does: "+workloadNames()+" (see check list)")
	fs.Int64Var(&t.Stock, "stock", 0, "inventory workload: initial stock per key (default 100)")
	fs.StringVar(&t.Failpoint, "failpoint", "", "stop workers at a named place in the lock client, for the crash nemesis (see check list)")
	fs.IntVar(&t.Nodes, "nodes", 3, "ensemble size of a replicated service: 1 (a standalone server), 3 or 5")
	fs.StringVar(&t.Service, "service", "", "lock service to run the design on instead of its own: one that fronts it ("+frontingServices()+"; see check list)")
	fs.StringVar(&t.ServiceVersion, "service-version", "", "version of the lock service's server: one check list shows for it (default: the installed one; a version built from its Go module is built on first use and cached)")
	fs.StringVar(&t.LibraryVersion, "library-version", "", "version of the design's Go client library its workers link: one the Go module proxy serves (default: the one lockcheck pins; check list shows each library's; another is built on first use and cached)")
	fs.StringVar(&t.Cluster, "cluster", "local", "where the lock service runs: local (server processes on this machine), docker (containers of the images make images builds; needs a Docker engine) or external (servers you run: --external)")
	fs.Func("external", "lock servers you run, `HOST:PORT,...` or a topology FILE (their roles, control commands and login), reached through lockcheck's proxies (implies --cluster external; docs/your-lock.md)", func(v string) error {
		return externalFlag(&t, v)
	})
	fs.DurationVar(&t.Time, "time", 30*time.Second, "how long the workload runs")
	fs.DurationVar(&t.Lease, "lease", time.Second, "lock lease (TTL)")
	fs.DurationVar(&t.Think, "think", 10*time.Millisecond, "time between the critical section's read and write")
	fs.DurationVar(&t.AcquireTimeout, "acquire-timeout", 0, "how long acquire retries before it fails (default 2 x lease)")
	fs.DurationVar(&t.Retry, "retry", 10*time.Millisecond, "mean pause between acquire attempts")
	fs.DurationVar(&t.OpTimeout, "op-timeout", 500*time.Millisecond, "dial/read/write timeout of one lock-service command")
	fs.DurationVar(&t.NemesisInterval, "nemesis-interval", 4*time.Second, "mean time between faults")
	fs.DurationVar(&t.NemesisDuration, "nemesis-duration", 0, "how long each fault lasts (default 3 x lease)")
	fs.DurationVar(&t.CheckTimeout, "check-timeout", 60*time.Second, "time limit of each Porcupine check (past it the verdict is unknown)")
	fs.DurationVar(&t.StuckBound, "stuck-bound", 0, "liveness: fail when acquires fail for longer than this with no grant (0: off)")
	fs.Var(&seed, "seed", "random seed, a whole `number` of 0 or more (default: from the clock; printed and stored)")
	fs.String("scenario", "", "a named scenario, its flags first so that later ones override them: "+scenarioNames()+" (see check list)")
	fs.StringVar(&t.Store, "store", "store", "store directory")
	fs.StringVar(&workerCmd, "worker-cmd", "", "command that runs one worker (default: this binary's worker subcommand)")
	fs.BoolVar(&t.Quiet, "quiet", false, "no progress line while the test runs")
	fs.BoolVar(&t.StopOnAnomaly, "stop-on-anomaly", false, "stop the workload at the first double holder, stale write or (with --stuck-bound) stuck lock, heal, and check what was recorded")
	observeFlag(fs, &t)
	fs.IntVar(&t.Sections, "sections", 1, "critical sections a worker runs on one grant before it releases; it stops at the first that fails")
	if help, err := parseFlags(fs, args); help || err != nil {
		return helpOrError(help, err)
	}
	if fs.NArg() > 0 {
		return exitError, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if t.Lock == "" {
		_, err := workloads.FindDesign("")
		return exitError, fmt.Errorf("--lock is required: %w", err)
	}
	// Validate the flags as given, before Run fills in defaults.
	if err := checkGiven(fs); err != nil {
		return exitError, err
	}
	if (len(t.External) > 0 || t.Topology != "") && !flagGiven(fs, "cluster") {
		t.Cluster = runner.ClusterExternal
	}
	t.Seed = seed.value()
	t.WorkerCmd = strings.Fields(workerCmd)
	if scheduleFile != "" {
		rec, err := schedule.Load(scheduleFile)
		if err != nil {
			return exitError, err
		}
		t.Nemesis = withSchedule(t.Nemesis, rec)
	}
	p, err := runner.Resolve(t)
	if err != nil {
		return exitError, err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := p.Run(ctx, stdout)
	if err != nil && out.Checked {
		// The run failed (a server died, the store filled) but its history
		// was checked: the verdict is printed, and an anomaly found before
		// the failure makes it invalid; otherwise it is an error.
		printResult(stdout, out.Result)
		fmt.Fprintf(stdout, "%s: %s; run dir %s\n", verdictText(out.Result), anomalyCounts(out.Result), out.Dir)
		if out.Result.Valid == checker.Invalid && out.Result.Panicked == "" {
			return exitInvalid, err
		}
		return exitError, err
	}
	if err != nil {
		code := exitError
		if ctx.Err() != nil {
			code, err = exitInterrupted, fmt.Errorf("interrupted: %w", err)
		}
		if out.Dir != "" {
			return code, fmt.Errorf("%w (run dir %s)", err, out.Dir)
		}
		return code, err
	}
	printResult(stdout, out.Result)
	if out.Interrupted {
		fmt.Fprintf(stdout, "interrupted: partial history (%d ops) checked %s; run dir %s\n", out.Ops, verdictWord(out.Result.Valid), out.Dir)
		return exitInterrupted, nil
	}
	fmt.Fprintf(stdout, "%s: %s; report %s\n", verdictText(out.Result), anomalyCounts(out.Result), filepath.Join(out.Dir, "report.html"))
	return verdictExit(out.Result)
}

// frontingServices names the services that front another, with the one
// each fronts: "pgbouncer-session for postgres designs, ...".
func frontingServices() string {
	var out []string
	for _, s := range clusters.Services() {
		if s.Fronts != "" {
			out = append(out, s.Name+" for "+s.Fronts+" designs")
		}
	}
	return strings.Join(out, ", ")
}

// externalFlag reads --external: a topology file (a path that names a
// file, or ends in .yml, .yaml or .json) or the lock servers' addresses.
func externalFlag(t *runner.Test, v string) error {
	ext := strings.ToLower(filepath.Ext(v))
	if st, err := os.Stat(v); (err == nil && st.Mode().IsRegular()) || ext == ".yml" || ext == ".yaml" || ext == ".json" {
		abs, err := filepath.Abs(v)
		if err != nil {
			return err
		}
		t.Topology, t.External = abs, nil
		return nil
	}
	t.External, t.Topology = strings.Split(v, ","), ""
	return nil
}
