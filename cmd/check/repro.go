package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/bugs"
	"github.com/lockcheck/lockcheck/matrix"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/schedule"
)

// reproFlags are the flags `check repro` takes itself; every other flag is
// a `check run` flag for every run (it overrides the scenario's or the
// stored run's).
var reproFlags = map[string]bool{"scenario": true, "bug": true, "count": true, "failfast": true, "same-seed": true, "jobs": true,
	"seed": true, "store": true, "stop-on-anomaly": true, "run-timeout": true, "h": true, "help": true}

// boolFlags of reproFlags take no separate value.
var reproBools = map[string]bool{"failfast": true, "same-seed": true, "stop-on-anomaly": true}

// cmdRepro runs `check repro --scenario NAME | --bug ID | RUN_DIR`: the
// scenario, a reproduced bug report's reproducer (and its fixed version's),
// or the stored run's test map, --count times with seeds derived from a base
// seed (or the same seed), and prints how often the anomaly reproduced.
// Exit 1 when it reproduced at least once, 0 when every run was valid, 2
// when none reproduced and some were not exercised or unknown, 3 when
// none reproduced and some were errors (or on bad input), 130 when
// interrupted.
func cmdRepro(args []string, stdout, stderr io.Writer) (int, error) {
	return repro("repro", args, stdout, stderr, nil)
}

// repro is check repro, and check replay (named cmd) with after: told of
// the runs once they are done, before the summary line.
func repro(cmd string, args []string, stdout, stderr io.Writer, after func(runs []matrix.Run)) (int, error) {
	own, extra := splitReproArgs(args)
	fs := newFlags(cmd, stderr)
	scenario := fs.String("scenario", "", "named scenario to reproduce (see check list)")
	bugID := fs.String("bug", "", "a reproduced bug report by its `ID` (check list bugs): run its reproducer, and the fixed version's beside it where the report has one (docs/bugs.md)")
	count := fs.Int("count", 5, "number of runs")
	failfast := fs.Bool("failfast", false, "start no more runs once one is invalid")
	sameSeed := fs.Bool("same-seed", false, "run every time with the same seed: the stored run's, or --seed for a scenario")
	jobs := fs.Int("jobs", 1, "runs at a time")
	var baseSeed clockSeed
	fs.Var(&baseSeed, "seed", "base seed the run seeds are derived from, a whole `number` of 0 or more (default: from the clock; printed)")
	store := fs.String("store", "store", "store directory: the runs go to store/repro/<time>/")
	stopOnAnomaly := fs.Bool("stop-on-anomaly", true, "stop each run at its first double holder or stale write")
	runTimeout := fs.Duration("run-timeout", time.Hour, "interrupt a run that has no verdict after this long (an error)")
	if help, err := parseFlags(fs, own); help || err != nil {
		return helpOrError(help, err)
	}
	runDir, extra, err := runDirFlags(extra)
	if err != nil {
		return exitError, err
	}
	switch {
	case *count < 1 || *count > 1000:
		return exitError, fmt.Errorf("--count %d: want 1 to 1000", *count)
	case *jobs < 1 || *jobs > 64:
		return exitError, fmt.Errorf("--jobs %d: want 1 to 64", *jobs)
	case *runTimeout <= 0:
		return exitError, fmt.Errorf("--run-timeout %s: want more than 0", *runTimeout)
	case btoi(*scenario != "")+btoi(runDir != "")+btoi(*bugID != "") != 1:
		return exitError, errors.New("usage: check repro --scenario NAME | --bug ID | RUN_DIR [--count N] [--failfast] [--same-seed] [--jobs J] [--seed BASE] [run flags]")
	}
	what := "--scenario " + *scenario
	var cells []matrix.Cell
	var labels []string
	var seed uint64
	if *bugID != "" {
		what = "--bug " + *bugID
		if cells, labels, err = bugCells(*bugID, extra); err != nil {
			return exitError, err
		}
	} else {
		var cell matrix.Cell
		if cell, seed, err = reproCell(*scenario, runDir, extra); err != nil {
			return exitError, err
		}
		cells, labels = []matrix.Cell{cell}, []string{""}
	}
	for i := range cells {
		if err := checkCell(cells[i]); err != nil {
			return exitError, err
		}
		cells[i].Args = append([]string{"--stop-on-anomaly=" + strconv.FormatBool(*stopOnAnomaly)}, cells[i].Args...)
	}
	b := int64(baseSeed.value())
	base := &b
	var seeds []uint64
	if *sameSeed {
		if runDir == "" {
			seed = uint64(*base)
		}
		for i := 0; i < *count; i++ {
			seeds = append(seeds, seed)
		}
	} else {
		seeds = matrix.ReproSeeds(uint64(*base), *count)
	}
	exe, err := os.Executable()
	if err != nil {
		return exitError, fmt.Errorf("find this binary to run: %w", err)
	}
	started := time.Now().UTC()
	dir, err := matrix.NewDir(*store, "repro", started.Local())
	if err != nil {
		return exitError, err
	}
	if runDir != "" {
		what = runDir
	}
	seedNote := fmt.Sprintf("base seed %d", *base)
	if *sameSeed {
		seedNote = fmt.Sprintf("seed %d every time", seeds[0])
	}
	fmt.Fprintf(stdout, "repro: %s x %d, %s (seeds %s), stop on anomaly %s; runs in %s\n",
		what, *count, seedNote, shortSeeds(seeds), onOff(*stopOnAnomaly), dir)
	fmt.Fprintf(stdout, "repro: `check repro %s --count %d --seed %d%s%s` repeats it\n", what, *count, *base, sameSeedFlag(*sameSeed), runFlagsNote(extra))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	x := &matrix.Executor{Exe: exe, Store: *store, Dir: dir, Jobs: *jobs, RunTimeout: *runTimeout, Progress: stdout}
	if *failfast {
		x.Stop = func(c matrix.CellResult) bool {
			for _, r := range c.Runs {
				if r.Verdict == matrix.Invalid {
					return true
				}
			}
			return false
		}
	}
	results := x.Run(ctx, cells, seeds)
	sum := matrix.Summarize(results[0].Runs)
	if after != nil {
		after(results[0].Runs)
	}
	rec := struct {
		Command []string            `json:"command"`
		Started time.Time           `json:"started"`
		Base    int64               `json:"base_seed"`
		Cell    matrix.CellResult   `json:"cell"`
		Summary matrix.ReproSummary `json:"summary"`
		// Fixed is, for --bug, the fixed version's cell and summary.
		Fixed *reproFixed `json:"fixed,omitempty"`
	}{Command: append([]string{"check", "repro"}, args...), Started: started, Base: *base, Cell: results[0], Summary: sum}
	if len(results) > 1 {
		rec.Fixed = &reproFixed{Cell: results[1], Summary: matrix.Summarize(results[1].Runs)}
	}
	if b, err := json.MarshalIndent(rec, "", "  "); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "repro.json"), append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "check: %v\n", err)
		}
	}
	for i, c := range results {
		if labels[i] == "" {
			fmt.Fprintf(stdout, "repro: %s\n", matrix.Summarize(c.Runs))
			continue
		}
		fmt.Fprintf(stdout, "repro: %s: %s\n", labels[i], matrix.Summarize(c.Runs))
	}
	if *bugID != "" && len(results) == 1 {
		b, _ := bugs.Find(*bugID)
		if b.Regression {
			fmt.Fprintf(stdout, "repro: %s is fixed in every release that runs here (%s): the run checks that the fix holds\n", b.ID, b.Broken().FixedIn)
		} else {
			fmt.Fprintf(stdout, "repro: no fixed release of %s runs here; fixed in: %s\n", b.ID, b.Broken().FixedIn)
		}
	}
	return sum.ExitCode(), nil
}

