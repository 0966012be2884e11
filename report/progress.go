package report

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Snapshot is the state of a running test, as the runner sees it.
type Snapshot struct {
	// Elapsed is the time since the workload started; Total the configured
	// test time.
	Elapsed, Total time.Duration
	// Grants is the number of acquires that completed ok so far.
	Grants int
	// Anomalies counts early signs of anomalies: the runner counts grants
	// made while another worker still held the same lock. The line shows it
	// as "while held"; the checkers decide after the run.
	Anomalies int
	// Nemesis describes the faults in force now, "" when none.
	Nemesis string
}

// maxNemesisText bounds the fault description in a status line.
const maxNemesisText = 60

// plainEvery is how often a Progress that writes to a file or a pipe prints
// a line.
const plainEvery = 5 * time.Second

// Progress prints the progress of a run. On a terminal it keeps one status
// line up to date (carriage return and clear to end of line); elsewhere (a
// log file, CI) it prints a plain line at most every 5 s of run time, so
// a log is not flooded. Its methods are safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	printed bool          // a line has been written
	open    bool          // tty: the status line has no newline yet
	last    time.Duration // non-tty: Elapsed of the last line printed
}

// NewProgress returns a Progress that writes to w; tty says w is a terminal
// (see IsTerminal).
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty}
}

// Update shows s. The runner calls it about every 250 ms. Rate limiting
// uses s.Elapsed, not the wall clock, so output depends only on the
// snapshots.
func (p *Progress) Update(s Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", progressLine(s))
		p.printed, p.open = true, true
		return
	}
	// Print the first snapshot, then one every plainEvery, and the first
	// one that reaches the end of the test time.
	due := !p.printed || s.Elapsed-p.last >= plainEvery || (s.Elapsed >= s.Total && p.last < s.Total)
	if !due {
		return
	}
	fmt.Fprintln(p.w, progressLine(s))
	p.printed, p.last = true, s.Elapsed
}

// Done ends the status line on a terminal, so that what is printed next
// starts on a line of its own. It does nothing otherwise, and nothing when
// called twice.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// progressLine renders s, e.g.
// "running 12.3s / 20s  62%  grants 845  while held 0  nemesis: pause of process 3",
// where "while held" counts grants made while another worker still held the
// lock: early signs of double holders, which the checkers then decide.
func progressLine(s Snapshot) string {
	pct := 0
	if s.Total > 0 {
		pct = int(min(100, 100*s.Elapsed/s.Total))
	}
	nem := s.Nemesis
	if nem == "" {
		nem = "-"
	}
	if r := []rune(nem); len(r) > maxNemesisText { // keep the line on one terminal row
		nem = string(r[:maxNemesisText-1]) + "…"
	}
	return fmt.Sprintf("running %s / %s  %3d%%  grants %d  while held %d  nemesis: %s",
		s.Elapsed.Round(100*time.Millisecond), s.Total, pct, s.Grants, s.Anomalies, nem)
}

// IsTerminal reports whether f is a character device, which for stdout
// and stderr means a terminal (or /dev/null, where the output does not
// matter).
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
