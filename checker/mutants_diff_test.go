package checker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The tests of this file pin lines changed since 7c82881 that gremlins'
// mutants of them (make mutation MUTATION_DIFF=7c82881) showed no other
// test pinned; each names the mutants it kills.

// TestOpAt checks opAt's contract: the op at position i when its Index is
// i, nil for any other i (out of range, or a history numbered otherwise).
// Kills backend_explain.go:101 (`i >= 0` → `> 0` or `< 0`, `i < len(h)` →
// `<=`, `h[i].Index == i` → `!=`); through acquireBackend the first two are
// equivalent (the scan of the pairs finds the same op).
func TestOpAt(t *testing.T) {
	numbered := func(from, n int) history.History {
		h := make(history.History, n)
		for i := range h {
			h[i] = history.Op{Index: from + i, Time: time.Duration(i) * time.Millisecond, Process: 1, Type: history.Invoke, F: history.FAcquire}
		}
		return h
	}
	for _, tc := range []struct {
		name string
		h    history.History
		i    int
		want int // position in h, -1 for nil
	}{
		{"first op", numbered(0, 3), 0, 0},
		{"last op", numbered(0, 3), 2, 2},
		{"negative index", numbered(0, 3), -1, -1},
		{"one past the end", numbered(0, 3), 3, -1},
		{"numbered from 1, one past the end", numbered(1, 3), 3, -1},
		{"numbered from 1, the op at that position has another index", numbered(1, 3), 1, -1},
		{"numbered from 1, first", numbered(1, 3), 0, -1},
		{"empty history", nil, 0, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := opAt(tc.h, tc.i)
			switch {
			case tc.want < 0 && got != nil:
				t.Errorf("opAt(%d) = op %d, want nil", tc.i, got.Index)
			case tc.want >= 0 && got != &tc.h[tc.want]:
				t.Errorf("opAt(%d) = %v, want the op at position %d", tc.i, got, tc.want)
			}
		})
	}
}

// TestTickStepBounds checks tickStep where a span is exactly maxTicks steps
// (the next step, not the one that cuts it into 12) and for spans of an
// hour and more (the 100 s and 1000 s units). Kills linviz.go:50:19
// (`< maxTicks` → `<=`), 47:139 and 47:159 (`100 * time.Second`,
// `1000 * time.Second` → `/`: a step of 0).
func TestTickStepBounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to time.Duration
		want     time.Duration
	}{
		{"twelve ms", 0, 12 * time.Millisecond, 2 * time.Millisecond},
		{"eleven ms", 0, 11 * time.Millisecond, time.Millisecond},
		{"sixty s", 0, 60 * time.Second, 10 * time.Second},
		{"an hour", 0, time.Hour, 500 * time.Second},
		{"three hours", 0, 3 * time.Hour, 1000 * time.Second},
		{"a day", time.Second, 24*time.Hour + time.Second, 5000 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tickStep(tc.from, tc.to); got != tc.want {
				t.Errorf("tickStep(%v, %v) = %v, want %v", tc.from, tc.to, got, tc.want)
			}
		})
	}
}

// TestLinearizabilityPageFaultWithoutTargets checks the nemesis row of the
// page for a fault that names no process: it is described by its kind
// alone ("pause"), not "pause of processes ". Kills linearize.go:259:21
// (`len(f.Targets) > 0` → `>= 0`).
func TestLinearizabilityPageFaultWithoutTargets(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("testdata", "histories", "real-redis-set-px-pause", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range h {
		if h[i].Process == history.NemesisProcess && h[i].Value != nil {
			h[i].Value.Mut().Targets = nil
		}
	}
	page := visualizedPage(t, NewMutex(Options{}).Check(context.Background(), h))
	if !strings.Contains(page, `"Description":"pause"`) {
		t.Error(`the page lacks "Description":"pause"`)
	}
	if strings.Contains(page, "pause of") {
		t.Error(`the page has "pause of"`)
	}
}

// TestTimeAxisBeforeZero checks the first box of the time axis for a span
// that starts before the run's time 0 (a history written by hand may): it
// starts at the step at or before the span's start, not after it, nor a
// whole step before a start on a step. Kills linviz.go:76:27
// (`from%step != 0` → `== 0`).
func TestTimeAxisBeforeZero(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name        string
		from, to    time.Duration
		first, last time.Duration // the first box's start, the last box's end
	}{
		{"between steps", -1250 * ms, 1250 * ms, -1500 * ms, 1500 * ms},
		{"on a step", -1500 * ms, 1000 * ms, -1500 * ms, 1000 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ax := timeAxis(tc.from, tc.to)
			if len(ax) == 0 {
				t.Fatal("no boxes")
			}
			if got := time.Duration(ax[0].Start); got != tc.first {
				t.Errorf("first box starts at %v, want %v", got, tc.first)
			}
			if got := time.Duration(ax[len(ax)-1].End); got != tc.last {
				t.Errorf("last box ends at %v, want %v", got, tc.last)
			}
		})
	}
}

// TestTimeAxisBoxes checks that the time axis's boxes alternate their two
// shades, starting with the lighter, and that each box's details give its
// own start and end. Kills linviz.go:80:50 (`i+1` → `i-1`: every box the
// same shade), 82:10 and 82:7 (`i%2 == 1` → `!=`, `i*2`), and 90:72
// (`t+step` → `t-step` in the details).
func TestTimeAxisBoxes(t *testing.T) {
	ax := timeAxis(0, 5*time.Second)
	if len(ax) < 3 {
		t.Fatalf("%d boxes", len(ax))
	}
	for i, a := range ax {
		want := "#eceff1"
		if i%2 == 1 {
			want = "#cfd8dc"
		}
		if a.BackgroundColor != want {
			t.Errorf("box %d: shade %s, want %s", i, a.BackgroundColor, want)
		}
		details := "the run's clock from " + secs(time.Duration(a.Start)) + " to " + secs(time.Duration(a.End)) + ", as in the report"
		if a.Details != details {
			t.Errorf("box %d: details %q, want %q", i, a.Details, details)
		}
	}
}

