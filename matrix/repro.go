package matrix

import (
	"fmt"
	"strings"
)

// ReproSummary is what `check repro` reports of its runs.
type ReproSummary struct {
	Runs         int `json:"runs"`
	Invalid      int `json:"invalid"`
	Valid        int `json:"valid"`
	Unknown      int `json:"unknown"`
	NotExercised int `json:"not_exercised"`
	Error        int `json:"error"`
	Interrupted  int `json:"interrupted"`
	// FirstSeed is the seed of the first run (in run order) that was
	// invalid.
	FirstSeed *uint64 `json:"first_failing_seed,omitempty"`
	// MedianFirstAnomalyS is the median time to the first anomaly of the
	// invalid runs, in seconds.
	MedianFirstAnomalyS *float64 `json:"median_first_anomaly_s,omitempty"`
}

// Summarize counts repro runs (in the order they were started).
func Summarize(runs []Run) ReproSummary {
	t := TallyRuns(runs)
	s := ReproSummary{Runs: t.Runs, Invalid: t.Invalid, Valid: t.Valid, Unknown: t.Unknown,
		NotExercised: t.NotExercised, Error: t.Error, Interrupted: t.Interrupted,
		MedianFirstAnomalyS: t.MedianFirstAnomalyS}
	for _, r := range runs {
		if r.Verdict == Invalid {
			seed := r.Seed
			s.FirstSeed = &seed
			break
		}
	}
	return s
}

// Exit codes of `check repro`.
const (
	// ReproNever: every run was valid; the anomaly did not reproduce.
	ReproNever = 0
	// ReproReproduced: at least one run was invalid, like `check run`'s
	// exit 1 (whatever the other runs were).
	ReproReproduced = 1
	// ReproUndecided: no run was invalid and some were not exercised or
	// unknown.
	ReproUndecided = 2
	// ReproError: no run was invalid and some ended in an error.
	ReproError = 3
	// ReproInterrupted: stopped by SIGINT or SIGTERM before it reproduced.
	ReproInterrupted = 130
)

// ExitCode is `check repro`'s exit code: 1 when the anomaly reproduced at
// least once; else 130 when interrupted, 3 when a run was an error, 2 when
// a run was not exercised or unknown, 0 when every run was valid.
func (s ReproSummary) ExitCode() int {
	switch {
	case s.Invalid > 0:
		return ReproReproduced
	case s.Interrupted > 0:
		return ReproInterrupted
	case s.Error > 0:
		return ReproError
	case s.NotExercised > 0 || s.Unknown > 0:
		return ReproUndecided
	}
	return ReproNever
}

// String is the summary line: "5/5 runs invalid; first failing seed 4242;
// median time to first anomaly 2.1 s".
func (s ReproSummary) String() string {
	done := s.Runs - s.Interrupted
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d runs invalid", s.Invalid, done)
	var rest []string
	for _, p := range []struct {
		n    int
		what string
	}{{s.Valid, "valid"}, {s.NotExercised, "not exercised"}, {s.Unknown, "unknown"}, {s.Error, "error"}, {s.Interrupted, "interrupted"}} {
		if p.n > 0 {
			rest = append(rest, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(rest) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(rest, ", "))
	}
	if s.FirstSeed != nil {
		fmt.Fprintf(&b, "; first failing seed %d", *s.FirstSeed)
	}
	if s.MedianFirstAnomalyS != nil {
		fmt.Fprintf(&b, "; median time to first anomaly %.1f s", *s.MedianFirstAnomalyS)
	}
	return b.String()
}
