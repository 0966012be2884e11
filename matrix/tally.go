package matrix

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Tally counts a cell's runs by verdict.
type Tally struct {
	Runs         int `json:"runs"`
	Valid        int `json:"valid"`
	Invalid      int `json:"invalid"`
	Unknown      int `json:"unknown"`
	NotExercised int `json:"not_exercised"`
	Error        int `json:"error"`
	Interrupted  int `json:"interrupted,omitempty"`
	// Missing counts the runs a merged matrix expected and did not find.
	Missing int `json:"missing,omitempty"`
	// Stuck counts the invalid runs with a stuck-lock anomaly.
	Stuck int `json:"stuck"`
	// Exercised counts the runs that tested something: valid, invalid and
	// unknown ones.
	Exercised int `json:"exercised"`
	// Detection is Invalid / Exercised (0 when nothing was exercised).
	Detection float64 `json:"detection"`
	// MedianFirstAnomalyS is the median time to the first anomaly over the
	// runs that had one, in seconds.
	MedianFirstAnomalyS *float64 `json:"median_first_anomaly_s,omitempty"`
	// MedianWallS is the median wall time of a run, in seconds.
	MedianWallS float64 `json:"median_wall_s"`
	// Windows counts the lost-lock windows of the cell's runs, and
	// WindowP99S is the 99th percentile of their lengths (nearest rank, as
	// the windows checker reports a run's), in seconds; absent when there
	// are none.
	Windows    int      `json:"windows,omitempty"`
	WindowP99S *float64 `json:"window_p99_s,omitempty"`
	// Reached counts, for each danger condition, the runs that reached
	// it (the cell's coverage); absent when no run reached any.
	Reached map[string]int `json:"reached,omitempty"`
}

// TallyRuns counts runs.
func TallyRuns(runs []Run) Tally {
	var t Tally
	var firsts, walls, windows []float64
	for _, r := range runs {
		t.Runs++
		windows = append(windows, r.WindowsS...)
		for name, n := range r.Reached {
			if n <= 0 {
				continue
			}
			if t.Reached == nil {
				t.Reached = make(map[string]int)
			}
			t.Reached[name]++
		}
		switch r.Verdict {
		case Valid:
			t.Valid++
		case Invalid:
			t.Invalid++
			if r.StuckLock() {
				t.Stuck++
			}
		case Unknown:
			t.Unknown++
		case NotExercised:
			t.NotExercised++
		case Interrupted:
			t.Interrupted++
		case Missing:
			t.Missing++
		default:
			t.Error++
		}
		if r.FirstAnomalyS != nil && r.Verdict == Invalid {
			firsts = append(firsts, *r.FirstAnomalyS)
		}
		if r.Verdict != Interrupted && r.Verdict != Missing {
			walls = append(walls, r.WallS)
		}
	}
	t.Exercised = t.Valid + t.Invalid + t.Unknown
	if t.Exercised > 0 {
		t.Detection = float64(t.Invalid) / float64(t.Exercised)
	}
	if m, ok := median(firsts); ok {
		t.MedianFirstAnomalyS = &m
	}
	t.MedianWallS, _ = median(walls)
	t.Windows = len(windows)
	if p, ok := nearestRank(windows, 0.99); ok {
		t.WindowP99S = &p
	}
	return t
}

// nearestRank returns the p-th quantile of xs by nearest rank (the
// smallest x with at least p of xs at or below it).
func nearestRank(xs []float64, p float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(math.Ceil(p*float64(len(s))))-1], true
}

// median returns the median of xs (the mean of the middle two for an even
// count).
func median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// Status is how a cell's tally compares with its expectation.
type Status string

// The statuses of a cell.
const (
	// Met: the cell expected S, U or L and got it.
	Met Status = "met"
	// Missed: the cell did not get what it expected, or a run was an
	// error.
	Missed Status = "missed"
	// NoExpectation: a D cell whose runs all ran.
	NoExpectation Status = "none"
	// Incomplete: the matrix was interrupted before every run of the cell
	// ended.
	Incomplete Status = "incomplete"
)

// Judge compares a tally with an expectation and says why when it
// missed.
//
//   - Any missing run (a merged matrix that lacks one) misses the cell:
//     what was not run was not met.
//   - Any error run misses the cell, whatever it expects: an error tested
//     nothing, and a nightly job must not read it as a pass.
//   - Not-exercised runs are counted apart: they are neither valid nor
//     invalid, and the rates below are over the exercised runs (valid,
//     invalid, unknown). A cell that expects S, U or L and has no
//     exercised run misses.
//   - S: every exercised run is valid (an unknown one misses).
//   - U: at least UnsafeRate of the exercised runs are invalid.
//   - L: at least UnsafeRate of the exercised runs are invalid with a
//     stuck-lock anomaly.
//   - D: no expectation.
func Judge(e Expect, t Tally) (Status, string) {
	switch {
	case t.Interrupted > 0:
		return Incomplete, fmt.Sprintf("%d of %d runs interrupted", t.Interrupted, t.Runs)
	case t.Missing > 0:
		return Missed, fmt.Sprintf("%d of %d runs missing (no shard has them, or their run directories are gone)", t.Missing, t.Runs)
	case t.Error > 0:
		return Missed, fmt.Sprintf("%d of %d runs ended in an error", t.Error, t.Runs)
	case e == Depends || e == FromCatalog || e == "":
		return NoExpectation, ""
	case t.Exercised == 0:
		return Missed, fmt.Sprintf("no exercised run (%d not exercised)", t.NotExercised)
	}
	need := func(hit int, what string) (Status, string) {
		if float64(hit) >= UnsafeRate*float64(t.Exercised) {
			return Met, ""
		}
		return Missed, fmt.Sprintf("%s in %d of %d exercised runs, want at least %.0f%%", what, hit, t.Exercised, UnsafeRate*100)
	}
	switch e {
	case Safe:
		if t.Valid == t.Exercised {
			return Met, ""
		}
		return Missed, fmt.Sprintf("valid in %d of %d exercised runs (%d invalid, %d unknown), want all", t.Valid, t.Exercised, t.Invalid, t.Unknown)
	case Unsafe:
		return need(t.Invalid, "invalid")
	case Stuck:
		return need(t.Stuck, "a stuck lock")
	}
	return Missed, fmt.Sprintf("unknown expectation %q", e)
}

// Unreached returns the conditions of require that no run of t reached.
func Unreached(require []string, t Tally) []string {
	var out []string
	for _, n := range require {
		if t.Reached[n] == 0 {
			out = append(out, n)
		}
	}
	return out
}

// JudgeCell is Judge, and a cell that requires a danger condition none of
// its runs reached misses too ("never reached NAME"), whatever it
// expects: the runs did not test what the cell is for. A cell that missed
// or was cut short for another reason says that reason first.
func JudgeCell(c Cell, t Tally) (Status, string, []string) {
	st, why := Judge(c.Expect, t)
	un := Unreached(c.Require, t)
	if len(un) == 0 || st == Incomplete || t.Exercised+t.NotExercised == 0 {
		return st, why, un
	}
	never := "never reached " + strings.Join(un, ", ")
	if st == Missed {
		return st, why + "; " + never, un
	}
	return Missed, never, un
}

// Detected reports whether a run found what a cell expecting e looks for:
// an invalid verdict (with a stuck lock for L).
func Detected(e Expect, r Run) bool {
	if e == Stuck {
		return r.Verdict == Invalid && r.StuckLock()
	}
	return r.Verdict == Invalid
}
