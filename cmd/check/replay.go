package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/matrix"
	"github.com/lockcheck/lockcheck/schedule"
)

// cmdReplay runs `check replay RUN_DIR [--count N] [repro flags] [run
// flags]`: the stored run's test map with the faults of its schedule.json
// (by their triggers; the random ones at the times they fired), with the
// run's own seed unless --seed is given, --count times; it prints, for
// each anomaly kind the original found, in how many runs it recurred.
// Exit codes are repro's.
func cmdReplay(args []string, stdout, stderr io.Writer) (int, error) {
	own, rest := splitReproArgs(args)
	dir, _, err := reproRunDir(rest)
	if err != nil {
		return exitError, err
	}
	for _, a := range own {
		if strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-") == "scenario" {
			return exitError, errors.New("check replay takes a run directory, not --scenario (check repro --scenario NAME runs a scenario)")
		}
	}
	if dir == "" {
		if slices.ContainsFunc(own, func(a string) bool { return a == "-h" || a == "--help" || a == "-help" }) {
			return repro("replay", args, stdout, stderr, nil)
		}
		return exitError, errors.New("usage: check replay RUN_DIR [--count N] [--jobs J] [--seed BASE] [run flags]")
	}
	rec, err := schedule.Load(filepath.Join(dir, schedule.FileName))
	if err != nil {
		return exitError, fmt.Errorf("%s has no schedule to replay (a run of this version with faults writes schedule.json): %w", dir, err)
	}
	kinds, err := originalKinds(dir)
	if err != nil {
		return exitError, err
	}
	fmt.Fprintf(stdout, "replay: %s: %d fault(s): %s\n", dir, len(rec.Faults), schedule.Join(rec.Replay()))
	if len(kinds) == 0 {
		fmt.Fprintf(stdout, "replay: the original found no anomaly\n")
	} else {
		fmt.Fprintf(stdout, "replay: the original found %s\n", strings.Join(kinds, ", "))
	}
	if !slices.ContainsFunc(own, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "seed") }) {
		args = append(args, "--same-seed")
	}
	return repro("replay", args, stdout, stderr, func(runs []matrix.Run) {
		fmt.Fprint(stdout, recurrence(kinds, runs))
	})
}

// originalKinds returns the unfenced anomaly kinds of a stored run's
// results.json, sorted.
func originalKinds(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, fmt.Errorf("replay: the original's verdict: %w", err)
	}
	var res matrix.Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", filepath.Join(dir, "results.json"), err)
	}
	seen := make(map[string]bool)
	var kinds []string
	for _, a := range res.Anomalies {
		if !a.Fenced && !seen[a.Kind] {
			seen[a.Kind] = true
			kinds = append(kinds, a.Kind)
		}
	}
	sort.Strings(kinds)
	return kinds, nil
}

// recurrence says, for each of the original's anomaly kinds, in how many
// of the runs that ended with a verdict it recurred.
func recurrence(kinds []string, runs []matrix.Run) string {
	judged := 0
	for _, r := range runs {
		if r.Verdict != matrix.Error {
			judged++
		}
	}
	var b strings.Builder
	for _, k := range kinds {
		n := 0
		for _, r := range runs {
			if r.Anomalies[k] > 0 {
				n++
			}
		}
		fmt.Fprintf(&b, "replay: %s recurred in %d of %d runs", k, n, judged)
		if judged < len(runs) {
			fmt.Fprintf(&b, " (%d more were errors)", len(runs)-judged)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// withSchedule adds a schedule file's faults to a --nemesis value.
func withSchedule(nemesis string, rec schedule.Record) string {
	faults := schedule.Join(rec.Replay())
	if nemesis == "" || nemesis == "none" {
		return faults
	}
	return nemesis + "," + faults
}
