package matrix

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// UntilCovered runs more seeds of the cells whose required danger
// conditions (Cell.Require) no run reached, one seed more a round for each
// such cell, until each has reached them all, has maxSeeds runs, or ctx is
// done. The new seeds follow the largest seed m ran; their runs join their
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
		for i, c := range m.Cells {
			if len(c.Unreached) > 0 && c.Tally.Error == 0 && c.Tally.Interrupted == 0 && len(c.Runs) < maxSeeds {
				cells = append(cells, c.Cell)
				at = append(at, i)
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
				fmt.Fprintf(progress, "until-covered: %s reached %s at seed %d, after %d runs\n", c.Name(), strings.Join(c.Require, ", "), next-1, len(c.Runs))
			case len(c.Runs) >= maxSeeds:
				fmt.Fprintf(progress, "until-covered: %s never reached %s in %d runs (--max-seeds)\n", c.Name(), strings.Join(c.Unreached, ", "), len(c.Runs))
			}
		}
	}
	return added
}
