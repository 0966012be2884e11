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
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/matrix"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/shrink"
)

// shrinkFlags are the flags `check shrink` takes itself (true: with a
// value, as for splitOwnFlags); every other flag
// is a `check run` flag for every run.
var shrinkFlags = map[string]bool{"count": true, "rate": true, "budget": true, "jobs": true, "kind": true,
	"seed": true, "store": true, "run-timeout": true, "h": false, "help": false}

// cmdShrink runs `check shrink RUN_DIR`: it cuts a failing run down to the
// smallest case whose anomaly still recurs in --rate of --count runs (fewer
// faults, random faults turned into the event triggers that preceded them,
// fewer workers and keys, shorter faults and runs), within --budget. It
// prints each candidate on stderr, then the smallest case in one sentence,
// the `check run` line that repeats it and the schedule file it wrote.
// Exit 1 when it found a case that reproduces (the smallest, or the
// original), 2 when not even the original did at the rate, 3 on an error,
// 130 when interrupted.
func cmdShrink(args []string, stdout, stderr io.Writer) (int, error) {
	own, extra := splitOwnFlags(args, shrinkFlags)
	fset := newFlags("shrink", stderr)
	count := fset.Int("count", 10, "runs per candidate")
	rate := fset.Float64("rate", 0.9, "share of a candidate's runs that must show the anomaly for it to be kept")
	budget := fset.Duration("budget", 15*time.Minute, "stop after this long with the smallest case kept so far")
	jobs := fset.Int("jobs", 2, "runs at a time")
	kindFlag := fset.String("kind", "", "the anomaly kind to keep (default: the original's first)")
	var baseSeed clockSeed
	fset.Var(&baseSeed, "seed", "base seed the runs' seeds are derived from, a whole `number` of 0 or more (default: from the clock; printed)")
	store := fset.String("store", "store", "store directory: the runs go to store/shrink/<time>/")
	runTimeout := fset.Duration("run-timeout", 10*time.Minute, "interrupt a run that has no verdict after this long (an error)")
	if help, err := parseFlags(fset, own); help || err != nil {
		return helpOrError(help, err)
	}
	runDir, extra, err := runDirFlags(extra)
	if err != nil {
		return exitError, err
	}
	switch {
	case runDir == "":
		return exitError, errors.New("usage: check shrink RUN_DIR [--count N] [--rate R] [--budget D] [--jobs J] [--kind K] [run flags]")
	case *count < 1 || *count > 100:
		return exitError, fmt.Errorf("--count %d: want 1 to 100", *count)
	case *rate <= 0 || *rate > 1:
		return exitError, fmt.Errorf("--rate %g: want more than 0, at most 1", *rate)
	case *budget <= 0:
		return exitError, fmt.Errorf("--budget %s: want more than 0", *budget)
	case *jobs < 1 || *jobs > 64:
		return exitError, fmt.Errorf("--jobs %d: want 1 to 64", *jobs)
	}
	need := int(*rate*float64(*count) + 0.999999)
	orig, err := readOriginal(runDir, *kindFlag)
	if err != nil {
		return exitError, err
	}
	exe, err := os.Executable()
	if err != nil {
		return exitError, fmt.Errorf("find this binary to run: %w", err)
	}
	dir, err := matrix.NewDir(*store, "shrink", time.Now().Local())
	if err != nil {
		return exitError, err
	}
	base := uint64(baseSeed.value())
	seeds := matrix.ReproSeeds(base, *count)
	start, hints := shrink.FromRecord(orig.rec, orig.h, orig.test.Workers, orig.test.Keys, orig.test.Time, orig.first)
	fmt.Fprintf(stdout, "shrink: %s: %s at %d of %d runs, base seed %d, budget %s; runs in %s\n",
		runDir, orig.kind, need, *count, base, *budget, dir)
	fmt.Fprintf(stdout, "shrink: the original: %s\n", shrink.Sentence(start, shrink.Trial{Hits: 1, Runs: 1}, orig.kind, orig.lease))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n := 0
	tester := func(ctx context.Context, c shrink.Case, count, need int) (shrink.Trial, error) {
		n++
		args := append(append(append(baseArgs(orig.test), "--stop-on-anomaly"), extra...), c.Args()...)
		cell := matrix.Cell{Row: "shrink", Column: fmt.Sprintf("c%02d", n), Expect: matrix.Depends, Args: args}
		x := &matrix.Executor{Exe: exe, Store: *store, Dir: filepath.Join(dir, cell.Column), Jobs: *jobs, RunTimeout: *runTimeout,
			Stop: func(cr matrix.CellResult) bool { return misses(cr.Runs, orig.kind) > count-need }}
		cells := x.Run(ctx, []matrix.Cell{cell}, seeds[:count])
		return trialOf(cells[0].Runs, orig.kind), nil
	}
	res, err := shrink.Shrink(ctx, start, shrink.Trial{}, hints, tester, shrink.Options{Count: *count, Need: need,
		Budget: *budget, Lease: orig.lease, Progress: stderr})
	if ctx.Err() != nil {
		return exitInterrupted, errors.New("interrupted")
	}
	if err != nil {
		return exitError, err
	}
	if res.Kept == 0 {
		fmt.Fprintf(stderr, "shrink: no smaller case held; running the original %d times for its rate\n", *count)
		if res.Trial, err = tester(ctx, start, *count, 0); err != nil {
			return exitError, err
		}
	}
	if res.Stopped != "" {
		fmt.Fprintf(stdout, "shrink: stopped: %s (the smallest so far follows)\n", res.Stopped)
	}
	path := filepath.Join(dir, schedule.FileName)
	if len(res.Best.Faults) > 0 {
		if err := writeShrunk(path, orig.lease, res.Best); err != nil {
			return exitError, err
		}
	}
	line := append([]string{"check", "run"}, baseArgs(orig.test)...)
	line = append(append(line, extra...), res.Best.Args()...)
	fmt.Fprintf(stdout, "shrink: smallest, after %d candidates (%d kept): %s\n", res.Tried, res.Kept,
		shrink.Sentence(res.Best, res.Trial, orig.kind, orig.lease))
	fmt.Fprintf(stdout, "shrink: %s\n", shellLine(line))
	if len(res.Best.Faults) > 0 {
		fmt.Fprintf(stdout, "shrink: its schedule: %s (check run --schedule, check replay of any of its runs)\n", path)
	} else {
		fmt.Fprintf(stdout, "shrink: it needs no fault: the anomaly comes without one\n")
	}
	writeShrinkJSON(stderr, dir, runDir, orig.kind, base, res)
	if res.Trial.Hits >= need {
		return exitInvalid, nil
	}
	return exitUnknown, nil
}

