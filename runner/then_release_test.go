package runner

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// releaseInvocations counts the releases a history invoked.
func releaseInvocations(h history.History) int64 {
	n := int64(0)
	for _, op := range h {
		if op.F == history.FRelease && op.Type == history.Invoke {
			n++
		}
	}
	return n
}

// TestWorkersReleaseOnTheirOwn runs the built-in worker on a real Redis
// node, its stdout on the run's mux. With no fault every release is one
// the worker began on its own after its critical section, and the run is
// valid: its holders' releases are recorded before the grants they let
// happen (no false double holder at a critical section of 0 s) and
// before the server's release the observer reports (no false lost lock at
// one of 10 ms, a key the observer reads). A planted bug that lets go of
// the lock at every odd process's grant is still a double holder; a fault
// bound to a release's invocation itself keeps every release the
// controller's.
func TestWorkersReleaseOnTheirOwn(t *testing.T) {
	tests := []struct {
		name  string
		think time.Duration
		nem   string
		plant string
		own   bool // every release is the worker's own
		want  checker.Validity
	}{
		{"no think time", 0, "none", "", true, checker.Valid},
		{"observed keys", 10 * time.Millisecond, "none", "", true, checker.Valid},
		{"planted double holder", 0, "none", workloads.PlantDropLock, true, checker.Invalid},
		// The fault never fires (its millionth release): not exercised.
		{"fault at a release's invocation", 0, "pause@release#1000000", "", false, checker.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			test := quick(t, "redis-set-px", tt.nem, false)
			test.Workers, test.Think, test.Time, test.Lease = 10, tt.think, patient, safeLease
			test.Until = untilGrants(1000)
			if tt.think > 0 {
				test.Until = untilGrants(200)
			}
			if tt.plant != "" {
				test.WorkerEnv = append(test.WorkerEnv, workloads.PlantEnv+"="+tt.plant)
				test.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder")
			}
			out, err := Run(context.Background(), test, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if out.Result.Valid != tt.want {
				t.Fatalf("verdict %v, want %v: %+v", out.Result.Valid, tt.want, kinds(out.Result, false))
			}
			h, err := history.ReadFile(out.Dir + "/history.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			rel := releaseInvocations(h)
			switch {
			case rel == 0:
				t.Fatal("no release invoked")
			case tt.own && out.OwnReleases != rel:
				t.Fatalf("%d of %d releases the workers' own, want all", out.OwnReleases, rel)
			case !tt.own && out.OwnReleases != 0:
				t.Fatalf("%d of %d releases the workers' own, want none", out.OwnReleases, rel)
			}
			assertNoChildren(t)
		})
	}
}
