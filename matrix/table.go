package matrix

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes m as the text table `check matrix` prints: one line per
// cell with its expectation, verdict counts, detection rate (invalid runs
// of the exercised ones), median time to first anomaly, the 99th
// percentile of its lost-lock windows, median wall time per run and
// status, then the coverage table (writeCoverage), then why each missed
// cell missed.
func WriteTable(w io.Writer, m *Matrix) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\texpect\tvalid\tinvalid\tunknown\tnot exercised\terror\tdetection\tfirst anomaly\twindow p99\twall/run\tstatus")
	for _, c := range m.Cells {
		t := c.Tally
		first := "-"
		if t.MedianFirstAnomalyS != nil {
			first = fmt.Sprintf("%.1fs", *t.MedianFirstAnomalyS)
		}
		window := "-"
		if t.WindowP99S != nil {
			window = fmt.Sprintf("%.2fs", *t.WindowP99S)
		}
		det := "-"
		if t.Exercised > 0 {
			det = fmt.Sprintf("%.0f%%", 100*t.Detection)
		}
		invalid := fmt.Sprint(t.Invalid)
		if t.Stuck > 0 {
			invalid += fmt.Sprintf(" (%d stuck)", t.Stuck)
		}
		exp := string(c.Expect)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%.0fs\t%s\n", c.Name(), exp,
			t.Valid, invalid, t.Unknown, t.NotExercised, t.Error, det, first, window, t.MedianWallS, c.Status)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	var b strings.Builder
	writeCoverage(&b, m)
	for _, c := range m.Missed() {
		fmt.Fprintf(&b, "missed: %s (%s): %s\n", c.Name(), c.Expect, c.Why)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCoverage writes the coverage table: for each cell whose runs
// reached a danger condition or that requires one, the conditions and in
// how many of its runs each was reached (CellResult.Coverage); nothing
// when no cell has any.
func writeCoverage(w io.Writer, m *Matrix) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := false
	for _, c := range m.Cells {
		cov := c.Coverage()
		if cov == "" {
			continue
		}
		if !head {
			fmt.Fprintln(tw, "\ncoverage\tdanger conditions reached (runs that reached each, of the cell's runs; required ones first)")
			head = true
		}
		fmt.Fprintf(tw, "%s\t%s\n", c.Name(), cov)
	}
	_ = tw.Flush()
}