// doubleHolder is the overlap checker's anomaly kind.
const doubleHolder = "double-holder"

// baseArgs are the stored test map's flags less those a shrink case sets
// (--nemesis, --workers, --keys, --time).
func baseArgs(t runner.Test) []string {
	args := testArgs(t)
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--nemesis", "--workers", "--keys", "--time":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// original is what shrink reads of the run to cut down.
type original struct {
	test  runner.Test
	rec   schedule.Record
	h     history.History
	kind  string        // the anomaly kind to keep
	first time.Duration // its first anomaly, on the history's clock
	lease time.Duration
}

// readOriginal reads a stored run: its test map, schedule, history and
// verdict. kind "" picks the original's first unfenced anomaly.
func readOriginal(dir, kind string) (original, error) {
	var o original
	t, err := runner.ReadTest(dir)
	if err != nil {
		return o, err
	}
	o.test = t
	o.rec, err = schedule.Load(filepath.Join(dir, schedule.FileName))
	switch {
	case errors.Is(err, fs.ErrNotExist) && (t.Nemesis == "none" || t.Nemesis == ""):
		o.rec = schedule.Record{Lease: t.Lease} // a run without faults: nothing to drop but workers, keys and time
	case err != nil:
		return o, fmt.Errorf("%s: its schedule: %w", dir, err)
	}
	o.lease = o.rec.Lease
	if o.lease == 0 {
		o.lease = t.Lease
	}
	if o.h, err = history.ReadFile(filepath.Join(dir, "history.jsonl")); err != nil {
		return o, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return o, fmt.Errorf("%s: its verdict: %w", dir, err)
	}
	var res matrix.Results
	if err := json.Unmarshal(b, &res); err != nil {
		return o, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	anomalies := res.Anomalies[:0:0]
	for _, a := range res.Anomalies {
		if !a.Fenced && (kind == "" || a.Kind == kind) {
			anomalies = append(anomalies, a)
		}
	}
	if len(anomalies) == 0 {
		if kind != "" {
			return o, fmt.Errorf("%s found no %s anomaly to shrink", dir, kind)
		}
		return o, fmt.Errorf("%s found no anomaly to shrink (check shrink cuts down a failing run)", dir)
	}
	// The first double holder, else the first anomaly: a double holder
	// is what a lock exists to prevent, and the others follow from it.
	sort.SliceStable(anomalies, func(i, j int) bool {
		di, dj := anomalies[i].Kind == doubleHolder, anomalies[j].Kind == doubleHolder
		if di != dj {
			return di
		}
		return anomalies[i].Start < anomalies[j].Start
	})
	o.kind, o.first = anomalies[0].Kind, anomalies[0].Start
	if v, ok := res.Stats["first_anomaly_s"].(float64); ok {
		o.first = time.Duration(v * float64(time.Second))
	}
	return o, nil
}

// misses counts the runs that ended without kind (a run not started yet
// stands as interrupted).
func misses(runs []matrix.Run, kind string) int {
	n := 0
	for _, r := range runs {
		if r.Verdict != matrix.Interrupted && r.Verdict != matrix.Missing && r.Anomalies[kind] == 0 {
			n++
		}
	}
	return n
}

// trialOf is what runs found of kind.
func trialOf(runs []matrix.Run, kind string) shrink.Trial {
	var tr shrink.Trial
	var firsts []float64
	for _, r := range runs {
		if r.Verdict == matrix.Interrupted || r.Verdict == matrix.Missing {
			continue
		}
		tr.Runs++
		if r.Anomalies[kind] > 0 {
			tr.Hits++
			if r.FirstAnomalyS != nil {
				firsts = append(firsts, *r.FirstAnomalyS)
			}
		}
	}
	if len(firsts) > 0 {
		sort.Float64s(firsts)
		tr.FirstAnomaly = time.Duration(firsts[len(firsts)/2] * float64(time.Second))
	}
	return tr
}

// writeShrunk writes the smallest case's faults as a schedule file.
func writeShrunk(path string, lease time.Duration, c shrink.Case) error {
	rec := schedule.Record{Lease: lease, Faults: []schedule.Applied{}}
	for _, f := range c.Faults {
		rec.Faults = append(rec.Faults, schedule.Applied{Fault: f, Spec: f.String()})
	}
	return rec.Write(path)
}

// writeShrinkJSON keeps the search's outcome beside its runs.
func writeShrinkJSON(stderr io.Writer, dir, runDir, kind string, base uint64, res shrink.Result) {
	out := struct {
		Original string       `json:"original"`
		Kind     string       `json:"kind"`
		BaseSeed uint64       `json:"base_seed"`
		Smallest []string     `json:"smallest"`
		Trial    shrink.Trial `json:"trial"`
		Tried    int          `json:"tried"`
		Kept     int          `json:"kept"`
		Stopped  string       `json:"stopped,omitempty"`
	}{runDir, kind, base, res.Best.Args(), res.Trial, res.Tried, res.Kept, res.Stopped}
	b, err := json.MarshalIndent(out, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "shrink.json"), append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "check: shrink.json: %v\n", err)
	}
}

// shellLine quotes the words of a command line that a shell would split
// or expand.
func shellLine(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " *<>#&;|$'\"()") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}
