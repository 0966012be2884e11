package runner

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// windowsOf returns the windows sub-result of res.
func windowsOf(t *testing.T, res checker.Result) checker.Result {
	t.Helper()
	for _, sub := range res.Results {
		if sub.Checker == "windows" {
			return sub
		}
	}
	t.Fatal("no windows sub-result")
	return checker.Result{}
}

// TestObserverControlRun runs a design of each service with an observer with
// no fault: every release the observer reports is one a holder asked for
// (a deletion of its own key, after it invoked its release) or an expiry
// after it, so the run has no lost-lock window; the observer saw the
// grants' releases, and its probes.
func TestObserverControlRun(t *testing.T) {
	for _, lock := range []string{"redis-set-px", "redis-setnx-getset", "redlock", "etcd-mutex", "zk-ephemeral"} {
		t.Run(lock, func(t *testing.T) {
			out, h := runValid(t, control(t, lock, hasProbe))
			owners := map[string]bool{}
			releases, probes, granted := 0, 0, 0
			for _, op := range h {
				if op.F == history.FAcquire && op.Type == history.OK && op.Value != nil {
					owners[op.Value.Owner] = true
				}
				if op.F != history.FServerRelease {
					continue
				}
				if op.Value.Ext().Release.Probe {
					probes++
					continue
				}
				releases++
				if owners[op.Value.Owner] {
					granted++
				}
			}
			// RedLock deletes the keys of a failed acquire, etcd a
			// waiter's key: not every release is of a grant.
			if granted < 10 || probes == 0 {
				t.Fatalf("%d releases (%d of grants) and %d probes observed in %d grants", releases, granted, probes, grants(t, out.Dir))
			}
			assertNoWindows(t, out.Result)
			assertNoChildren(t)
		})
	}
}

// TestObserverPause runs a Redis design under pause until a double holder
// whose story names the server's release of the paused holder's key: a key
// that expired (redis-set-px), or one another client wrote over once it
// judged the stored time passed (redis-setnx-getset, whose keys have no
// time to live). The release is observed inside the pause, and its window
// is classed.
func TestObserverPause(t *testing.T) {
	for _, c := range []struct{ lock, how, story string }{
		{"redis-set-px", history.ReleaseExpired, "The server's side: lock0 expired key"},
		{"redis-setnx-getset", history.ReleaseOverwritten, "The server's side: lock0 let another client write over key"},
	} {
		t.Run(c.lock, func(t *testing.T) {
			tt := quick(t, c.lock, "pause", false)
			tt.Time, tt.Until = patient, untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder", c.story)
			out, h := runRecorded(t, tt)
			faults := h.Faults()
			ws := windowsOf(t, out.Result).Stats["windows"].([]checker.Window)
			if len(ws) == 0 {
				t.Fatal("no lost-lock window in a run with a double holder")
			}
			inside := 0
			for _, w := range ws {
				if w.Class == "" || w.Length <= 0 {
					t.Errorf("window %+v", w)
				}
				if w.How == c.how && releasedInFault(w, faults, false) {
					inside++
				}
			}
			if inside == 0 {
				t.Errorf("no window's release (%s) inside a fault: %+v, faults %+v", c.how, ws, faults)
			}
			told := false
			for _, a := range out.Result.Anomalies {
				if a.Kind == "double-holder" && strings.Contains(a.Explanation, c.story) {
					told = true
				}
			}
			if !told {
				t.Errorf("no double holder's story names the server's release: %+v", out.Result.Anomalies)
			}
			assertNoChildren(t)
		})
	}
}

// runRecorded runs tt and reads back the history it stored.
func runRecorded(t *testing.T, tt Test) (Outcome, history.History) {
	t.Helper()
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.ReadFile(out.Dir + "/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return out, h
}

// assertNoWindows fails t when res has a lost-lock window (a control run's
// check: with no fault, every release is one a holder asked for).
func assertNoWindows(t *testing.T, res checker.Result) {
	t.Helper()
	w := windowsOf(t, res)
	if n := w.Stats["window"].(map[string]any)["count"]; n != 0 {
		b, _ := json.Marshal(w.Stats["windows"])
		t.Fatalf("%v lost-lock windows in a run with no fault: %s", n, b)
	}
}

// releasedInFault reports whether w's release fell inside one of faults;
// with open, a fault still in force at the end (End 0) lasts to the end.
func releasedInFault(w checker.Window, faults []history.Fault, open bool) bool {
	for _, f := range faults {
		if w.Released >= f.Start.Seconds() && ((open && f.End == 0) || w.Released <= f.End.Seconds()) {
			return true
		}
	}
	return false
}

// hasProbe reports whether h has an observer's probe.
func hasProbe(h history.History) bool {
	for _, op := range h {
		if op.F == history.FServerRelease && op.Value != nil && op.Value.Ext().Release != nil && op.Value.Ext().Release.Probe {
			return true
		}
	}
	return false
}
