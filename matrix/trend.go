package matrix

import (
	"fmt"
	"slices"
	"sort"
)

// The labels of a cell across stored matrices (Diff and Trend).
const (
	// NewMiss: the cell met its expectation in the earlier matrix and
	// missed it in the later one.
	NewMiss = "new miss"
	// Fixed: the cell missed in the earlier matrix and met in the later.
	Fixed = "fixed"
	// Flaky: at the same seeds and flags, a seed's verdict changed between
	// nights while the cell's status stayed, or the verdicts changed more
	// than once over the nights shown.
	Flaky = "flaky"
	// Changed: the cell's outcome (status or verdict counts) changed
	// otherwise.
	Changed = "changed"
	// OnlyBefore and OnlyAfter: the cell is in one matrix only.
	OnlyBefore = "only in the first"
	OnlyAfter  = "only in the second"
)

// Change is how one cell differs between two matrices.
type Change struct {
	// Cell is the cell's name, "ROW COLUMN": cells are matched by name,
	// so a cell whose flags changed is still the same cell.
	Cell string
	// Kind is NewMiss, Fixed, Changed, OnlyBefore or OnlyAfter.
	Kind string
	// Was and Now are the cell's Summary and status in each matrix ("" when
	// absent).
	Was, Now string
	// Flags is set when the cell ran with other flags in the second.
	Flags bool
	// Seeds are the seeds whose verdict changed, when both matrices ran
	// the same seeds.
	Seeds []uint64
}

// String is the change as `check matrix diff` prints it.
func (c Change) String() string {
	s := fmt.Sprintf("%s: %s", c.Kind, c.Cell)
	switch {
	case c.Was != "" && c.Now != "":
		s += fmt.Sprintf(" (was %s, now %s)", c.Was, c.Now)
	case c.Was != "":
		s += fmt.Sprintf(" (was %s)", c.Was)
	case c.Now != "":
		s += fmt.Sprintf(" (now %s)", c.Now)
	}
	if len(c.Seeds) > 0 {
		s += "; verdict changed at seed"
		if len(c.Seeds) > 1 {
			s += "s"
		}
		s += " " + FormatSeeds(c.Seeds)
	}
	if c.Flags {
		s += "; its flags changed"
	}
	return s
}

// Diff compares two stored matrices cell by cell, by name: a cell that
// met in a and misses in b is a NewMiss, the reverse is Fixed, another
// change (of status, verdict counts, flags, or at the same seeds of any
// seed's verdict) is Changed; cells in one only are listed too. Cells
// come in a's order, then b's new ones.
func Diff(a, b *Matrix) []Change {
	after := make(map[string]CellResult, len(b.Cells))
	for _, c := range b.Cells {
		after[c.Name()] = c
	}
	seen := make(map[string]bool)
	var out []Change
	for _, p := range a.Cells {
		seen[p.Name()] = true
		q, ok := after[p.Name()]
		if !ok {
			out = append(out, Change{Cell: p.Name(), Kind: OnlyBefore, Was: statusLine(p)})
			continue
		}
		ch := Change{Cell: p.Name(), Was: statusLine(p), Now: statusLine(q), Flags: !slices.Equal(p.Args, q.Args)}
		if a.Seeds == b.Seeds {
			ch.Seeds = changedSeeds(p, q)
		}
		switch {
		case p.Status == Met && q.Status == Missed:
			ch.Kind = NewMiss
		case p.Status == Missed && q.Status == Met:
			ch.Kind = Fixed
		case p.Outcome() != q.Outcome() || ch.Flags || len(ch.Seeds) > 0:
			ch.Kind = Changed
		default:
			continue
		}
		out = append(out, ch)
	}
	for _, q := range b.Cells {
		if !seen[q.Name()] {
			out = append(out, Change{Cell: q.Name(), Kind: OnlyAfter, Now: statusLine(q)})
		}
	}
	return out
}

