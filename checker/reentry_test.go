package checker

import (
	"slices"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestWithoutReentry: the grants to a holder of its own lock and the
// releases above depth one are dropped; a crash, or the release at depth
// one, ends the hold; a lock that never grants its holder twice keeps
// every pair.
func TestWithoutReentry(t *testing.T) {
	type step struct {
		p   int
		f   string
		key string
		typ history.Type
	}
	acq := func(p int, key string) step { return step{p, history.FAcquire, key, history.OK} }
	rel := func(p int, key string) step { return step{p, history.FRelease, key, history.OK} }
	cases := []struct {
		name  string
		steps []step
		kept  []int // the steps kept, by position
	}{
		{"no re-entry", []step{acq(0, "k"), rel(0, "k"), acq(1, "k"), rel(1, "k")}, []int{0, 1, 2, 3}},
		{"depth two", []step{acq(0, "k"), acq(0, "k"), rel(0, "k"), rel(0, "k"), acq(1, "k")}, []int{0, 3, 4}},
		{"depth three", []step{acq(0, "k"), acq(0, "k"), acq(0, "k"), rel(0, "k"), rel(0, "k"), rel(0, "k")}, []int{0, 5}},
		{"another key is another lock", []step{acq(0, "k"), acq(0, "j"), rel(0, "j"), rel(0, "k")}, []int{0, 1, 2, 3}},
		{"another process's grant is no re-entry", []step{acq(0, "k"), acq(1, "k"), rel(1, "k"), rel(0, "k")}, []int{0, 1, 2, 3}},
		{"a failed acquire adds no depth", []step{acq(0, "k"), {0, history.FAcquire, "k", history.Fail}, rel(0, "k"), acq(1, "k")}, []int{0, 1, 2, 3}},
		{"a crash ends every depth", []step{acq(0, "k"), acq(0, "k"), {0, history.FCrash, "", history.Info}, acq(0, "k"), rel(0, "k")}, []int{0, 2, 3, 4}},
		{"a release in doubt counts as one", []step{acq(0, "k"), acq(0, "k"), {0, history.FRelease, "k", history.Info}, rel(0, "k")}, []int{0, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pairs []history.Pair
			for i, s := range c.steps {
				inv := &history.Op{Index: 2 * i, Process: s.p, Type: history.Invoke, F: s.f, Key: s.key}
				done := &history.Op{Index: 2*i + 1, Process: s.p, Type: s.typ, F: s.f, Key: s.key}
				pairs = append(pairs, history.Pair{Invoke: inv, Complete: done})
			}
			var kept []int
			for _, pr := range withoutReentry(pairs) {
				kept = append(kept, pr.Invoke.Index/2)
			}
			if !slices.Equal(kept, c.kept) {
				t.Errorf("kept %v, want %v", kept, c.kept)
			}
		})
	}
}
