package runner

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TestObserverRedisFailoverControlRun runs the Sentinel and Redis Cluster
// designs with no fault: the observer sees the grants' releases on their
// nodes (of owners that were granted), reports no failover, and the run
// has no lost-lock window.
func TestObserverRedisFailoverControlRun(t *testing.T) {
	for _, lock := range []string{"redis-sentinel", "redis-cluster"} {
		t.Run(lock, func(t *testing.T) {
			needService(t, lock)
			out, h := runValid(t, control(t, lock, hasProbe))
			owners := map[string]bool{}
			granted := 0
			for _, op := range h {
				if op.F == history.FAcquire && op.Type == history.OK && op.Value != nil {
					owners[op.Value.Owner] = true
				}
				if op.F != history.FServerRelease || op.Value.Ext().Release.Probe {
					continue
				}
				if op.Value.Ext().Release.How == history.ReleaseFailoverLost {
					t.Errorf("a failover reported with no fault: %+v", *op.Value)
				}
				if owners[op.Value.Owner] {
					granted++
				}
			}
			if granted < 10 {
				t.Errorf("%d releases of grants observed in %d grants", granted, grants(t, out.Dir))
			}
			assertNoWindows(t, out.Result)
			assertNoChildren(t)
		})
	}
}

// TestObserverFailover runs redis-sentinel and redis-cluster under
// failover (the master cut off from its replicas and failover managers,
// some workers still reaching it), as their failover-lock-loss scenarios
// do, until a lost-lock window of a grant the promoted replica never had:
// the release is failover-lost, of a grant's owner, observed inside the
// failover, and the window is classed.
func TestObserverFailover(t *testing.T) {
	for _, tc := range []struct {
		lock     string
		duration time.Duration
	}{{"redis-sentinel", 3 * time.Second}, {"redis-cluster", 6 * time.Second}} {
		t.Run(tc.lock, func(t *testing.T) {
			needService(t, tc.lock)
			tt := quick(t, tc.lock, "failover", false)
			tt.Time, tt.Workers, tt.Lease = patient, 10, time.Second
			tt.NemesisInterval, tt.NemesisDuration, tt.OpTimeout = 3*time.Second, tc.duration, 2*time.Second
			tt.Until = func(h history.History) bool {
				ws, _ := checker.NewWindows().Check(context.Background(), h).Stats["windows"].([]checker.Window)
				for _, w := range ws {
					if w.How == history.ReleaseFailoverLost {
						return true
					}
				}
				return false
			}
			out, h := runRecorded(t, tt)
			faults := h.Faults()
			ws, _ := windowsOf(t, out.Result).Stats["windows"].([]checker.Window)
			inside := 0
			for _, w := range ws {
				if w.How != history.ReleaseFailoverLost {
					continue
				}
				if w.Class == "" || w.Owner == "" {
					t.Errorf("window %+v", w)
				}
				if releasedInFault(w, faults, false) {
					inside++
				}
			}
			if inside == 0 {
				t.Errorf("no failover-lost window inside the failover: %+v, faults %+v", ws, faults)
			}
			assertNoChildren(t)
		})
	}
}
