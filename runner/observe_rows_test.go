package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// rowDesigns are the designs whose lock is a row of lockcheck_rows.
var rowDesigns = []string{"pg-unique-row", "mysql-unique-row"}

// TestObserverLockRowsControlRun runs the unique-row designs with no
// fault: the observer reports the rows it saw go, each a deletion naming
// the owner and token (the row's id) of a grant of that key, and no
// lost-lock window appears.
func TestObserverLockRowsControlRun(t *testing.T) {
	for _, lock := range rowDesigns {
		t.Run(lock, func(t *testing.T) {
			out, h := sqlControlRun(t, lock)
			type grant struct {
				key, owner string
				token      int64
			}
			granted := map[grant]bool{}
			for _, op := range h {
				if op.F == history.FAcquire && op.Type == history.OK && op.Value != nil {
					granted[grant{op.Key, op.Value.Owner, op.Value.Token}] = true
				}
			}
			rows := 0
			for _, op := range h {
				if op.F != history.FServerRelease || op.Key == "" {
					continue
				}
				rows++
				v, rel := op.Value, op.Value.Ext().Release
				if rel.How != history.ReleaseDeleted || !granted[grant{op.Key, v.Owner, v.Token}] ||
					!strings.HasPrefix(v.Ext().Detail, "row id ") {
					t.Errorf("release %d of %s %+v %+v: not the deletion of a granted row", op.Index, op.Key, *v, *rel)
				}
			}
			if rows < 5 {
				t.Errorf("%d row releases observed", rows)
			}
			assertNoWindows(t, out.Result)
			assertOwnRowsNotEarly(t, h)
			assertNoChildren(t)
		})
	}
}

// assertOwnRowsNotEarly checks that every row the observer saw go whose
// holder's release deleted it (released true) is placed no earlier than
// that release was asked for: a holder's own deletion placed before it
// would be a lost-lock window that never was.
func assertOwnRowsNotEarly(t *testing.T, h history.History) {
	t.Helper()
	asked := map[string]time.Duration{} // owner -> its release's invocation
	for i, op := range h {
		if op.F != history.FRelease || op.Type != history.Invoke || op.Value == nil {
			continue
		}
		for _, done := range h[i+1:] {
			if done.Process == op.Process && done.F == history.FRelease && done.Type != history.Invoke {
				if done.Type == history.OK && done.Value != nil && done.Value.Released != nil && *done.Value.Released {
					asked[op.Value.Owner] = op.Time
				}
				break
			}
		}
	}
	own := 0
	for _, op := range h {
		if op.F != history.FServerRelease || op.Key == "" {
			continue
		}
		if at, ok := asked[op.Value.Owner]; ok {
			own++
			if rel, _ := op.ReleaseAt(); rel < at {
				t.Errorf("row of %s placed at %v, before its holder asked to delete it at %v: %+v", op.Value.Owner, rel, at, *op.Value.Ext().Release)
			}
		}
	}
	if own == 0 {
		t.Error("no row its holder deleted was observed")
	}
}

// TestObserverLockRowsPause runs the unique-row designs under pause until
// a double holder whose story has the server's side: a paused holder's row
// expired and another client took the key over. The window's release is
// that row's deletion (by that client: the sample saw the key empty, or
// another row in it already), and the window is classed; no row its
// holder deleted is placed before the holder asked.
func TestObserverLockRowsPause(t *testing.T) {
	for _, lock := range rowDesigns {
		t.Run(lock, func(t *testing.T) {
			tt := quick(t, lock, "pause", false)
			tt.Time = patient
			tt.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder", "The server's side: ")
			out, h := runRecorded(t, tt)
			taken := 0
			for _, w := range windowsOf(t, out.Result).Stats["windows"].([]checker.Window) {
				if w.Class == "" || w.Length <= 0 || w.How != history.ReleaseDeleted {
					t.Errorf("window %+v", w)
				}
				// Another client deleted the expired row: the sample saw
				// the key empty, or another row in it already.
				if rel := h[w.Ops[1]]; strings.HasPrefix(rel.Value.Ext().Detail, "row id ") && rel.Value.Owner == w.Owner && rel.Value.Token == w.Token {
					taken++
				}
			}
			if taken == 0 {
				t.Errorf("no window released by a takeover of the holder's row: %+v", windowsOf(t, out.Result).Stats["windows"])
			}
			assertOwnRowsNotEarly(t, h)
			assertNoChildren(t)
		})
	}
}
