package checker

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// failoverHistory: clean cycles, then the master is lost at 2.10 s and the
// sentinels promote a replica. With stay set (a cut), process 3 stays on the
// old master's side and is granted the lock there at 2.60 s; process 1 is
// granted it by the new master at 2.70 s, while 3 still holds it. Without
// stay (the master was killed), 3's grant at 2.05 s was acknowledged just
// before the master died and never replicated.
func failoverHistory(stay []int, detail string) history.History {
	b := (&builder{}).cycles(41, 0, 1, 0, false)
	b.pair(history.NemesisProcess, history.FFailover, "", 2.10, 2.50, history.Info, nil,
		&history.Value{Extra: &history.Extra{Nodes: []string{"redis0"}, Targets: stay, Detail: detail}})
	b.pair(history.NemesisProcess, history.FHeal, "", 5.49, 5.50, history.Info, nil, &history.Value{Extra: &history.Extra{Nodes: []string{"redis0"}}})
	t3 := 2.60
	if len(stay) == 0 {
		t3 = 2.05
	}
	b.acquire(3, t3, t3+0.01, 60, "o3").cs(3, 2.80, 2.90, 41, 0).release(3, 2.95, 2.96, true, "o3")
	b.acquire(1, 2.70, 2.71, 42, "o1").cs(1, 2.72, 2.74, 41, 0).release(1, 2.75, 2.76, true, "o1")
	return b.build()
}

func TestFailoverStory(t *testing.T) {
	tests := []struct {
		name   string
		stay   []int
		detail string
		want   []string
	}{
		{"split brain", []int{3}, "cut master redis0 off from replicas and sentinels; sentinels promoted redis1 after 0.4 s; process 3 still reaches redis0 and nothing else",
			[]string{"A failover of master redis0 (cut master redis0 off", "promoted redis1",
				"a replica was promoted while the old master still granted locks to process 3 (split brain)",
				"never replicated"}},
		{"killed master", nil, "SIGKILL master redis0; sentinels promoted redis2 after 2.9 s",
			[]string{"A failover of master redis0 (SIGKILL master redis0", "after the master was lost",
				"acknowledged but not yet replicated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Default(Options{}).Check(context.Background(), failoverHistory(tt.stay, tt.detail))
			if res.Valid != Invalid {
				t.Fatalf("valid = %v, want invalid", res.Valid)
			}
			i := slices.IndexFunc(res.Anomalies, func(a Anomaly) bool { return a.Kind == "double-holder" })
			if i < 0 {
				t.Fatalf("no double-holder anomaly in %+v", res.Anomalies)
			}
			a := res.Anomalies[i]
			if !slices.Equal(a.Processes, []int{3, 1}) {
				t.Errorf("processes %v, want [3 1]", a.Processes)
			}
			for _, w := range tt.want {
				if !strings.Contains(a.Explanation, w) {
					t.Errorf("explanation lacks %q:\n%s", w, a.Explanation)
				}
			}
		})
	}
}
