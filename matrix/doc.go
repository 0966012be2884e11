// Package matrix runs verdict matrices: cells (a row, a column, an expected
// verdict and the `check run` flags that make the cell) over a list of
// seeds, each run its own `check run` subprocess with its own store, and
// tallies what the runs found against what each cell expects. It reads the
// cells format (ParseCells) and seed lists (ParseSeeds), carries the
// built-in catalog of expected verdicts (Catalog), and writes a matrix as a
// text table, JUnit XML, JSON (the stored matrix.json) and a markdown table
// for docs/verdicts.md. It also holds the pure parts of `check repro`:
// seed derivation and the reproduction summary.
//
// matrix imports only the standard library and scenarios (for the named
// scenarios' expected verdicts); it reads a run's results.json by its JSON
// fields, not through checker, so that report can import it.
package matrix
