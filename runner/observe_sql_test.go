package runner

import (
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TestObserverSQLControlRun runs the database designs with no fault: every
// release the observer reports names a session that the history shows was
// granted that key (for the designs that record their session), and was
// let go by it (deleted: no session was ended by the server, and a worker
// that stops closes its own); and no lost-lock window appears.
func TestObserverSQLControlRun(t *testing.T) {
	for _, lock := range []string{"pg-advisory", "pg-for-update", "pg-advisory-xact", "mysql-get-lock", "mysql-for-update"} {
		t.Run(lock, func(t *testing.T) {
			out, h := sqlControlRun(t, lock)
			granted := map[string]map[int64]bool{} // key -> sessions granted it
			for _, op := range h {
				if op.F == history.FAcquire && op.Type == history.OK && op.Value != nil && op.Value.Backend != 0 {
					if granted[op.Key] == nil {
						granted[op.Key] = map[int64]bool{}
					}
					granted[op.Key][op.Value.Backend] = true
				}
			}
			deleted := 0
			for _, op := range h {
				if op.F != history.FServerRelease || op.Value.Ext().Release.Probe {
					continue
				}
				v := op.Value
				if v.Ext().Release.How == history.ReleaseDeleted {
					deleted++
				}
				if v.Ext().Release.How != history.ReleaseDeleted || (granted[op.Key] != nil && !granted[op.Key][v.Backend]) {
					t.Errorf("release %d of %s %+v %+v: not a let-go of a session granted it", op.Index, op.Key, *v, *v.Ext().Release)
				}
			}
			if deleted < 5 {
				t.Errorf("%d releases observed", deleted)
			}
			assertNoWindows(t, out.Result)
			assertNoChildren(t)
		})
	}
}

// sqlControlRun runs a database design with no fault, with the safe
// lease, until 20 grants, the observer's probe and 5 observed releases.
func sqlControlRun(t *testing.T, lock string) (Outcome, history.History) {
	t.Helper()
	return runValid(t, control(t, lock, func(h history.History) bool { return hasProbe(h) && sqlReleases(h) >= 5 }))
}

// sqlReleases counts the observed releases of lock keys in h.
func sqlReleases(h history.History) int {
	n := 0
	for _, op := range h {
		if op.F == history.FServerRelease && op.Key != "" {
			n++
		}
	}
	return n
}

// TestObserverSessionKill runs the session lock designs under session-kill
// until a double holder whose story has the server's side: the window's
// release is the killed session's (session-ended), observed while the
// session-kill op that ended it ran, and the window is classed; the story
// says the server ended the session.
func TestObserverSessionKill(t *testing.T) {
	for _, lock := range []string{"pg-advisory", "mysql-get-lock", "mysql-for-update", "pg-for-update", "pg-advisory-xact"} {
		t.Run(lock, func(t *testing.T) {
			tt := quick(t, lock, "session-kill", false)
			tt.Time = patient
			tt.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder", "The server's side: ")
			out, h := runRecorded(t, tt)
			ws := windowsOf(t, out.Result).Stats["windows"].([]checker.Window)
			inside := 0
			for _, w := range ws {
				if w.Class == "" || w.Length <= 0 {
					t.Errorf("window %+v", w)
				}
				if w.How != history.ReleaseSessionEnded {
					continue
				}
				// The kill ran between the session-kill op's
				// invocation and its completion.
				for i, op := range h {
					if op.F != history.FSessionKill || op.Type != history.Invoke {
						continue
					}
					for _, end := range h[i+1:] {
						if end.F == history.FSessionKill && end.Type != history.Invoke {
							if w.Released >= op.Time.Seconds() && w.Released <= end.Time.Seconds() {
								inside++
							}
							break
						}
					}
				}
			}
			if inside == 0 {
				t.Errorf("no window of an ended session released while a session-kill ran: %+v", ws)
			}
			told := false
			for _, a := range out.Result.Anomalies {
				if a.Kind == "double-holder" && strings.Contains(a.Explanation, "The server's side: ") &&
					strings.Contains(a.Explanation, " ended session ") {
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
