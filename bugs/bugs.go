// Package bugs is lockcheck's library of public lock-loss reports it
// reproduces: one registered record per report (a file each in this
// package), with the command that runs it here, how often it failed and
// whether and where it was fixed. docs/bugs.md is generated from it
// (`check list --markdown bugs`), `check list bugs` lists it and `check
// repro --bug ID` runs a report's reproducer.
//
// It imports the standard library and internal/suggest only.
package bugs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Bug is one public report of a lock loss, reproduced.
type Bug struct {
	// ID names the report on the command line: the tracker and number
	// where it has one (etcd-22082), else a short name.
	ID string
	// Order is its row number on docs/bugs.md.
	Order int
	// Title says in a line what goes wrong.
	Title string
	// Runs are the ways it runs here: the first on the version that has
	// the failure, then other components or versions (a library, a fixed
	// release).
	Runs []Run
	// What explains what the reproducer does and shows, in markdown.
	What string
	// Regression marks a report fixed in every release of the component
	// that runs here: its first run checks that the fix holds (valid
	// expected) instead of reproducing the failure.
	Regression bool
}

// Run is one way a report runs here.
type Run struct {
	// Report is the report cell of its row, in markdown: the thread, the
	// analysis or the documentation it comes from ("the same" after the
	// first run).
	Report string
	// Component is what runs, with its version ("etcd 3.4.23 (Debian)").
	Component string
	// Args are the `check run` flags of the reproducer, without --seed.
	Args []string
	// Invalid is how many of ten runs at seeds 1..10 exited 1, as measured
	// ("9/10", "0/10 (10 valid)").
	Invalid string
	// FixedIn says whether and where the failure was fixed, in markdown.
	FixedIn string
	// Fixed marks a run on a version that has the fix: expected valid.
	Fixed bool
}

// Command returns the run's reproducer as a `check run` command line.
func (r Run) Command() string { return "check run " + strings.Join(r.Args, " ") }

// bugs is the library, filled by each report's file.
var bugs []Bug

// register adds a report at init; a duplicate id or order, a report with
// no run or a run with no command is a programming error.
func register(b Bug) {
	if b.ID == "" || len(b.Runs) == 0 {
		panic(fmt.Sprintf("bugs: report %q: an id and a run are required", b.ID))
	}
	for _, r := range b.Runs {
		if len(r.Args) == 0 {
			panic(fmt.Sprintf("bugs: report %s: a run with no command", b.ID))
		}
	}
	for _, o := range bugs {
		if o.ID == b.ID || o.Order == b.Order {
			panic(fmt.Sprintf("bugs: report %s (row %d) registered twice", b.ID, b.Order))
		}
	}
	bugs = append(bugs, b)
}

// All returns the reports in row order.
func All() []Bug {
	out := append([]Bug(nil), bugs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Order < out[j].Order })
	return out
}

// Find returns the report called id, or an error naming the closest.
func Find(id string) (Bug, error) {
	var ids []string
	for _, b := range All() {
		if b.ID == id {
			return b, nil
		}
		ids = append(ids, b.ID)
	}
	return Bug{}, suggest.Unknown("bug report", id, ids)
}

// Broken returns the report's first run: the version with the failure.
func (b Bug) Broken() Run { return b.Runs[0] }

// FixedRun returns the report's run on a fixed version, if it has one.
func (b Bug) FixedRun() (Run, bool) {
	for _, r := range b.Runs {
		if r.Fixed {
			return r, true
		}
	}
	return Run{}, false
}

// RowLabel is the row number of the report's run i on docs/bugs.md: 14,
// then 14b, 14c for its other runs.
func (b Bug) RowLabel(i int) string {
	if i == 0 {
		return fmt.Sprint(b.Order)
	}
	return fmt.Sprintf("%d%c", b.Order, 'a'+i)
}
