package heapbudget

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestLimit checks the limit for what is live: the budget while it fits,
// a quarter over what is live after.
func TestLimit(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, Budget},
		{100 << 20, Budget},
		{640 << 20, Budget},            // 800 MiB exactly
		{641 << 20, 801<<20 + 256<<10}, // a quarter over 641 MiB
		{4 << 30, 5 << 30},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := Limit(c.live); got != c.want {
			t.Errorf("Limit(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestStartSetsAndStopRemoves checks that Start sets the budget as Go's
// soft memory limit and stop removes it; and that GOMEMLIMIT is left to
// the user.
func TestStartSetsAndStopRemoves(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	stop := Start()
	if got := debug.SetMemoryLimit(-1); got != Budget {
		t.Errorf("limit %d after Start, want %d", got, Budget)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after stop, want none", got)
	}

	t.Setenv("GOMEMLIMIT", "2GiB")
	debug.SetMemoryLimit(2 << 30)
	stop = Start()
	if got := debug.SetMemoryLimit(-1); got != 2<<30 {
		t.Errorf("limit %d with GOMEMLIMIT set, want the user's %d", got, 2<<30)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != 2<<30 {
		t.Errorf("stop changed the user's limit to %d", got)
	}
}

// TestRetained checks that Retained runs f with the collector off and
// gives the collector back its setting after, also when f panics.
func TestRetained(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	ran := false
	Retained(func() {
		ran = true
		if got := debug.SetGCPercent(-1); got != -1 {
			t.Errorf("GC percent %d inside Retained, want -1 (off)", got)
		}
	})
	if !ran {
		t.Fatal("Retained did not run f")
	}
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GC percent %d after Retained, want 150 back", got)
	}
	func() {
		defer func() { _ = recover() }()
		Retained(func() { panic("decode") })
	}()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GC percent %d after a panic in Retained, want 150 back", got)
	}
}
