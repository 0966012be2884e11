package matrix

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Version is the version of the matrix.json format.
const Version = 1

// Matrix is a run matrix with its results: what `check matrix` stores as
// store/matrix/<yyyymmddThhmmss>/matrix.json and writes with --json.
type Matrix struct {
	Version int       `json:"version"`
	Started time.Time `json:"started"`
	// WallS is the whole matrix's wall time, in seconds.
	WallS float64 `json:"wall_s"`
	// Command is the command line that ran the matrix.
	Command []string `json:"command"`
	// Seeds is the seed list, as --seeds takes it.
	Seeds string `json:"seeds"`
	Jobs  int    `json:"jobs"`
	// Dir is the matrix's own directory, relative to the store.
	Dir string `json:"dir,omitempty"`
	// Plan is, for a shard (--shard I/N), the whole matrix it is part of
	// and which part it ran; `check matrix merge` reads it. Absent for a
	// matrix that ran all of its cells and seeds.
	Plan *Plan `json:"plan,omitempty"`
	// Merged lists, for a merged matrix, the shard matrices it was merged
	// from, as they were given.
	Merged []string     `json:"merged,omitempty"`
	Cells  []CellResult `json:"cells"`
}

// CellResult is a cell with its runs and how they compare with its
// expectation.
type CellResult struct {
	Cell
	Runs   []Run  `json:"runs"`
	Tally  Tally  `json:"tally"`
	Status Status `json:"status"`
	// Why says why the cell missed its expectation.
	Why string `json:"why,omitempty"`
	// Unreached are the conditions the cell requires that none of its
	// runs reached.
	Unreached []string `json:"unreached,omitempty"`
}

// Coverage says which danger conditions the cell's runs reached and in
// how many of its runs: "holder-cut-off 10/10, release-reply-lost 3/10",
// required ones first, those never reached as 0/N; "" when none was
// required or reached.
func (c CellResult) Coverage() string {
	var parts []string
	for _, n := range c.Require {
		parts = append(parts, fmt.Sprintf("%s %d/%d", n, c.Tally.Reached[n], c.Tally.Runs))
	}
	var rest []string
	for n := range c.Tally.Reached {
		if !slices.Contains(c.Require, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		parts = append(parts, fmt.Sprintf("%s %d/%d", n, c.Tally.Reached[n], c.Tally.Runs))
	}
	return strings.Join(parts, ", ")
}

// Judge tallies every cell's runs and compares them with its expectation.
func (m *Matrix) Judge() {
	for i := range m.Cells {
		c := &m.Cells[i]
		c.Tally = TallyRuns(c.Runs)
		c.Status, c.Why, c.Unreached = JudgeCell(c.Cell, c.Tally)
	}
}

// Exit codes of `check matrix`.
const (
	ExitMet         = 0
	ExitMissed      = 1
	ExitError       = 3
	ExitInterrupted = 130
)

// ExitCode is `check matrix`'s exit code for a judged matrix: 130 when it
// was interrupted, 3 when every run ended in an error (nothing was tested:
// a broken setup, not a lock verdict), 1 when a cell missed its
// expectation, else 0.
func (m *Matrix) ExitCode() int {
	runs, errs := 0, 0
	exit := ExitMet
	for _, c := range m.Cells {
		runs += c.Tally.Runs
		errs += c.Tally.Error
		switch c.Status {
		case Incomplete:
			return ExitInterrupted
		case Missed:
			exit = ExitMissed
		}
	}
	if runs > 0 && errs == runs {
		return ExitError
	}
	return exit
}

// Missed returns the cells that missed their expectation.
func (m *Matrix) Missed() []CellResult {
	var out []CellResult
	for _, c := range m.Cells {
		if c.Status == Missed {
			out = append(out, c)
		}
	}
	return out
}

// CellsKey identifies the matrix's cells (not its seeds or results): two
// matrices with the same key ran the same cells.
func (m *Matrix) CellsKey() string {
	keys := make([]string, len(m.Cells))
	for i, c := range m.Cells {
		keys[i] = c.Key()
	}
	return strings.Join(keys, "\x01")
}

// Summary is a cell's result in a few words: "U 9/10", "S 10/10",
// "D 7/10 invalid", followed by the not-exercised and error counts.
func (c CellResult) Summary() string {
	t := c.Tally
	var s string
	switch c.Expect {
	case Safe:
		s = fmt.Sprintf("S %d/%d", t.Valid, t.Exercised)
	case Unsafe:
		s = fmt.Sprintf("U %d/%d", t.Invalid, t.Exercised)
	case Stuck:
		s = fmt.Sprintf("L %d/%d", t.Stuck, t.Exercised)
	default:
		s = fmt.Sprintf("D %d/%d invalid", t.Invalid, t.Exercised)
	}
	if c.Status == Missed && c.Expect != Depends && c.Expect != FromCatalog {
		s = strings.Replace(s, " ", "? ", 1)
	}
	return s + c.extra()
}

// extra is ", 2 not exercised, 1 error" as the tally has them.
func (c CellResult) extra() string {
	t := c.Tally
	s := ""
	if t.Unknown > 0 && c.Expect != Safe {
		s += fmt.Sprintf(", %d unknown", t.Unknown)
	}
	if t.NotExercised > 0 {
		s += fmt.Sprintf(", %d not exercised", t.NotExercised)
	}
	if t.Error > 0 {
		s += fmt.Sprintf(", %d error", t.Error)
	}
	if t.Interrupted > 0 {
		s += fmt.Sprintf(", %d interrupted", t.Interrupted)
	}
	if t.Missing > 0 {
		s += fmt.Sprintf(", %d missing", t.Missing)
	}
	return s
}

// Outcome is what a cell's result would look like in another matrix, for
// telling whether it changed: the verdict counts and the status.
func (c CellResult) Outcome() string {
	t := c.Tally
	return fmt.Sprintf("%s valid %d invalid %d (stuck %d) unknown %d not-exercised %d error %d missing %d",
		c.Status, t.Valid, t.Invalid, t.Stuck, t.Unknown, t.NotExercised, t.Error, t.Missing)
}
