package runner

import (
	"context"
	"io"
	"math"
	"testing"
	"time"
)

// TestBenchObserver runs check bench --observer's measurement once,
// briefly, against a real Redis server: both runs granted, the first had
// the observer (its probes were seen), and the cost is what the two rates
// say.
func TestBenchObserver(t *testing.T) {
	needService(t, "redis-set-px")
	tt := quick(t, "redis-set-px", "none", false)
	tt.Time, tt.Workers, tt.Think = 2*time.Second, 3, time.Millisecond
	c, err := BenchObserver(context.Background(), tt, io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", c)
	switch {
	case c.ObservedGrants == 0 || c.UnobservedGrants == 0:
		t.Fatalf("no grants: with the observer %d, without %d", c.ObservedGrants, c.UnobservedGrants)
	case !c.HasObserver:
		t.Fatal("the run with the observer saw no probe")
	case math.Abs(c.Cost-(1-c.Observed/c.Unobserved)) > 1e-9:
		t.Fatalf("cost %v for %v and %v grants/s", c.Cost, c.Observed, c.Unobserved)
	case c.ObservedCommands == 0 || c.UnobservedCommands == 0:
		t.Fatalf("lock node commands: with %d, without %d", c.ObservedCommands, c.UnobservedCommands)
	}
}
