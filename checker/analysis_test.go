package checker

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestPairUpMatchesHistoryPairs checks that the checkers' own pairing agrees
// with history.Pairs, the contract, on valid, random and malformed histories.
func TestPairUpMatchesHistoryPairs(t *testing.T) {
	hs := []history.History{clean(), plainDelForeignRelease(), noGrants(), {},
		{{Process: 0, Type: history.OK, F: history.FAcquire}},
		{{Process: 0, Type: history.Invoke, F: history.FAcquire}, {Process: 0, Type: history.Invoke, F: history.FRelease}},
		{{Process: 0, Type: history.Invoke, F: history.FAcquire}, {Process: 0, Type: history.OK, F: history.FRelease}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	types := []history.Type{history.Invoke, history.Invoke, history.OK, history.Fail, history.Info}
	fs := []string{history.FAcquire, history.FRelease}
	for range 500 {
		var h history.History
		for i := range rng.IntN(12) {
			h = append(h, history.Op{Index: i, Process: rng.IntN(3) - 1, Type: types[rng.IntN(len(types))], F: fs[rng.IntN(2)]})
		}
		hs = append(hs, h)
	}
	for i, h := range hs {
		want, wantErr := h.Pairs()
		got, gotErr := pairUp(h)
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Fatalf("history %d: error %v, want %v", i, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("history %d: %d pairs, want %d", i, len(got), len(want))
		}
		for j := range want {
			w, g := want[j], got[j]
			if g.Invoke.Index != w.Invoke.Index || (g.Complete == nil) != (w.Complete == nil) ||
				(g.Complete != nil && g.Complete.Index != w.Complete.Index) ||
				g.Type() != w.Type() || g.End() != w.End() || g.Value() != w.Value() {
				t.Fatalf("history %d pair %d: got %+v, want %+v", i, j, g, w)
			}
		}
	}
}
