package checker

import (
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestRulesReadHitFirst: an exercise rule reads what a fault's Hit says and
// falls back on its words only when it has no Hit.
func TestRulesReadHitFirst(t *testing.T) {
	x := &exerciseRun{}
	crash := func(hit *history.Hit) *fault {
		return &fault{Fault: history.Fault{F: history.FKillWorker, Targets: []int{1}, Detail: "SIGKILL worker 1, stopped at failpoint after-acquire"}, Hit: hit}
	}
	if why := judgeCrash(x, crash(&history.Hit{Nemesis: "crash"})); why == "" {
		t.Error("a crash whose Hit says it hit no holder and no failpoint counted by its words")
	}
	if why := judgeCrash(x, crash(&history.Hit{Nemesis: "crash", Failpoint: "after-acquire"})); why != "" {
		t.Errorf("a crash at a failpoint by its Hit: %q", why)
	}
	if why := judgeCrash(x, crash(nil)); why != "" {
		t.Errorf("an old history's crash at a failpoint by its words: %q", why)
	}
	fo := func(detail string, hit *history.Hit) *fault {
		return &fault{Fault: history.Fault{F: history.FFailover, Detail: detail}, Hit: hit}
	}
	if promoted(fo("sentinels promoted redis1", &history.Hit{})) {
		t.Error("a failover whose Hit says no promotion counted as promoted by its words")
	}
	if !promoted(fo("sentinels promoted redis1", nil)) || promoted(fo("no promotion within 10s", nil)) {
		t.Error("an old history's promotion misread from its words")
	}
	words := "SIGKILL the master right after it granted k0"
	if why := judgeFailoverKill(x, fo(words, &history.Hit{Promoted: true})); why == "" {
		t.Error("a failover-kill whose Hit says nothing unreplicated counted by its words")
	}
	if why := judgeFailoverKill(x, fo(words+", promoted redis1", nil)); why != "" {
		t.Errorf("an old history's failover-kill by its words: %q", why)
	}
	if why := judgeFailoverKill(x, fo("x", &history.Hit{Promoted: true, Unreplicated: true})); why != "" {
		t.Errorf("a failover-kill by its Hit: %q", why)
	}
}
