package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestClockFaultStories checks that a double holder's story names the clock
// fault that let the second holder in.
func TestClockFaultStories(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     string
		v     *history.Value
		wants []string
	}{
		{"server clock forward", history.FClock,
			&history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "wall clock of lock0 jumped 3 s forward, and 3 s more every 500 ms"}},
			[]string{"A clock jump of node lock0 from 0.20 s to 3.20 s was in force: lock0's wall clock jumped 3 s forward, so the lock key's PX expiry passed early (Redis judges expiry by its wall clock)."}},
		{"server clock back", history.FClock,
			&history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "wall clock of lock0 jumped 3 s back, then forward to real time and back again every 500 ms"}},
			[]string{"lock0's wall clock was jumping back and forth"}},
		{"redlock clock jump", history.FClockJump,
			&history.Value{Extra: &history.Extra{Nodes: []string{"lock2"}, Detail: "lock2's wall clock jumped 1m0s forward"}},
			[]string{"lock2's wall clock jumped forward, so the first holder's key on lock2 expired early and lock2 counted towards a second majority"}},
		{"client clock skew", history.FSkew,
			&history.Value{Extra: &history.Extra{Targets: []int{1}, Detail: "clock of process 1 set 3 s ahead"}},
			[]string{"A client clock skew of process 1 from 0.20 s to 3.20 s was in force: the clocks of process 1 were skewed, so a client judged a live lock expired"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end, _ := history.EndOf(tc.f)
			b := &builder{}
			b.pair(history.NemesisProcess, tc.f, "", 0.199, 0.2, history.Info, nil, tc.v)
			b.pair(history.NemesisProcess, end, "", 3.199, 3.2, history.Info, nil, nil)
			h := b.acquire(0, 0, 0.1, 1, "a").
				cs(0, 0.15, 0.5, 0, 0).
				acquire(1, 0.25, 0.3, 2, "b").
				cs(1, 0.31, 0.4, 0, 0).
				release(1, 0.41, 0.42, true, "b").
				release(0, 0.6, 0.61, false, "a").build()
			r := NewOverlap(Options{}).Check(context.Background(), h)
			if r.Valid != Invalid {
				t.Fatalf("verdict %v, want invalid", r.Valid)
			}
			a := find(t, r, "double-holder")
			for _, w := range tc.wants {
				if !strings.Contains(a.Explanation, w) {
					t.Errorf("explanation:\n%s\nwant it to contain\n%s", a.Explanation, w)
				}
			}
		})
	}
	// A fault of another kind gets no clock sentence.
	if w := clockWhy(history.Fault{F: history.FKill, Nodes: []string{"lock0"}}); w != "" {
		t.Errorf("kill: %q", w)
	}
}
