package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestFaultFields reads a fault's Hit first and its Detail only for a
// history recorded before faults carried the fields: a Hit that says
// otherwise wins over words in Detail.
func TestFaultFields(t *testing.T) {
	fwd := history.Fault{F: history.FClock, Nodes: []string{"lock0"}, Detail: "wall clock of lock0 jumped 9s forward",
		Hit: &history.Hit{Nemesis: "clock", Offset: 2 * time.Second}}
	back := history.Fault{F: history.FClock, Nodes: []string{"lock0"}, Detail: "jumped 9s forward",
		Hit: &history.Hit{Nemesis: "clock-back", Offset: -2 * time.Second, Strobe: true}}
	oldBack := history.Fault{F: history.FClock, Detail: "wall clock of lock0 jumped 2s back, then forward"}
	oldFwd := history.Fault{F: history.FClock, Detail: "wall clock of lock0 jumped 3s forward, and 3s more"}
	unknown := history.Fault{F: history.FClock, Hit: &history.Hit{Nemesis: "clock"}}
	tests := []struct {
		name   string
		f      history.Fault
		strobe bool
		amount string
	}{
		{"forward, by its hit", fwd, false, "2 s "},
		{"back and forth, by its hit", back, true, ""},
		{"back and forth, an old history", oldBack, true, ""},
		{"forward, an old history", oldFwd, false, "3s "},
		{"a hit with no offset", unknown, false, ""},
		{"forward by its hit, whatever its words", history.Fault{F: history.FClock, Detail: "jumped 2s back",
			Hit: &history.Hit{Nemesis: "clock", Offset: time.Second}}, false, "1 s "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strobes(tt.f); got != tt.strobe {
				t.Errorf("strobes %v, want %v", got, tt.strobe)
			}
			if got := jumpAmount(tt.f); !tt.strobe && got != tt.amount { // asked only of a forward jump
				t.Errorf("jumpAmount %q, want %q", got, tt.amount)
			}
		})
	}
	if why := clockWhy(fwd); !strings.Contains(why, "jumped 2 s forward") {
		t.Errorf("clockWhy: %q", why)
	}
	cases := []struct {
		name string
		f    history.Fault
		want bool
	}{
		{"a takeover, by its hit", history.Fault{F: history.FFailover, Hit: &history.Hit{Promoted: true, Takeover: true}}, true},
		{"sentinels, by its hit, whatever its words", history.Fault{F: history.FFailover, Detail: "TAKEOVER", Hit: &history.Hit{Promoted: true}}, false},
		{"a takeover, an old history", history.Fault{F: history.FFailover, Detail: "(CLUSTER FAILOVER TAKEOVER)"}, true},
		{"no promotion yet: its words", history.Fault{F: history.FFailover, Detail: "x", Hit: &history.Hit{}}, false},
	}
	for _, c := range cases {
		if got := takeover(c.f); got != c.want {
			t.Errorf("%s: takeover %v, want %v", c.name, got, c.want)
		}
	}
	if why := failoverWhy(cases[0].f); !strings.Contains(why, "took over its slots") {
		t.Errorf("failoverWhy: %q", why)
	}
}

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
