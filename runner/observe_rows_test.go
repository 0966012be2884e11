package runner

import (
	"strings"
	"testing"

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
			assertNoChildren(t)
		})
	}
}

// TestObserverLockRowsPause runs the unique-row designs under pause until
// a double holder whose story has the server's side: a paused holder's row
// expired and another client took the key over. The window's release is
// that row's deletion, with the row that took its place, and the window is
// classed.
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
				if rel := h[w.Ops[1]]; strings.Contains(rel.Value.Ext().Detail, "holds the key now") && rel.Value.Owner == w.Owner {
					taken++
				}
			}
			if taken == 0 {
				t.Errorf("no window released by a takeover of the holder's row: %+v", windowsOf(t, out.Result).Stats["windows"])
			}
			assertNoChildren(t)
		})
	}
}
