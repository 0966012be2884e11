package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/heapbudget"
	"github.com/lockcheck/lockcheck/runner"
)

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
