package history

import "testing"

// TestOpenPairs checks the process-to-open-invocation map at the edges of
// its slice: the nemesis's -1, 0, the last process it keeps in the slice
// and the first it keeps in its map, and processes below -1.
func TestOpenPairs(t *testing.T) {
	o := newOpenPairs()
	procs := []int{-1, 0, 1, maxDenseProcess - 1, maxDenseProcess, maxDenseProcess + 7, -2, -1000}
	for _, p := range procs {
		if _, ok := o.get(p); ok {
			t.Fatalf("process %d open before any invocation", p)
		}
	}
	for i, p := range procs {
		o.set(p, i*10)
	}
	for i, p := range procs {
		if j, ok := o.get(p); !ok || j != i*10 {
			t.Errorf("get(%d) = %d, %v; want %d, true", p, j, ok, i*10)
		}
	}
	for _, p := range procs {
		o.clear(p)
		if _, ok := o.get(p); ok {
			t.Errorf("process %d still open after clear", p)
		}
	}
	o.clear(12345) // never set: nothing to clear
	if _, ok := o.get(12345); ok {
		t.Error("a process never set is open")
	}
}

// TestPairsOfEveryProcessRange checks that Pairs pairs the ops of
// processes in and out of openPairs' slice alike, interleaved.
func TestPairsOfEveryProcessRange(t *testing.T) {
	procs := []int{NemesisProcess, 0, maxDenseProcess - 1, maxDenseProcess, 1 << 40, -5}
	var h History
	for _, p := range procs {
		h = append(h, Op{Index: len(h), Process: p, Type: Invoke, F: FAcquire, Key: "k"})
	}
	for i := len(procs) - 1; i >= 0; i-- {
		h = append(h, Op{Index: len(h), Process: procs[i], Type: OK, F: FAcquire, Key: "k"})
	}
	pairs, err := h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != len(procs) {
		t.Fatalf("%d pairs, want %d", len(pairs), len(procs))
	}
	for i, pr := range pairs {
		if pr.Invoke.Process != procs[i] || pr.Complete == nil || pr.Complete.Process != procs[i] {
			t.Errorf("pair %d: %v / %v, want process %d's", i, pr.Invoke, pr.Complete, procs[i])
		}
	}
	// A second invocation while one is open is refused, in either range.
	for _, p := range []int{3, 1 << 40} {
		bad := History{{Index: 0, Process: p, Type: Invoke, F: FAcquire}, {Index: 1, Process: p, Type: Invoke, F: FAcquire}}
		if _, err := bad.Pairs(); err == nil {
			t.Errorf("process %d invoked twice while open: no error", p)
		}
	}
}
