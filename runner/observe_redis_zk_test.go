package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/services/rediszk"
)

// TestObserverRedisZK runs the combined redis-zk lock with the composed
// observer. With no fault: releases of both halves, named as the design
// names them, of owners that were granted, and no lost-lock window. Under
// pause, until a double holder whose story has the server's side: its
// window's release is of a half of the paused holder's lock, inside the
// pause.
func TestObserverRedisZK(t *testing.T) {
	needService(t, "redis-zk")
	t.Run("none", func(t *testing.T) {
		tt := control(t, "redis-zk", hasProbe)
		tt.Nodes = 1
		out, h := runValid(t, tt)
		owners := map[string]bool{}
		halves := map[string]int{}
		for _, op := range h {
			if op.F == history.FAcquire && op.Type == history.OK && op.Value != nil {
				owners[op.Value.Owner] = true
			}
			if op.F != history.FServerRelease || op.Value.Ext().Release.Probe {
				continue
			}
			if len(op.Value.Ext().Nodes) != 1 || (op.Value.Ext().Nodes[0] != rediszk.PartRedis && op.Value.Ext().Nodes[0] != rediszk.PartZooKeeper) {
				t.Errorf("release %d names nodes %v", op.Index, op.Value.Ext().Nodes)
				continue
			}
			if owners[op.Value.Owner] {
				halves[op.Value.Ext().Nodes[0]]++
			}
		}
		if halves[rediszk.PartRedis] < 5 || halves[rediszk.PartZooKeeper] < 5 {
			t.Errorf("releases of grants observed by half: %v", halves)
		}
		assertNoWindows(t, out.Result)
		assertNoChildren(t)
	})
	t.Run("pause", func(t *testing.T) {
		tt := quick(t, "redis-zk", "pause", false)
		tt.Nodes = 1
		// As TestRunRedisZK: a lease ZooKeeper accepts as a session
		// timeout, so both halves run out together.
		tt.Lease, tt.NemesisDuration = time.Second, 2500*time.Millisecond
		tt.Time = patient
		tt.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder", "The server's side: ")
		out, h := runRecorded(t, tt)
		faults := h.Faults()
		ws, _ := windowsOf(t, out.Result).Stats["windows"].([]checker.Window)
		inside := 0
		for _, w := range ws {
			if w.Class == "" || len(w.Nodes) == 0 {
				t.Errorf("window %+v", w)
			}
			if releasedInFault(w, faults, true) {
				inside++
			}
		}
		if inside == 0 {
			t.Errorf("no window's release inside a pause: %+v, faults %+v", ws, faults)
		}
		told := false
		for _, a := range out.Result.Anomalies {
			if a.Kind == "double-holder" && strings.Contains(a.Explanation, "The server's side: ") {
				told = true
			}
		}
		if !told {
			t.Errorf("no double holder's story names the server's release: %+v", out.Result.Anomalies)
		}
		assertNoChildren(t)
	})
}
