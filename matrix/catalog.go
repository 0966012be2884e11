package matrix

import (
	_ "embed"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/scenarios"
)

//go:embed catalog.txt
var catalogText string

// Catalog holds expected verdicts, looked up by a cell's flags.
type Catalog struct {
	cells []Cell
}

// DefaultCatalog returns the built-in catalog (catalog.txt) with every named
// scenario's expectation, unfenced and fenced, added.
func DefaultCatalog() (Catalog, error) {
	cells, err := ParseCells(strings.NewReader(catalogText), "catalog.txt")
	if err != nil {
		return Catalog{}, err
	}
	for _, s := range scenarios.All() {
		if e, err := ParseExpect(s.Want); err == nil {
			cells = append(cells, Cell{Row: s.Name, Column: "scenario", Expect: e, Args: []string{"--scenario", s.Name}})
		}
		if e, err := ParseExpect(s.WantFenced); err == nil {
			cells = append(cells, Cell{Row: s.Name, Column: "scenario-fenced", Expect: e, Args: []string{"--scenario", s.Name, "--fencing"}})
		}
	}
	return Catalog{cells: cells}, nil
}

// Cells returns the catalog's cells.
func (c Catalog) Cells() []Cell { return append([]Cell(nil), c.cells...) }

// ignored are the flags a catalog lookup leaves out: they change how long
// or how much a run does, not what it should find.
var ignored = map[string]bool{"time": true, "stock": true, "check-timeout": true, "stop-on-anomaly": true}

// Lookup returns the expectation of a cell run with args, and whether the
// catalog has one. Flags match by value (--fencing and --fencing=true are
// the same), in any order, leaving out ignored ones.
func (c Catalog) Lookup(args []string) (Expect, bool) {
	cell, ok := c.LookupCell(args)
	if !ok {
		return Depends, false
	}
	return cell.Expect, true
}

// LookupCell returns the catalog's cell run with args (its expectation
// and the danger conditions it requires), as Lookup matches it.
func (c Catalog) LookupCell(args []string) (Cell, bool) {
	want := significant(args)
	for _, cell := range c.cells {
		if significant(cell.Args) == want {
			return cell, true
		}
	}
	return Cell{}, false
}

// significant is a canonical form of the flags that matter to a lookup.
func significant(args []string) string {
	m := flagMap(args)
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if ignored[k] || (k == "fencing" && v == "false") {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + "\x00")
	}
	return b.String()
}

// Resolve gives every cell that expects ? (FromCatalog) the catalog's
// expectation, D when it has none, and the conditions the catalog's cell
// requires when it names none itself.
func (c Catalog) Resolve(cells []Cell) {
	for i := range cells {
		if cells[i].Expect != FromCatalog {
			continue
		}
		cells[i].Expect = Depends
		if cat, ok := c.LookupCell(cells[i].Args); ok {
			cells[i].Expect = cat.Expect
			if len(cells[i].Require) == 0 {
				cells[i].Require = cat.Require
			}
		}
	}
}

// Grid returns the cells of rows x columns: row is the --lock value,
// column the --nemesis value, extra flags added to each, expectations and
// required conditions from the catalog (D where it has none).
func (c Catalog) Grid(locks, nemeses, extra []string) []Cell {
	var cells []Cell
	for _, l := range locks {
		for _, n := range nemeses {
			args := append([]string{"--lock", l, "--nemesis", n}, extra...)
			cell := Cell{Row: l, Column: n, Expect: Depends, Args: args}
			if cat, ok := c.LookupCell(args); ok {
				cell.Expect, cell.Require = cat.Expect, cat.Require
			}
			cells = append(cells, cell)
		}
	}
	return cells
}
