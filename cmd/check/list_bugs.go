package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lockcheck/lockcheck/bugs"
)

// printBugs prints `check list bugs`: each reproduced report, its id, what
// goes wrong, its reproducer and how often it failed.
func printBugs(stdout io.Writer) error {
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "bug reports (check repro --bug ID --count 10 runs one; docs/bugs.md tells each):")
	for _, b := range bugs.All() {
		fmt.Fprintf(w, "  %s\t%s\n", b.ID, b.Title)
		for _, r := range b.Runs {
			fmt.Fprintf(w, "  \t  %s: %s (invalid %s)\n", r.Component, r.Command(), r.Invalid)
		}
	}
	return w.Flush()
}

// The bug library page.

func bugsIntro() string {
	return fmt.Sprintf("lockcheck reproduces %s of lock losses that people reported in public trackers and analyses. "+
		"`check list bugs` lists them; `check repro --bug ID --count 10` runs one's reproducer at ten seeds, and the fixed version's "+
		"beside it where one runs here.", count(len(bugs.All()), "report", "reports"))
}

func bugsTables() (map[string]string, error) {
	var rows [][]string
	var what strings.Builder
	for _, b := range bugs.All() {
		for i, r := range b.Runs {
			rows = append(rows, []string{b.RowLabel(i), code(b.ID), r.Report, r.Component, code(strings.Join(r.Args, " ")), r.Invalid, r.FixedIn})
		}
		fmt.Fprintf(&what, "%d. **%s.** (`%s`) %s\n", b.Order, b.Title, b.ID, b.What)
	}
	return map[string]string{
		"bugs": table([]string{"#", "id", "report", "component, version here", "command", "invalid (exit 1) of 10", "fixed in"}, rows),
		"what": what.String(),
	}, nil
}
