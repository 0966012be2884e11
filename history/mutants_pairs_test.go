package history

import "testing"

// The tests of this file pin lines changed by 7427bf6 (Pairs' open
// invocations in a slice) that gremlins' mutants of them (make mutation
// MUTATION_DIFF=7427bf6~1) showed no other test pinned; each names the
// mutants it kills.

// TestOpenPairsSliceGrowsToTheLargestProcess checks that openPairs' slice
// grows to just the largest process set so far (process p at p+1), however
// many times it grows: the slice stands for a map to save a long run's
// memory, so it holds no more than the processes need. The growth is
// invisible to get, set and clear (slots past the largest process are
// none open), so this reads the slice's length. Kills history.go:126:45
// (`p+2-len(o.dense)` → `p+2+len(o.dense)`, both INVERT_NEGATIVES and
// ARITHMETIC_BASE).
func TestOpenPairsSliceGrowsToTheLargestProcess(t *testing.T) {
	o := newOpenPairs()
	for _, c := range []struct {
		p, wantLen int
	}{
		{NemesisProcess, 1},
		{0, 2},
		{5, 7},
		{3, 7}, // inside the slice: no growth
		{6, 8},
		{40, 42},
		{maxDenseProcess - 1, maxDenseProcess + 1},
		{maxDenseProcess, maxDenseProcess + 1}, // in the map
	} {
		o.set(c.p, c.p+100)
		if len(o.dense) != c.wantLen {
			t.Errorf("after set(%d): slice of %d, want %d", c.p, len(o.dense), c.wantLen)
		}
		if j, ok := o.get(c.p); !ok || j != c.p+100 {
			t.Errorf("get(%d) = %d, %v; want %d, true", c.p, j, ok, c.p+100)
		}
	}
}
