package runner

import (
	"os"
	"runtime"
)

// workersPerProc is how many worker slots one processor of the controller
// serves while the workload runs: at --think 0 the controller (its slot
// loops, the recorder and every proxied connection of ten workers) used
// about half a core (docs/performance.md).
const workersPerProc = 10

// limitProcs gives the controller's Go runtime one processor per
// workersPerProc worker slots (at most what it has) while the workload
// runs, unless the GOMAXPROCS environment variable is set, and returns the
// function that gives the processors back (the checkers run in parallel).
// The controller is mostly idle between short bursts of work; with a spare
// processor, each burst wakes a second thread to run a goroutine that the
// first could have run (a futex wake-up and a context switch each time).
// With ten workers on one processor, the controller's CPU per grant fell
// by a third and the harness made 10-15 % more grants per second
// (docs/performance.md).
func limitProcs(workers int) (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	n := min(runtime.GOMAXPROCS(0), max(1, (workers+workersPerProc-1)/workersPerProc))
	prev := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(prev) }
}
