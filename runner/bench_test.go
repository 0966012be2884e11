package runner

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/schedule"
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
			res, err := plainLoop(context.Background(), mustResolve(t, tt))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d grants in %s", lock, res.grants, tt.Time)
		})
	}
}

// TestBenchOverheadAccountsForItsParts runs check bench's measurement once,
// briefly, against real Redis servers: the workers' CPU is part of the
// harness's, every grant cost the lock node at least its SET and its
// release, and the lock node's own rate was measured.
func TestBenchOverheadAccountsForItsParts(t *testing.T) {
	needService(t, "redis-set-px")
	tt := quick(t, "redis-set-px", "none", false)
	tt.Time, tt.Workers, tt.Think = 2*time.Second, 3, time.Millisecond
	o, err := BenchOverhead(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", o)
	switch {
	case o.HarnessGrants == 0 || o.PlainGrants == 0:
		t.Fatalf("no grants: harness %d, plain loop %d", o.HarnessGrants, o.PlainGrants)
	case o.HarnessWorkerCPU <= 0 || o.HarnessWorkerCPU+o.HarnessServerCPU > o.HarnessCPU:
		t.Fatalf("workers' CPU %s and servers' %s do not fit in the harness's %s", o.HarnessWorkerCPU, o.HarnessServerCPU, o.HarnessCPU)
	case o.HarnessServerCPU <= 0 || o.PlainServerCPU <= 0 || o.PlainServerCPU > o.PlainCPU:
		t.Fatalf("servers' CPU: harness %s, plain loop %s of %s", o.HarnessServerCPU, o.PlainServerCPU, o.PlainCPU)
	case o.LockNodes != 1:
		t.Fatalf("%d lock nodes, want 1", o.LockNodes)
	case o.HarnessCommands < 2*int64(o.HarnessGrants) || o.PlainCommands < 2*int64(o.PlainGrants):
		t.Fatalf("lock node commands: harness %d for %d grants, plain loop %d for %d", o.HarnessCommands, o.HarnessGrants, o.PlainCommands, o.PlainGrants)
	case o.ServerRate <= 0:
		t.Fatal("the lock node's own rate was not measured")
	}
}

// TestLimitProcs gives the controller one processor per ten workers while
// the workload runs, never more than it had, leaves GOMAXPROCS alone when
// the environment sets it, and gives the processors back.
func TestLimitProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	tests := []struct {
		workers, want int
		env           string
	}{
		{workers: 1, want: 1},
		{workers: 10, want: 1},
		{workers: 11, want: 2},
		{workers: 25, want: 3},
		{workers: 100, want: 4},
		{workers: 10, want: 4, env: "4"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d workers, GOMAXPROCS=%q", tt.workers, tt.env), func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tt.env)
			restore := limitProcs(tt.workers)
			got := runtime.GOMAXPROCS(0)
			restore()
			if got != tt.want {
				t.Fatalf("GOMAXPROCS %d during the workload, want %d", got, tt.want)
			}
			if after := runtime.GOMAXPROCS(0); after != 4 {
				t.Fatalf("GOMAXPROCS %d after, want 4 back", after)
			}
		})
	}
}

// TestArmedSpec: check bench --armed arms faults that parse, and none of
// them turns off the worker's critical section at its grant or its
// release after it (a fault at a cs or release invocation with no offset
// would: run.thenCS, run.thenRelease), so the bench measures the path a
// triggered run takes.
func TestArmedSpec(t *testing.T) {
	s, err := schedule.Parse(ArmedSpec)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Faults) != 4 || len(s.Timed) != 0 {
		t.Fatalf("ArmedSpec has %d triggered and %d timed faults, want 4 and 0", len(s.Faults), len(s.Timed))
	}
	for _, ev := range []string{schedule.EventCS, schedule.EventRelease} {
		if schedule.AtInvocation(s.Faults, ev, time.Second) {
			t.Fatalf("ArmedSpec binds a fault to a %s invocation with no offset", ev)
		}
	}
}
