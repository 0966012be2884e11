package matrix

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
)

// UntilCovered runs more seeds of the cells whose required danger
// conditions (Cell.Require) no run reached, one seed more a round for each
// such cell, until each has reached them all, has maxSeeds runs, or ctx is
// done. Where a condition it lacks has a trigger that aims at it
// (checker.Condition.Aim), the new runs fire the cell's faults at it
// (Aim): the run is the cell's, with its faults aimed, and its verdict
// counts as any other (an S cell whose aimed run finds an anomaly fails).
// The new seeds follow the largest seed m ran; their runs join their
// cells in m, which is judged again after each round. first is the number
// the first new run's directory takes (the plan's item count), so none
// reuses a name. It prints a line on progress for each cell it is done
// with, and returns how many runs it added.
func (x *Executor) UntilCovered(ctx context.Context, m *Matrix, first, maxSeeds int, progress io.Writer) int {
	var next uint64
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			next = max(next, r.Seed+1)
		}
	}
	added := 0
	for ctx.Err() == nil {
		var cells []Cell
		var at []int
		var aims []string
		for i, c := range m.Cells {
			if len(c.Unreached) > 0 && c.Tally.Error == 0 && c.Tally.Interrupted == 0 && len(c.Runs) < maxSeeds {
				aimed, spec := Aim(c.Cell, c.Unreached)
				cells = append(cells, aimed)
				at = append(at, i)
				aims = append(aims, spec)
			}
		}
		if len(cells) == 0 {
			break
		}
		p := Plan{Cells: cells}
		items := make([]Item, len(cells))
		for i := range cells {
			items[i] = Item{N: first + added + i, Cell: i, Seed: next}
		}
		for i, res := range x.RunItems(ctx, p, items) {
			for k := range res.Runs {
				res.Runs[k].Aimed = aims[i]
			}
			c := &m.Cells[at[i]]
			c.Runs = append(c.Runs, res.Runs...)
		}
		added += len(items)
		next++
		m.Judge()
		for _, i := range at {
			c := m.Cells[i]
			switch {
			case len(c.Unreached) == 0:
				fmt.Fprintf(progress, "until-covered: %s reached %s at seed %d, after %d runs%s\n", c.Name(), strings.Join(c.Require, ", "), next-1, len(c.Runs), aimedBy(c.Runs))
			case len(c.Runs) >= maxSeeds:
				fmt.Fprintf(progress, "until-covered: %s never reached %s in %d runs (--max-seeds)%s\n", c.Name(), strings.Join(c.Unreached, ", "), len(c.Runs), aimedBy(c.Runs))
			}
		}
	}
	return added
}

// aimedBy says how many of runs were aimed, and with what: " (3 aimed:
// --nemesis pause@grant+5ms:lease+500ms)", "" for none.
func aimedBy(runs []Run) string {
	n, spec := 0, ""
	for _, r := range runs {
		if r.Aimed != "" {
			n, spec = n+1, r.Aimed
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d aimed: --nemesis %s)", n, spec)
}

// Aim returns c with its faults fired at the first of the conditions
// unreached that a trigger aims at (checker.Condition.Aim), and the
// --nemesis it runs with then: each plain kind of its --nemesis (one with
// no trigger of its own) takes the trigger, pause becoming
// pause@grant+5ms:lease+500ms. It returns c itself and "" when none of
// the conditions has an aim, or c has no plain kind to aim (no --nemesis,
// none, a named scenario, faults already on triggers).
func Aim(c Cell, unreached []string) (Cell, string) {
	var aim string
	for _, name := range unreached {
		if cond, ok := checker.ConditionNamed(name); ok && cond.Aim != "" {
			aim = cond.Aim
			break
		}
	}
	if aim == "" || c.Scenario() != "" {
		return c, ""
	}
	args := slices.Clone(c.Args)
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !isFlag(args[i]) || name != "nemesis" {
			continue
		}
		at := i
		if !inline {
			if at = i + 1; at >= len(args) {
				return c, ""
			}
			value = args[at]
		}
		aimed, ok := aimSpec(value, aim)
		if !ok {
			return c, ""
		}
		if inline {
			args[i] = "--nemesis=" + aimed
		} else {
			args[at] = aimed
		}
		out := c
		out.Args = args
		return out, aimed
	}
	return c, ""
}

// aimSpec gives each plain kind of the --nemesis value spec the trigger
// aim, and reports whether it gave one any.
func aimSpec(spec, aim string) (string, bool) {
	parts := strings.Split(spec, ",")
	any := false
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || p == "none" || strings.Contains(p, "@") {
			continue
		}
		parts[i], any = p+"@"+aim, true
	}
	return strings.Join(parts, ","), any
}
