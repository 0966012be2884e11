package checker

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// faultHit adds a fault from t0 to t1 whose start op recorded hit.
func (b *builder) faultHit(f string, t0, t1 float64, hit *history.Hit, targets ...int) *builder {
	end, _ := history.EndOf(f)
	b.pair(history.NemesisProcess, f, "", t0-0.001, t0, history.Info, nil, &history.Value{Extra: &history.Extra{Targets: targets, Hit: hit}})
	return b.pair(history.NemesisProcess, end, "", t1-0.001, t1, history.Info, nil, nil)
}

// faultNodes adds a fault on lock nodes from t0 to t1.
func (b *builder) faultNodes(f string, t0, t1 float64, nodes ...string) *builder {
	end, _ := history.EndOf(f)
	b.pair(history.NemesisProcess, f, "", t0-0.001, t0, history.Info, nil, &history.Value{Extra: &history.Extra{Nodes: nodes}})
	return b.pair(history.NemesisProcess, end, "", t1-0.001, t1, history.Info, nil, nil)
}

// nodeStrike adds a fault on lock nodes invoked at inv and recorded at
// done (a kill waits for its server to be gone), undone at t1, whose
// nemesis saw holders workers holding a lock when it struck.
func (b *builder) nodeStrike(f string, inv, done, t1 float64, holders int) *builder {
	return b.strike(f, inv, done, t1, &history.Extra{Nodes: []string{"lock0"}, Hit: &history.Hit{Nemesis: f, Holders: holders, Lease: time.Second}})
}

// strike adds a fault invoked at inv, recorded at done with x, undone at
// t1.
func (b *builder) strike(f string, inv, done, t1 float64, x *history.Extra) *builder {
	end, _ := history.EndOf(f)
	b.pair(history.NemesisProcess, f, "", inv, done, history.Info, nil, &history.Value{Extra: x})
	return b.pair(history.NemesisProcess, end, "", t1-0.001, t1, history.Info, nil, nil)
}

// holderStrike adds a fault on process 0 invoked at inv and recorded at
// done with hit, undone at t1.
func (b *builder) holderStrike(f string, inv, done, t1 float64, hit *history.Hit) *builder {
	return b.strike(f, inv, done, t1, &history.Extra{Targets: []int{0}, Hit: hit})
}

// held is process 0's grant of k at 1.01 s (asked at 1 s) and its release
// at 5 s.
func held() *builder {
	return new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 1.03, 0, 0).release(0, 5, 5.01, true, "a")
}

var oneSecond = &history.Hit{Lease: time.Second}

// heldK is what a fault records when it struck a worker holding k.
var heldK = &history.Hit{Lease: time.Second, Holder: true, Key: "k"}

