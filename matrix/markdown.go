package matrix

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes m as a markdown table ready for docs/verdicts.md:
// one row per matrix row, one column per matrix column (in the order they
// first appear), each cell its Summary (U and L cells that met their
// expectation in bold, a missed one with a ?), the seeds that went the
// other way, the 99th percentile of its runs' lost-lock windows when they
// had any, and a line saying how it was measured; then, when any cell
// reached or requires a danger condition, a table of each cell's coverage.
func WriteMarkdown(w io.Writer, m *Matrix) error {
	var rows, cols []string
	at := make(map[[2]string]CellResult)
	seenRow, seenCol := make(map[string]bool), make(map[string]bool)
	for _, c := range m.Cells {
		if !seenRow[c.Row] {
			seenRow[c.Row] = true
			rows = append(rows, c.Row)
		}
		if !seenCol[c.Column] {
			seenCol[c.Column] = true
			cols = append(cols, c.Column)
		}
		at[[2]string{c.Row, c.Column}] = c
	}
	var b strings.Builder
	b.WriteString("| design |")
	for _, col := range cols {
		fmt.Fprintf(&b, " %s |", mdEscape(col))
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(cols)))
	b.WriteString("\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "| `%s` |", mdEscape(row))
		for _, col := range cols {
			c, ok := at[[2]string{row, col}]
			if !ok {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %s |", mdEscape(markdownCell(c)))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nMeasured with `%s` (seeds %s, %d at a time) on %s; %s.\n",
		strings.Join(m.Command, " "), m.Seeds, m.Jobs, m.Started.UTC().Format("2006-01-02"),
		"S: valid on every exercised run; U, L: invalid (L: with a stuck lock) on at least 90 % of them; "+
			"not-exercised runs are counted apart and are neither")
	var cov []string
	for _, c := range m.Cells {
		if s := c.Coverage(); s != "" {
			cov = append(cov, fmt.Sprintf("| `%s` | %s | %s |", mdEscape(c.Row), mdEscape(c.Column), mdEscape(s)))
		}
	}
	if len(cov) > 0 {
		b.WriteString("\nDanger conditions reached (runs that reached each, of the cell's runs; required ones first):\n\n" +
			"| design | column | reached |\n|---|---|---|\n" + strings.Join(cov, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// markdownCell is one cell of the markdown table.
func markdownCell(c CellResult) string {
	s := c.Summary()
	if (c.Expect == Unsafe || c.Expect == Stuck) && c.Status == Met {
		head, rest, _ := strings.Cut(s, ",")
		s = "**" + head + "**"
		if rest != "" {
			s += "," + rest
		}
	}
	var other []string
	for _, r := range c.Runs {
		switch {
		case r.Verdict == NotExercised || r.Verdict == Error || r.Verdict == Interrupted || r.Verdict == Missing:
		case c.Expect == Safe && r.Verdict != Valid:
			other = append(other, fmt.Sprint(r.Seed))
		case (c.Expect == Unsafe || c.Expect == Stuck) && !Detected(c.Expect, r):
			other = append(other, fmt.Sprint(r.Seed))
		}
	}
	if len(other) > 0 && len(other) <= 5 {
		word := "seed"
		if len(other) > 1 {
			word = "seeds"
		}
		s += fmt.Sprintf(" (not: %s %s)", word, strings.Join(other, ", "))
	}
	if p := c.Tally.WindowP99S; p != nil {
		s += fmt.Sprintf("; window p99 %.2f s", *p)
	}
	return s
}

// mdEscape keeps a table cell one cell.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