// reproFixed is the fixed version's cell of `check repro --bug` and its
// summary.
type reproFixed struct {
	Cell    matrix.CellResult   `json:"cell"`
	Summary matrix.ReproSummary `json:"summary"`
}

// bugCells returns the cells `check repro --bug id` runs, extra flags
// added to each, with their labels: the report's first run (the version
// with the failure) and, where it has one, its run on a fixed version.
func bugCells(id string, extra []string) ([]matrix.Cell, []string, error) {
	b, err := bugs.Find(id)
	if err != nil {
		return nil, nil, err
	}
	runs := []bugs.Run{b.Broken()}
	labels := []string{"broken, " + b.Broken().Component}
	if b.Regression {
		labels[0] = "fixed in every release that runs here, " + b.Broken().Component
	}
	if f, ok := b.FixedRun(); ok {
		runs = append(runs, f)
		labels = append(labels, "fixed, "+f.Component)
	}
	var cells []matrix.Cell
	for i, r := range runs {
		column := "broken"
		if i > 0 {
			column = "fixed"
		}
		args := append(append([]string{}, r.Args...), extra...)
		if len(args) >= 2 && args[0] == "--scenario" {
			c, _, err := reproCell(args[1], "", args[2:])
			if err != nil {
				return nil, nil, fmt.Errorf("bug %s: %w", id, err)
			}
			c.Row, c.Column = b.ID, column
			cells = append(cells, c)
			continue
		}
		if err := matrix.CheckFlags(args); err != nil {
			return nil, nil, fmt.Errorf("bug %s: %w", id, err)
		}
		c, err := catalogCell(b.ID, column, args)
		if err != nil {
			return nil, nil, err
		}
		cells = append(cells, c)
	}
	return cells, labels, nil
}

// catalogCell is the cell of args called row and column, expected what the
// catalog expects of the same run (Depends when it has no such cell).
func catalogCell(row, column string, args []string) (matrix.Cell, error) {
	cat, err := matrix.DefaultCatalog()
	if err != nil {
		return matrix.Cell{}, err
	}
	e, _ := cat.Lookup(args)
	return matrix.Cell{Row: row, Column: column, Expect: e, Args: args}, nil
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// splitReproArgs is splitOwnFlags for repro, whose boolean flags take no
// separate value.
func splitReproArgs(args []string) (mine, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && reproFlags[name] {
			mine = append(mine, a)
			if !hasValue && !reproBools[name] && name != "h" && name != "help" && i+1 < len(args) {
				mine = append(mine, args[i+1])
				i++
			}
			continue
		}
		rest = append(rest, a)
	}
	return mine, rest
}