// TestLinearizabilityPageTokens checks that the acquires drawn on the page
// print their tokens as the design's kind: ZooKeeper zxids as
// epoch:counter, counters as plain numbers. Kills mutex.go:301:48
// (`c.opts.Tokens == ZxidTokens` → `!=`).
func TestLinearizabilityPageTokens(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("testdata", "histories", "real-redis-set-px-pause", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tokens    TokenKind
		want, not string
	}{
		{NumberTokens, "acquire (token ", "(zxid "},
		{ZxidTokens, "acquire (zxid 0:", "(token "},
	} {
		page := visualizedPage(t, NewMutex(Options{Tokens: tc.tokens}).Check(context.Background(), h))
		if !strings.Contains(page, tc.want) {
			t.Errorf("tokens %d: the page lacks %q", tc.tokens, tc.want)
		}
		if strings.Contains(page, tc.not) {
			t.Errorf("tokens %d: the page has %q", tc.tokens, tc.not)
		}
	}
}

// TestSessionKillWhen checks when the session-kill sentence says the
// session was terminated: at the kill's start when its op completed
// within the same hundredth of a second (as the report prints times),
// between the two otherwise. Kills session_explain.go:24:19
// (`secs(f.Done) > secs(f.Start)` → `>=`: "between 2.40 s and 2.40 s").
func TestSessionKillWhen(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name        string
		start, done time.Duration
		want        string
	}{
		{"completed at once", 2400 * ms, 2400 * ms, "terminated at 2.40 s;"},
		{"completed within the hundredth", 2400 * ms, 2404 * ms, "terminated at 2.40 s;"},
		{"completed later", 2400 * ms, 2500 * ms, "terminated between 2.40 s and 2.50 s;"},
		{"completed in the next ten seconds", 9990 * ms, 10010 * ms, "terminated between 9.99 s and 10.01 s;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := []history.Fault{{F: history.FSessionKill, Start: tc.start, Done: tc.done, End: 40 * time.Second, Targets: []int{2}}}
			got := aftermath(f, 2, 30*time.Second)
			if !strings.HasPrefix(got, "Process 2's database session was "+tc.want) {
				t.Errorf("got %q, want it to start with %q", got, "Process 2's database session was "+tc.want)
			}
		})
	}
}

// TestWindowSessionHeardAtTheGrant checks which of a session's grants a
// database release ends when the observer heard it at the very instant
// the later grant's ok came: that grant (granted at or before the
// release was heard), not the session's earlier one, which it had let go.
// Kills window.go:437:75 (`start > heard` → `>=`: the earlier grant,
// released before, and so no window).
func TestWindowSessionHeardAtTheGrant(t *testing.T) {
	h := new(builder).acquireSession(0, 1, 1.01, "a", 11).release(0, 1.5, 1.51, true, "a").acquireSession(0, 1.9, 2.02, "c", 11).
		observedSession(2.02, 1.99, history.ReleaseSessionEnded, 11).crash(0, 2.5).build()
	if err := history.Validate(h); err != nil {
		t.Fatalf("test history: %v", err)
	}
	ws, _, _ := lostWindows(newAnalysis(h))
	if len(ws) != 1 {
		t.Fatalf("%d windows, want 1: %+v", len(ws), ws)
	}
	if e := ws[0].export(); e.Process != 0 || !near(e.Released, 2.02) || e.Backend != 11 {
		t.Errorf("window: process %d released %v session %d, want process 0 at 2.02 by session 11", e.Process, e.Released, e.Backend)
	}
}

// TestDressRows checks the parts of the dressed page no golden history
// draws: a process with an op never answered (after answered ones, or
// only that one), rows with no process of their own before a process's
// row, and several locks in the title. Covers linviz.go:178-179, 198 and
// 218-219, and kills 218:12 (`r.to > r.from` → `>=`, `<=`).
func TestDressRows(t *testing.T) {
	page := []byte("<html><head><title>Porcupine</title></head><body>\n</body></html>")
	s := time.Second
	for _, tc := range []struct {
		name string
		rows []vizRow
		keys []string
		want []string
	}{
		{"answered ops, then one never answered",
			[]vizRow{{row: 0, proc: 3, ops: 3, from: s, to: 2 * s, open: true}}, []string{"k0"},
			[]string{"<td>from 1.00 s to 2.00 s, one never answered</td>", "<title>Lock k0: operations"}},
		{"only an op never answered",
			[]vizRow{{row: 0, proc: 3, ops: 1, from: s, to: s, open: true}}, []string{"k0"},
			[]string{"<td>from 1.00 s to never answered</td>"}},
		{"all answered",
			[]vizRow{{row: 0, proc: 3, ops: 2, from: s, to: 2 * s}}, []string{"k0"},
			[]string{"<td>from 1.00 s to 2.00 s</td>"}},
		{"rows before the first process's",
			[]vizRow{{row: 2, proc: 7, ops: 1, from: s, to: 2 * s}}, []string{"k0", "k1"},
			[]string{`const lockcheckRows = ["row 0","row 1","process 7"]`, "<title>Locks k0 and k1: operations"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(dress(page, tc.rows, tc.keys, false))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the page lacks %s", w)
				}
			}
		})
	}
}
