package nemesis

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