// reproRunDir takes the RUN_DIR argument (a directory holding test.json)
// out of the run flags.
func reproRunDir(rest []string) (string, []string, error) {
	dir := ""
	var flags []string
	for i, a := range rest {
		if !strings.HasPrefix(a, "-") && (i == 0 || isFile(filepath.Join(a, "test.json"))) {
			if !isFile(filepath.Join(a, "test.json")) {
				return "", nil, fmt.Errorf("%s: not a run directory (no test.json)", a)
			}
			if dir != "" {
				return "", nil, fmt.Errorf("two run directories: %s and %s", dir, a)
			}
			dir = a
			continue
		}
		flags = append(flags, a)
	}
	return dir, flags, nil
}

// runDirFlags takes the RUN_DIR argument out of a command's run flags and
// checks the flags left as `check run` flags.
func runDirFlags(rest []string) (string, []string, error) {
	dir, flags, err := reproRunDir(rest)
	if err != nil {
		return "", nil, err
	}
	return dir, flags, matrix.CheckFlags(flags)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// reproCell is the cell a repro runs, and the stored run's seed.
func reproCell(scenario, runDir string, extra []string) (matrix.Cell, uint64, error) {
	if scenario != "" {
		s, err := scenarios.Find(scenario)
		if err != nil {
			return matrix.Cell{}, 0, err
		}
		c, err := catalogCell(s.Name, "repro", append([]string{"--scenario", s.Name}, extra...))
		return c, 0, err
	}
	t, err := runner.ReadTest(runDir)
	if err != nil {
		return matrix.Cell{}, 0, err
	}
	args := testArgs(t)
	rec, err := schedule.Load(filepath.Join(runDir, schedule.FileName))
	switch {
	case err == nil:
		args[3] = schedule.Join(rec.Replay()) // the faults it applied, by their triggers
	case !errors.Is(err, fs.ErrNotExist):
		return matrix.Cell{}, 0, err
	}
	args = append(args, extra...)
	name := t.Name
	if name == "" {
		name = t.Lock
	}
	return matrix.Cell{Row: name, Column: "repro", Expect: matrix.Depends, Args: args}, t.Seed, nil
}

// testArgs returns the `check run` flags of a stored test map (without
// --seed, --store and --quiet): every field test.json keeps, so a repro
// runs what the run ran.
func testArgs(t runner.Test) []string {
	args := []string{"--lock", t.Lock, "--nemesis", t.Nemesis}
	add := func(name, value string) { args = append(args, "--"+name, value) }
	num := func(name string, v int64) {
		if v > 0 {
			add(name, strconv.FormatInt(v, 10))
		}
	}
	dur := func(name string, d time.Duration) {
		if d > 0 {
			add(name, d.String())
		}
	}
	if t.Fencing {
		args = append(args, "--fencing")
	}
	num("workers", int64(t.Workers))
	num("keys", int64(t.Keys))
	num("nodes", int64(t.Nodes))
	if t.Workload != "" {
		add("workload", t.Workload)
	}
	num("stock", t.Stock)
	if t.Failpoint != "" {
		add("failpoint", t.Failpoint)
	}
	if t.Service != "" {
		add("service", t.Service)
	}
	if t.ServiceVersion != "" {
		add("service-version", t.ServiceVersion)
	}
	if t.LibraryVersion != "" {
		add("library-version", t.LibraryVersion)
	}
	dur("time", t.Time)
	dur("lease", t.Lease)
	add("think", t.Think.String()) // zero is allowed and not the default
	dur("acquire-timeout", t.AcquireTimeout)
	dur("retry", t.Retry)
	dur("op-timeout", t.OpTimeout)
	dur("nemesis-interval", t.NemesisInterval)
	dur("nemesis-duration", t.NemesisDuration)
	dur("check-timeout", t.CheckTimeout)
	dur("stuck-bound", t.StuckBound)
	if len(t.WorkerCmd) > 0 {
		add("worker-cmd", strings.Join(t.WorkerCmd, " "))
	}
	return args
}

// shortSeeds lists seeds, at most ten.
func shortSeeds(seeds []uint64) string {
	var parts []string
	for i, s := range seeds {
		if i == 10 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, strconv.FormatUint(s, 10))
	}
	return strings.Join(parts, ", ")
}

func sameSeedFlag(on bool) string {
	if on {
		return " --same-seed"
	}
	return ""
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// runFlagsNote renders the run flags a repro passes to every run (" --lease
// 5s --library-version 3.6.16") for its repeat command, "" for none.
func runFlagsNote(extra []string) string {
	if len(extra) == 0 {
		return ""
	}
	return " " + strings.Join(extra, " ")
}