// TestConditions: every built-in condition, on a history that reaches it
// (where, shown by which ops) and on one as close as can be that does not.
func TestConditions(t *testing.T) {
	tests := []struct {
		cond  string
		h     *builder
		want  []Reach // nil: not reached
		extra string  // a second condition the history must reach too
	}{
		{"holder-paused-past-lease", held().faultHit(history.FPause, 2, 3.5, oneSecond, 0),
			[]Reach{{Ops: []int{1, 5}, Process: 0, Key: "k", At: 3}}, ""},
		{"holder-paused-past-lease", held().faultHit(history.FPause, 2, 2.9, oneSecond, 0), nil, ""},      // shorter than the lease
		{"holder-paused-past-lease", held().faultHit(history.FPause, 0.5, 2, oneSecond, 0), nil, ""},      // before its grant
		{"holder-paused-past-lease", held().faultHit(history.FPause, 2, 3.5, oneSecond, 1), nil, ""},      // another process
		{"holder-paused-past-lease", held().faultHit(history.FPause, 2, 3.5, nil, 0), nil, ""},            // no lease recorded
		{"holder-paused-past-lease", held().faultHit(history.FPause, 2, 3.5, &history.Hit{}, 0), nil, ""}, // a lease of 0: unknown
		{"holder-paused-past-lease", held().faultHit(history.FPause, 2, 3, oneSecond, 0), // exactly a lease
			[]Reach{{Ops: []int{1, 5}, Process: 0, Key: "k", At: 3}}, ""},
		{"holder-paused-past-lease", held().faultHit(history.FKillWorker, 2, 3.5, oneSecond, 0), nil, ""},          // a kill is not a pause
		{"holder-paused-past-lease", held().faultHit(history.FPartition, 2, 3.5, heldK, 0), nil, "holder-cut-off"}, // nor a cut
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FPause, 2, 3.5, oneSecond, 1),
			[]Reach{{Ops: []int{4, 6}, Process: 1, Key: "k", At: 3}}, ""},
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FPartition, 2, 3.5, oneSecond, 1),
			[]Reach{{Ops: []int{4, 6}, Process: 1, Key: "k", At: 3}}, ""},
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FPause, 2, 3, oneSecond, 1), // exactly a lease
			[]Reach{{Ops: []int{4, 6}, Process: 1, Key: "k", At: 3}}, ""},
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FPause, 2, 2.9, oneSecond, 1), nil, ""},      // shorter than the lease
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FKillWorker, 2, 3.5, oneSecond, 1), nil, ""}, // a kill
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FFailover, 2, 3.5, oneSecond, 1), nil, ""},   // a failover's
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FPause, 2, 3.5, nil, 1), nil, ""},            // no lease recorded
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 1.9).faultHit(history.FPause, 2, 3.5, oneSecond, 1), nil, ""},       // it had stopped asking
		{"waiter-stopped-past-lease", held().acquireFail(1, 2.5, 5.02).faultHit(history.FPause, 2, 3.5, oneSecond, 1), nil, ""},      // asked after the fault struck
		{"waiter-stopped-past-lease", held().acquireFail(1, 5.5, 6).faultHit(history.FPause, 5.6, 7, oneSecond, 1), nil, ""},         // nobody held it
		{"waiter-stopped-past-lease", held().faultHit(history.FPause, 2, 3.5, oneSecond, 0), nil, "holder-paused-past-lease"},        // the holder itself
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultNodes(history.FPause, 2, 3.5, "n1"), nil, ""},            // a node's
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.02).faultHit(history.FPause, 2, 3.5, &history.Hit{}, 1), nil, ""}, // a lease of 0: unknown
		{"waiter-stopped-past-lease", held().acquireFail(1, 2, 5.02).faultHit(history.FPause, 2, 3.5, oneSecond, 1), // asked as it struck
			[]Reach{{Ops: []int{5, 6}, Process: 1, Key: "k", At: 3}}, ""},
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 2).faultHit(history.FPause, 2, 3.5, oneSecond, 1), nil, ""}, // answered as it struck
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.005, 5.02).faultHit(history.FPause, 1.01, 2.5, oneSecond, 1), // the holder granted as it struck
			[]Reach{{Ops: []int{1, 4}, Process: 1, Key: "k", At: 2.01}}, ""},
		{"waiter-stopped-past-lease", held().acquireFail(1, 1.5, 5.5).faultHit(history.FPause, 5, 6.5, oneSecond, 1), nil, ""}, // the holder released as it struck
		{"holder-cut-off", held().fault(history.FPartition, 2, 3, 0),
			[]Reach{{Ops: []int{1, 5}, Process: 0, Key: "k", At: 2}}, ""},
		{"holder-cut-off", held().fault(history.FPartition, 5.5, 6, 0), nil, ""}, // after its release
		{"holder-cut-off", held().fault(history.FPause, 2, 3, 0), nil, ""},
		{"holder-cut-off", held().fault(history.FFailover, 2, 3, 0), nil, ""}, // left with the old master
		// Cut off while it held k (its record says so), recorded after
		// its release began; not when the record says it held nothing, or
		// held another key, or the cut came after its hold.
		{"holder-cut-off", held().holderStrike(history.FPartition, 4.9, 5.2, 7, heldK),
			[]Reach{{Ops: []int{1, 7}, Process: 0, Key: "k", At: 4.9}}, ""},
		{"holder-cut-off", held().holderStrike(history.FPartition, 0.5, 1.01, 3, heldK), // recorded as it was granted
			[]Reach{{Ops: []int{2, 3}, Process: 0, Key: "k", At: 1.01}}, ""},
		{"holder-cut-off", held().holderStrike(history.FPartition, 2, 2.1, 3, oneSecond), nil, ""},
		{"holder-cut-off", held().holderStrike(history.FPartition, 2, 2.1, 3, &history.Hit{Holder: true, Key: "j"}), nil, ""},
		{"holder-cut-off", held().holderStrike(history.FPartition, 5, 5.2, 7, heldK), nil, ""},
		{"holder-crashed", held().holderStrike(history.FKillWorker, 4.9, 5.2, 6, heldK),
			[]Reach{{Ops: []int{1, 7}, Process: 0, Key: "k", At: 4.9}}, ""},
		{"holder-crashed", held().holderStrike(history.FKillWorker, 2, 2.1, 3, oneSecond), nil, ""},
		{"holder-crashed", held().fault(history.FKillWorker, 2, 2.5, 0),
			[]Reach{{Ops: []int{1, 5}, Process: 0, Key: "k", At: 2}}, ""},
		{"holder-crashed", held().faultHit(history.FKillWorker, 6, 6.5, &history.Hit{Failpoint: "setnx-expire", Key: "k"}, 1),
			[]Reach{{Ops: []int{7}, Process: 1, Key: "k", At: 6}}, ""},
		{"holder-crashed", held().fault(history.FKillWorker, 2, 2.5, 1), nil, ""}, // a worker that held nothing
		{"holder-crashed", held().fault(history.FPause, 2, 2.5, 0), nil, ""},
		{"node-struck-while-held", held().faultNodes(history.FKill, 2, 3, "lock0"),
			[]Reach{{Ops: []int{1, 5}, Process: 0, Key: "k", At: 2}}, ""},
		{"node-struck-while-held", held().faultNodes(history.FPause, 2, 3, "lock0"), // a server paused
			[]Reach{{Ops: []int{1, 5}, Process: 0, Key: "k", At: 2}}, ""},
		{"node-struck-while-held", held().faultNodes(history.FKill, 0.25, 0.75, "lock0"), nil, ""}, // before the grant
		{"node-struck-while-held", new(builder).acquire(0, 1, 1.25, 1, "a").release(0, 2, 2.5, true, "a").faultNodes(history.FKill, 1.25, 3, "lock0"), // as it was granted
			[]Reach{{Ops: []int{2, 3}, Process: 0, Key: "k", At: 1.25}}, ""},
		{"node-struck-while-held", held().faultNodes(history.FKill, 5, 6, "lock0"), nil, ""}, // as it was given back
		{"node-struck-while-held", held().faultNodes(history.FClock, 2, 3, "lock0"), nil, "clock-moved-while-held"},
		// Struck while held (its nemesis saw a holder), recorded once the
		// server was gone, after the holder had begun its release.
		{"node-struck-while-held", held().nodeStrike(history.FKill, 4.9, 5.2, 6, 1),
			[]Reach{{Ops: []int{1, 7}, Process: 0, Key: "k", At: 4.9}}, ""},
		{"node-struck-while-held", held().nodeStrike(history.FKill, 0.5, 1.01, 3, 1), // as it was granted
			[]Reach{{Ops: []int{2, 3}, Process: 0, Key: "k", At: 1.01}}, ""},
		{"node-struck-while-held", held().nodeStrike(history.FKill, 4.9, 5, 6, 1), // recorded as the release began
			[]Reach{{Ops: []int{1, 6}, Process: 0, Key: "k", At: 4.9}}, ""},
		{"node-struck-while-held", held().nodeStrike(history.FKill, 2, 2.1, 3, 0), nil, ""},     // its nemesis saw no holder
		{"node-struck-while-held", held().nodeStrike(history.FKill, 5.5, 5.6, 6, 1), nil, ""},   // no hold in its strike
		{"node-struck-while-held", held().nodeStrike(history.FKill, 5, 5.1, 6, 1), nil, ""},     // as the release began
		{"node-struck-while-held", held().nodeStrike(history.FKill, 0.5, 1.009, 3, 1), nil, ""}, // just before the grant
		{"node-struck-while-held", held().fault(history.FPause, 2, 3.5, 0), nil, ""},            // a worker, not a node
		{"release-reply-lost", held().pair(1, history.FRelease, "k", 6, 6.5, history.Info, nil, nil),
			[]Reach{{Ops: []int{6, 7}, Process: 1, Key: "k", At: 6}}, ""},
		{"release-reply-lost", held(), nil, ""},
		{"acquire-reply-lost", held().acquireInfo(1, 6, 6.5),
			[]Reach{{Ops: []int{6, 7}, Process: 1, Key: "k", At: 6}}, ""},
		{"acquire-reply-lost", held().acquireFail(1, 6, 6.5), nil, ""},
		{"late-renewal", held().event(4, 0, "watchdog k: released 1.60 s after its last renewal, longer than the 1.00 s lease: the lease ran out"),
			[]Reach{{Ops: []int{4}, Process: 0, At: 4}}, ""},
		{"late-renewal", held().event(4, 0, "renewal of k refused: the key no longer has revision 3 of owner a, the lock is lost; renewal stopped"),
			[]Reach{{Ops: []int{4}, Process: 0, At: 4}}, ""},
		{"late-renewal", held().event(4, 0, "watchdog k: renewal failed (i/o timeout); renewal stopped"), nil, ""},
		{"grant-during-failover", new(builder).fault(history.FFailover, 0.5, 2).acquire(0, 1, 1.01, 1, "a"),
			[]Reach{{Ops: []int{3, 1}, Process: 0, Key: "k", At: 1.01}}, ""},
		{"grant-during-failover", new(builder).fault(history.FFailover, 0.5, 0.9).acquire(0, 1, 1.01, 1, "a"), nil, ""},
		{"grant-during-failover", new(builder).fault(history.FFailover, 1.25, 2).acquire(0, 1, 1.25, 1, "a"), // granted as it started
			[]Reach{{Ops: []int{3, 2}, Process: 0, Key: "k", At: 1.25}}, ""},
		{"grant-during-failover", new(builder).fault(history.FFailover, 0.5, 1.25).acquire(0, 1, 1.25, 1, "a"), // granted as it ended
			[]Reach{{Ops: []int{5, 1}, Process: 0, Key: "k", At: 1.25}}, ""},
		{"grant-during-failover", new(builder).fault(history.FFailover, 1.5, 2).acquire(0, 1, 1.25, 1, "a"), nil, ""}, // held before it
		{"grant-during-failover", new(builder).fault(history.FPartition, 0.5, 2).acquire(0, 1, 1.01, 1, "a"), nil, ""},
		{"grant-after-data-loss", new(builder).faultHit(history.FKill, 0.5, 2, &history.Hit{Nemesis: "restart-lose", Lost: []string{"k"}}).acquire(0, 1, 1.01, 1, "a"),
			[]Reach{{Ops: []int{3, 1}, Process: 0, Key: "k", At: 1.01}}, ""},
		{"grant-after-data-loss", new(builder).faultHit(history.FKill, 0.5, 2, &history.Hit{Nemesis: "kill"}).acquire(0, 1, 1.01, 1, "a"), nil, ""},
		{"grant-after-data-loss", new(builder).faultHit(history.FKill, 1.25, 2, &history.Hit{Nemesis: "restart-lose"}).acquire(0, 1, 1.25, 1, "a"), // granted as it struck
			[]Reach{{Ops: []int{3, 2}, Process: 0, Key: "k", At: 1.25}}, ""},
		{"clock-moved-while-held", held().fault(history.FClock, 2, 3),
			[]Reach{{Ops: []int{1, 5}, Process: 0, Key: "k", At: 2}}, ""},
		{"clock-moved-while-held", held().fault(history.FClock, 0.2, 0.9), nil, ""},
		{"clock-moved-while-held", new(builder).fault(history.FClock, 0.5, 1.25).acquire(0, 1, 1.25, 1, "a").release(0, 2, 2.5, true, "a"), nil, ""}, // put back as it was granted
		{"clock-moved-while-held", new(builder).acquire(0, 1, 1.25, 1, "a").release(0, 2, 2.5, true, "a").fault(history.FClock, 2, 3), nil, ""},      // moved as it was given back
		{"clock-moved-while-held", new(builder).acquire(0, 1, 1.25, 1, "a").release(0, 2, 2.5, true, "a").fault(history.FClock, 1.75, 3),
			[]Reach{{Ops: []int{1, 3}, Process: 0, Key: "k", At: 1.75}}, ""},
		{"clock-moved-while-held", held().fault(history.FSkew, 0.5, 1.5),
			[]Reach{{Ops: []int{3, 1}, Process: 0, Key: "k", At: 1.01}}, ""},
		{"session-ended-in-cs", new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 4, 0, 0).observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
			release(0, 4.01, 4.02, false, "a"), []Reach{{Ops: []int{1, 3, 6}, Process: 0, Key: "k", At: 2.01}}, "wrote-after-lock-lost"},
		{"session-ended-in-cs", expiredAt201().cs(0, 2.6, 2.7, 0, 0).release(0, 2.8, 2.81, false, "a"), nil, "wrote-after-lock-lost"},
		{"session-ended-in-cs", new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 2.25, 2.5, 0, 0).observed(2.3, 2.25, history.ReleaseExpired, "a", "lock0"). // invoked as the lock went
																					release(0, 4, 4.02, false, "a"), []Reach{{Ops: []int{1, 3, 6}, Process: 0, Key: "k", At: 2.25}}, ""},
		{"session-ended-in-cs", new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.5, 2.25, 0, 0).observed(2.3, 2.25, history.ReleaseExpired, "a", "lock0"). // answered as it went
																					release(0, 4, 4.02, false, "a"), []Reach{{Ops: []int{1, 4, 6}, Process: 0, Key: "k", At: 2.25}}, ""},
		{"session-ended-in-cs", new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.5, 2.125, 0, 0).observed(2.3, 2.25, history.ReleaseExpired, "a", "lock0"). // answered just before
																					release(0, 4, 4.02, false, "a"), nil, "server-released-first"},
		{"session-ended-in-cs", new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.3, 2.25, history.ReleaseExpired, "a", "lock0").
			add(2, 0, history.Invoke, history.FCS, "k", nil), // never answered
			[]Reach{{Ops: []int{1, 3}, Process: 0, Key: "k", At: 2.25}}, ""},
		{"server-released-first", expiredAt201().release(0, 2.8, 2.81, false, "a"),
			[]Reach{{Ops: []int{1, 2, 4}, Process: 0, Key: "k", At: 2.01}}, ""},
		{"server-released-first", held().observed(5.05, 5.005, history.ReleaseDeleted, "a", "lock0"), nil, ""}, // its own release
		{"wrote-after-lock-lost", expiredAt201().cs(0, 2.6, 2.7, 0, 0).release(0, 2.8, 2.81, false, "a"),
			[]Reach{{Ops: []int{1, 2, 6}, Process: 0, Key: "k", At: 2.01}}, ""},
		{"wrote-after-lock-lost", expiredAt201().release(0, 2.8, 2.81, false, "a"), nil, "server-released-first"},
		{"wrote-after-it-could-know", expiredAt201().event(2.5, 0, "session expired").cs(0, 2.6, 2.7, 1, 0).release(0, 2.8, 2.81, false, "a"),
			[]Reach{{Ops: []int{1, 2, 3}, Process: 0, Key: "k", At: 2.01}}, "wrote-after-lock-lost"},
		{"wrote-after-it-could-know", expiredAt201().cs(0, 2.499, 2.7, 1, 0).event(2.5, 0, "session expired").release(0, 2.8, 2.81, false, "a"),
			nil, "wrote-after-lock-lost"},
	}
	covered := map[string][2]bool{}
	for _, tt := range tests {
		h := tt.h.build()
		name := tt.cond + " reached"
		if tt.want == nil {
			name = tt.cond + " not reached"
		}
		t.Run(name, func(t *testing.T) {
			c, ok := ConditionNamed(tt.cond)
			if !ok {
				t.Fatalf("no condition %q", tt.cond)
			}
			r := NewConditions().Check(context.Background(), h)
			got := reachesOf(r.Reached, tt.cond)
			if !slices.EqualFunc(got, tt.want, sameReach) {
				t.Errorf("%s: reached %+v, want %+v\n%s", c.Definition, got, tt.want, h)
			}
			if tt.extra != "" && reachesOf(r.Reached, tt.extra) == nil {
				t.Errorf("want %s reached too; got %s", tt.extra, ReachedLine(r.Reached))
			}
			if !r.Advisory || r.Valid != Valid {
				t.Errorf("advisory %v valid %v: the conditions checker decides nothing", r.Advisory, r.Valid)
			}
		})
		cv := covered[tt.cond]
		cv[btoi(tt.want != nil)] = true
		covered[tt.cond] = cv
	}
	for _, c := range Conditions() {
		if cv := covered[c.Name]; !cv[0] || !cv[1] {
			t.Errorf("condition %s needs a history that reaches it and one that does not (have %v)", c.Name, cv)
		}
		if c.Definition == "" || strings.HasSuffix(c.Definition, ".") {
			t.Errorf("condition %s: definition %q: want one line without a final period", c.Name, c.Definition)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reachesOf returns the reaches of the condition called name, nil if none.
func reachesOf(rs []Reached, name string) []Reach {
	for _, r := range rs {
		if r.Name == name {
			if r.Count != len(r.Reaches) {
				return nil
			}
			return r.Reaches
		}
	}
	return nil
}

func sameReach(a, b Reach) bool {
	return slices.Equal(a.Ops, b.Ops) && a.Process == b.Process && a.Key == b.Key && near(a.At, b.At)
}

func TestReachedLineAndResult(t *testing.T) {
	if got := ReachedLine(nil); got != "reached: none" {
		t.Errorf("none: %q", got)
	}
	rs := []Reached{{Name: "holder-paused-past-lease", Count: 3}, {Name: "release-reply-lost", Count: 1}}
	if got := ReachedLine(rs); got != "reached: holder-paused-past-lease ×3, release-reply-lost ×1" {
		t.Errorf("line: %q", got)
	}
	// The default composition carries what its conditions checker found,
	// and results.json lists it.
	r := Default(Options{}).Check(context.Background(), clean())
	if got := reachesOf(r.Reached, "acquire-reply-lost"); len(got) != 1 || got[0].Process != 5 {
		t.Errorf("clean: %s, want process 5's acquire without reply", ReachedLine(r.Reached))
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"reached":[{"name":"acquire-reply-lost","count":1,"reaches":[{"ops":[`) {
		t.Errorf("results.json: %v %.300s", err, b)
	}
	if r := Default(Options{}).Check(context.Background(), held().build()); r.Reached != nil {
		t.Errorf("a clean cycle reached %s", ReachedLine(r.Reached))
	}
}

func TestRegisterConditionRefuses(t *testing.T) {
	for _, c := range []Condition{
		{Name: "", Detect: cutOff},
		{Name: "two words", Detect: cutOff},
		{Name: "no-detector"},
		{Name: "holder-cut-off", Detect: cutOff}, // registered already
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterCondition(%q) did not panic", c.Name)
				}
			}()
			RegisterCondition(c)
		}()
	}
}

// TestEvidenceAskedFirst: a history whose first op is the acquire asked
// at its own time.
func TestEvidenceAskedFirst(t *testing.T) {
	e := &Evidence{a: newAnalysis(new(builder).acquire(0, 1, 1.25, 1, "a").build())}
	if hs := e.Holds(); len(hs) != 1 || hs[0].Asked != at(1) {
		t.Fatalf("holds %+v, want one asked at 1 s", hs)
	}
}

// TestEvidence: the holds a detector reads, when each was asked for, and
// who held what at an instant (from its grant, up to its release).
func TestEvidence(t *testing.T) {
	h := new(builder).acquireFail(0, 0.25, 0.5).acquire(1, 0.5, 0.75, 1, "b").acquire(0, 1, 1.25, 2, "a").
		release(0, 2, 2.5, true, "a").build()
	e := &Evidence{a: newAnalysis(h)}
	hs := e.Holds()
	if len(hs) != 2 || hs[0].Process != 1 || hs[0].Asked != at(0.5) || hs[1].Process != 0 || hs[1].Asked != at(1) ||
		hs[1].Start != at(1.25) || hs[1].End != at(2) || hs[1].Acquire != 5 || hs[1].EndOp != 6 || hs[1].Owner != "a" {
		t.Fatalf("holds %+v", hs)
	}
	for _, tt := range []struct {
		t    float64
		want int
	}{{1.125, 0}, {1.25, 1}, {1.5, 1}, {2, 0}} {
		if got := len(e.HeldAt(0, at(tt.t))); got != tt.want {
			t.Errorf("holds of process 0 at %v s: %d, want %d", tt.t, got, tt.want)
		}
	}
	if len(e.HeldAt(2, at(1.5))) != 0 || len(e.Faults()) != 0 || len(e.Pairs()) != 4 || len(e.History()) != len(h) {
		t.Error("evidence of a history with no faults and three processes")
	}
	if ws := (&Evidence{a: newAnalysis(expiredAt201().release(0, 2.8, 2.81, false, "a").build())}).Windows(); len(ws) != 1 || ws[0].Process != 0 {
		t.Errorf("windows %+v, want process 0's", ws)
	}
}

// TestConditionsSorted: Conditions lists every condition once, by name.
func TestConditionsSorted(t *testing.T) {
	cs := Conditions()
	for i := 1; i < len(cs); i++ {
		if cs[i-1].Name >= cs[i].Name {
			t.Fatalf("conditions out of order: %s before %s", cs[i-1].Name, cs[i].Name)
		}
	}
	if len(cs) < 14 {
		t.Errorf("%d conditions, want the 14 built in at least", len(cs))
	}
}