// NewMisses returns the changes that are NewMiss.
func NewMisses(changes []Change) []Change {
	var out []Change
	for _, c := range changes {
		if c.Kind == NewMiss {
			out = append(out, c)
		}
	}
	return out
}

// statusLine is "U 9/10 met".
func statusLine(c CellResult) string { return c.Summary() + " " + string(c.Status) }

// Trend is every cell's results across stored matrices, oldest first.
type Trend struct {
	// Nights are the matrices, oldest first. Shards (--shard) are left
	// out: a shard is part of a night, its merge is the night.
	Nights []*Matrix
	// Cells are one row per cell name, in the order they first appear,
	// newest matrix first.
	Cells []TrendCell
}

// TrendCell is one cell across the nights.
type TrendCell struct {
	Name string
	// At holds the cell in each night (aligned with Trend.Nights), nil
	// where that night did not run it.
	At []*CellResult
	// Labels are NewMiss or Fixed (the newest night against the one
	// before it that ran the cell), and Flaky.
	Labels []string
}

// NewTrend builds the trend of the matrices ms (in any order; List gives
// them newest first).
func NewTrend(ms []*Matrix) Trend {
	var t Trend
	for _, m := range ms {
		if m.Plan == nil || m.Plan.Shard.All() {
			t.Nights = append(t.Nights, m)
		}
	}
	sort.SliceStable(t.Nights, func(i, j int) bool {
		if !t.Nights[i].Started.Equal(t.Nights[j].Started) {
			return t.Nights[i].Started.Before(t.Nights[j].Started)
		}
		return t.Nights[i].Dir < t.Nights[j].Dir
	})
	row := make(map[string]int)
	for n := len(t.Nights) - 1; n >= 0; n-- {
		for i := range t.Nights[n].Cells {
			c := &t.Nights[n].Cells[i]
			k, ok := row[c.Name()]
			if !ok {
				k = len(t.Cells)
				row[c.Name()] = k
				t.Cells = append(t.Cells, TrendCell{Name: c.Name(), At: make([]*CellResult, len(t.Nights))})
			}
			t.Cells[k].At[n] = c
		}
	}
	for i := range t.Cells {
		t.Cells[i].Labels = labels(t.Nights, t.Cells[i].At)
	}
	return t
}

// labels labels one cell across the nights (see TrendCell.Labels).
func labels(nights []*Matrix, at []*CellResult) []string {
	var out []string
	var present []int
	for n, c := range at {
		if c != nil {
			present = append(present, n)
		}
	}
	if k := len(present); k >= 2 {
		p, q := at[present[k-2]], at[present[k-1]]
		switch {
		case p.Status == Met && q.Status == Missed:
			out = append(out, NewMiss)
		case p.Status == Missed && q.Status == Met:
			out = append(out, Fixed)
		}
	}
	changes, quiet := 0, false
	for k := 1; k < len(present); k++ {
		a, b := present[k-1], present[k]
		if nights[a].Seeds != nights[b].Seeds || !slices.Equal(at[a].Args, at[b].Args) {
			continue // not the same runs: nothing to compare
		}
		if len(changedSeeds(*at[a], *at[b])) > 0 {
			changes++
			if at[a].Status == at[b].Status {
				quiet = true
			}
		}
	}
	if quiet || changes >= 2 {
		out = append(out, Flaky)
	}
	return out
}

// changedSeeds returns the seeds that ended in both a and b (not
// missing, not interrupted) with different verdicts, in b's order.
func changedSeeds(a, b CellResult) []uint64 {
	ended := func(r Run) bool { return r.Verdict != Missing && r.Verdict != Interrupted }
	was := make(map[uint64]Verdict, len(a.Runs))
	for _, r := range a.Runs {
		if ended(r) {
			was[r.Seed] = r.Verdict
		}
	}
	var out []uint64
	for _, r := range b.Runs {
		if v, ok := was[r.Seed]; ok && ended(r) && v != r.Verdict {
			out = append(out, r.Seed)
		}
	}
	return out
}
