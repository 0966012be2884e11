package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/heapbudget"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/workloads"
)

// Exit codes.
const (
	exitValid       = 0
	exitInvalid     = 1
	exitUnknown     = 2
	exitError       = 3
	exitInterrupted = 130
)

const usage = `usage: check <command> [flags]

commands:
  run       run a test: check run --lock NAME [--nemesis none|pause|partition|kill|...[,...]] [--fencing] ...
            faults at lock events: --nemesis 'pause@grant+5ms:lease+1s' or --schedule FILE (docs/triggers.md)
            or a named story: check run --scenario NAME [--seed S] [--fencing]
  analyze   re-check a stored run: check analyze RUN_DIR
  list      list lock designs, scenarios and nemeses
  serve     browse stored runs: check serve [--store DIR] [--addr 127.0.0.1:8080] [--allow-remote]
  worker    serve the worker protocol on stdin/stdout (started by run)
  bench     measure harness overhead against a plain client loop
  matrix    run cells over seeds: check matrix --cells FILE | --lock a,b --nemesis x,y [--seeds 1..10] [--jobs 2]
            [--junit FILE] [--json FILE] [--markdown FILE] [--shard I/N] [run flags]; exit 1 when a cell misses its
            expectation. check matrix merge DIR... judges shards as one matrix (exit 1 for a missed or missing run);
            check matrix diff A B compares two stored matrices (exit 1 when a cell that met in A misses in B)
  repro     reproduction rate: check repro --scenario NAME | RUN_DIR [--count 5] [--failfast] [--same-seed] [--jobs J]
            [--seed BASE]; exit 1 when it reproduced, 0 when every run was valid, 2 not exercised or unknown, 3 errors
  replay    a stored run's fault schedule again: check replay RUN_DIR [--count 5] [--jobs J]; how often each of its
            anomaly kinds recurs; exit codes as repro's
  shrink    cut a failing run down: check shrink RUN_DIR [--count 10] [--rate 0.9] [--budget 15m] [--jobs 2]; the
            smallest case that still fails, its check run line and schedule file; exit 1 found, 2 not reproduced

  learn     a course on distributed locks, one failure at a time: check learn (the lessons) | check learn ID [--live]
            (a lesson: predict, its recorded run replayed or run live, the answer) | check learn --html DIR (web pages)

  conformance  check a worker against the protocol: check conformance [--worker-cmd CMD] [--lock NAME]; exit 1 naming
            each broken rule

exit codes: 0 valid, 1 invalid, 2 unknown or not exercised, 3 error, 130 interrupted
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command line args and returns the exit code. A panic of
// the command is an error (exit 3), told in one line, its stack written to
// a file (see internalError); -h or --help of any command is exit 0.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	inv := &invocation{}
	defer func() {
		if p := recover(); p != nil {
			code = internalError(stderr, inv.dir, args, p, debug.Stack())
		}
	}()
	out := &errOutput{Writer: stderr, stdout: stdout}
	code, err := dispatch(inv, args, stdout, out)
	if err != nil {
		fmt.Fprintf(stderr, "check: %s\n", oneLine(err.Error()))
	}
	if out.help && err == nil && code == exitError {
		// A command that printed its usage for -h or --help succeeded,
		// whatever it returned.
		code = exitValid
	}
	return code
}

// invocation is what Main learns while a command runs, for a panic's
// report: the run directory, once the command knows it.
type invocation struct {
	dir string
}

// errOutput is the standard error Main hands a command; parseFlags marks
// it when it printed the command's usage for -h or --help.
type errOutput struct {
	io.Writer
	help bool
	// stdout is where a command's usage goes for -h or --help.
	stdout io.Writer
}

// dispatch runs the command args[0].
func dispatch(inv *invocation, args []string, stdout, stderr io.Writer) (int, error) {
	var code int
	var err error
	if slices.Contains([]string{"run", "matrix", "repro", "replay", "shrink"}, args[0]) {
		// The commands that record histories keep their heap within a
		// budget (a long run's history is most of a gigabyte).
		defer heapbudget.Start()()
	}
	switch args[0] {
	case "run":
		code, err = cmdRun(args[1:], stdout, stderr)
	case "analyze":
		code, err = cmdAnalyze(inv, args[1:], stdout, stderr)
	case "list":
		code, err = cmdList(args[1:], stdout, stderr)
	case "worker":
		code, err = cmdWorker(args[1:], stderr)
	case "bench":
		code, err = cmdBench(args[1:], stdout, stderr)
	case "serve":
		code, err = cmdServe(args[1:], stdout, stderr)
	case "matrix":
		code, err = cmdMatrix(args[1:], stdout, stderr)
	case "repro":
		code, err = cmdRepro(args[1:], stdout, stderr)
	case "replay":
		code, err = cmdReplay(args[1:], stdout, stderr)
	case "shrink":
		code, err = cmdShrink(args[1:], stdout, stderr)
	case "conformance":
		code, err = cmdConformance(args[1:], stdout, stderr)
	case "learn":
		code, err = cmdLearn(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitValid, nil
	default:
		err = fmt.Errorf("unknown command %q (commands: run, analyze, list, serve, worker, bench, matrix, repro, replay, shrink, conformance, learn)", args[0])
		code = exitError
	}
	return code, err
}

// internalError reports panic p of the command args: one line on stderr,
// and the stack in a file of the run directory dir, or of os.TempDir()
// when dir is "" or cannot be written. It returns exitError: a panic is
// never a verdict.
func internalError(stderr io.Writer, dir string, args []string, p any, stack []byte) int {
	text := fmt.Sprintf("check %s\npanic: %v\n\n%s", strings.Join(args, " "), p, stack)
	var path string
	var err error
	for _, d := range []string{dir, os.TempDir()} {
		if d == "" {
			continue
		}
		if path, err = writeStack(d, text); err == nil {
			break
		}
	}
	where := "stack in " + path
	if err != nil {
		where = "stack not written: " + err.Error()
	}
	fmt.Fprintf(stderr, "check: internal error: %s; %s\n", oneLine(fmt.Sprint(p)), oneLine(where))
	return exitError
}

// writeStack writes text to a new check-panic-*.txt file in dir and
// returns its path.
func writeStack(dir, text string) (string, error) {
	f, err := os.CreateTemp(dir, "check-panic-*.txt")
	if err != nil {
		return "", fmt.Errorf("create stack file: %w", err)
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("check "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args. A bad flag is one line naming it and pointing to
// --help (exit 3), never the whole usage; -h or --help prints the usage and
// returns help. Given a flagCollector as output, it hands it fs and
// returns help without parsing, so that the command stops there.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	if c, ok := fs.Output().(*flagCollector); ok {
		// The command reference asks for the flag set (see flagSet).
		c.fs = fs
		return true, nil
	}
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		w := helpOut(out)
		fmt.Fprintf(w, "usage of %s:\n", fs.Name())
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
		markHelp(out)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s (see %s --help)", oneLine(flagHint(fs, err)), fs.Name())
	}
	return false, nil
}

// derivedFlags are flags whose zero value stands for a default derived
// from other flags: given explicitly, 0 is refused rather than replaced.
var derivedFlags = map[string]string{
	"acquire-timeout":  "leave it out for 2 x lease",
	"nemesis-duration": "leave it out for 3 x lease",
	"stock":            "leave it out for 100",
}

// checkGiven refuses an explicit 0 for a derived flag.
func checkGiven(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		v := f.Value.String()
		if why, ok := derivedFlags[f.Name]; ok && (v == "0" || v == "0s") {
			err = fmt.Errorf("--%s 0: want more than 0 (%s)", f.Name, why)
		}
	})
	return err
}

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
	fs.IntVar(&t.Nodes, "nodes", 3, "ZooKeeper or etcd ensemble size: 1 (a standalone server), 3 or 5")
	fs.StringVar(&t.Service, "service", "", "lock service to run the design on instead of its own: one that fronts it (pgbouncer-transaction or pgbouncer-session for a PostgreSQL design; see check list)")
	fs.StringVar(&t.ServiceVersion, "service-version", "", "version of the lock service's server: one check list shows for it (default: the installed one; a version built from its Go module is built on first use and cached)")
	fs.StringVar(&t.Cluster, "cluster", "local", "where the lock service runs: local (server processes on this machine), docker (containers of the images make images builds; needs a Docker engine) or external (servers you run: --external)")
	fs.Func("external", "lock servers you run, `HOST:PORT,...`, reached through lockcheck's proxies (implies --cluster external; docs/your-lock.md)", func(v string) error {
		t.External = strings.Split(v, ",")
		return nil
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
	if len(t.External) > 0 && !flagGiven(fs, "cluster") {
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

// helpOut is where a command prints the usage asked for with -h or
// --help: standard output, as for `check --help`, when stderr is Main's.
func helpOut(stderr io.Writer) io.Writer {
	if o, ok := stderr.(*errOutput); ok && o.stdout != nil {
		return o.stdout
	}
	return stderr
}

// markHelp tells Main, through its errOutput, that a command printed its
// usage for -h or --help.
func markHelp(w io.Writer) {
	if o, ok := w.(*errOutput); ok {
		o.help = true
	}
}

// noArgsHelp handles the arguments of a command that takes none: -h or
// --help prints usage and gives help; any other argument is an error.
func noArgsHelp(args []string, stderr io.Writer, usage string) (help bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(helpOut(stderr), usage)
		markHelp(stderr)
		return true, nil
	}
	return false, fmt.Errorf("unexpected argument %q", args[0])
}

// helpOrError is what a command returns when parseFlags says help (exit 0)
// or fails (exit 3).
func helpOrError(help bool, err error) (int, error) {
	if help {
		return exitValid, nil
	}
	return exitError, err
}

// cmdAnalyze re-checks a stored run. What the checkers cannot judge is
// refused with exit 3 before any file of the run is written: a history
// whose structure is impossible (history.Validate), and a test.json naming
// a lock design this build does not know.
func cmdAnalyze(inv *invocation, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("analyze", stderr)
	timeout := fs.Duration("check-timeout", 0, "time limit of each Porcupine check (default: the run's)")
	outDir := fs.String("out", "", "where the results, report and linearizability pages go (default: RUN_DIR/analysis)")
	inPlace := fs.Bool("in-place", false, "replace the run's own results.json, summary.json and report (by default they are left as the run wrote them)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return helpOrError(help, err)
	}
	if *timeout < 0 {
		return exitError, fmt.Errorf("--check-timeout %s: want more than 0 (leave it out for the run's)", *timeout)
	}
	if fs.NArg() != 1 {
		return exitError, errors.New("usage: check analyze RUN_DIR (or a test's directory, for its newest run, or a history.jsonl file)")
	}
	if *inPlace && *outDir != "" {
		return exitError, errors.New("--in-place and --out: give one")
	}
	dir, path, err := analyzeTarget(fs.Arg(0))
	if err != nil {
		return exitError, err
	}
	if dir != filepath.Clean(fs.Arg(0)) && path == filepath.Join(dir, "history.jsonl") {
		fmt.Fprintf(stderr, "check: analyzing the newest run of %s: %s\n", fs.Arg(0), dir)
	}
	inv.dir = dir
	out := *outDir
	switch {
	case *inPlace:
		out = dir
	case out == "":
		out = filepath.Join(dir, "analysis")
	}
	var h history.History
	var torn *history.TornLine
	heapbudget.Retained(func() { h, torn, err = history.ReadFileTorn(path) })
	if err != nil {
		return exitError, err
	}
	if torn != nil {
		fmt.Fprintf(stderr, "check: warning: %s: %s\n", path, torn)
	}
	if len(h) == 0 {
		// Nothing to judge is bad input, not a verdict: a run whose
		// workers could not start leaves an empty history.
		return exitError, fmt.Errorf("%s holds no operations: nothing to check", path)
	}
	if err := history.ValidateFile(path, h); err != nil {
		return exitError, fmt.Errorf("%w; not checked", err)
	}
	t, err := runner.ReadTest(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return exitError, err
	}
	var plan *runner.Plan
	if err != nil { // a bare history: infer fencing from the tokens cs carried
		t.Fencing = fencedHistory(h)
		plan = runner.PlanFor(t)
	} else if plan, err = runner.Resolve(withDefaults(t)); err != nil {
		// The design decides how the history is judged (a lock that
		// fences by itself, the lease its service applies, a design with
		// no lock at all); judged with defaults, the verdict could be wrong
		// either way.
		return exitError, fmt.Errorf("%s: %w: the checkers judge a history by its test map (its lock design, workload and lease; to check it with defaults, analyze a copy of history.jsonl kept apart from test.json)",
			filepath.Join(dir, "test.json"), err)
	}
	opts := plan.CheckOptions()
	if *timeout > 0 {
		opts.Timeout = *timeout
	}
	var res checker.Result
	if err = os.MkdirAll(out, 0o755); err != nil {
		res = checker.Default(opts).Check(context.Background(), h)
	} else {
		res, err = runner.Check(context.Background(), out, h, opts)
	}
	if err == nil {
		if rerr := plan.WriteReport(out, h, res); rerr != nil {
			fmt.Fprintf(stderr, "check: report: %s\n", oneLine(rerr.Error()))
		}
	}
	// The verdict is printed even when the run directory cannot take it
	// (a full or read-only store): then the exit is 3, or 1 for an
	// anomaly, with one line on what was not saved.
	printResult(stdout, res)
	saved := ""
	if err == nil {
		saved = "; report " + filepath.Join(out, "report.html")
	}
	fmt.Fprintf(stdout, "%s: %s; %d ops in %s%s\n", verdictText(res), anomalyCounts(res), len(h), path, saved)
	if err != nil {
		if res.Valid == checker.Invalid && res.Panicked == "" {
			return exitInvalid, fmt.Errorf("results not saved: %w", err)
		}
		return exitError, fmt.Errorf("results not saved: %w", err)
	}
	return verdictExit(res)
}

// withDefaults returns t with its unset fields filled: a stored test map
// from an older build may leave out what has a default now.
func withDefaults(t runner.Test) runner.Test {
	t.Defaults()
	return t
}

func fencedHistory(h history.History) bool {
	for _, op := range h {
		if op.F == history.FCS && op.Type == history.Invoke && op.Value != nil && op.Value.Token != 0 {
			return true
		}
	}
	return false
}

func cmdWorker(args []string, stderr io.Writer) (int, error) {
	if help, err := noArgsHelp(args, stderr, "usage of check worker: check worker (no flags) serves the worker protocol on stdin and stdout; check run starts it\n"); help || err != nil {
		return helpOrError(help, err)
	}
	if err := workloads.ServeStdio(context.Background()); err != nil {
		return exitError, err
	}
	return exitValid, nil
}

// verdictExit is the exit code of a checked result: its verdict's, or an
// error when a checker panicked (a crash is never a verdict).
func verdictExit(res checker.Result) (int, error) {
	if res.Panicked != "" {
		return exitError, fmt.Errorf("checker %s: the verdict is not to be trusted", res.Panicked)
	}
	return exitCode(res.Valid), nil
}

func exitCode(v checker.Validity) int {
	switch v {
	case checker.Valid:
		return exitValid
	case checker.Invalid:
		return exitInvalid
	}
	return exitUnknown
}

func verdictWord(v checker.Validity) string {
	switch v {
	case checker.Valid:
		return "valid"
	case checker.Invalid:
		return "invalid"
	}
	return "unknown"
}
