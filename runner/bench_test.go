package runner

import (
	"context"
	"testing"
	"time"
)

// TestPlainLoopLibraries runs the plain loops of the designs that run in
// their own worker (Design.Plain) against a real cluster, as check bench
// does: each must run and report its grants.
func TestPlainLoopLibraries(t *testing.T) {
	for _, lock := range []string{"redis-py-lock", "curator-mutex"} {
		t.Run(lock, func(t *testing.T) {
			needService(t, lock)
			tt := Test{Lock: lock, Nemesis: "none", Workers: 3, Seed: 1, Time: 3 * time.Second, Think: time.Millisecond}
			tt.Defaults()
			grants, _, err := plainLoop(context.Background(), tt)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d grants in %s", lock, grants, tt.Time)
		})
	}
}
