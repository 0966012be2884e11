package runner

import (
	"context"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// The runner tests wait for the event they need (Test.Until) within a
// generous upper bound of time, instead of counting on a rate of grants in
// a fixed time: on a loaded machine a run makes fewer grants, never
// different ones.

// patient is the upper bound of a run that waits for an event: long enough
// for a machine whose two cores are busy with other work.
const patient = 90_000_000_000 // 90 s, as a time.Duration

// untilGrants holds once n acquires have been granted.
func untilGrants(n int) func(history.History) bool {
	return func(h history.History) bool { return countGrants(h) >= n }
}

func countGrants(h history.History) int {
	n := 0
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK {
			n++
		}
	}
	return n
}

// untilAnomaly holds once checker c finds an anomaly of kind, whose story
// contains each of story, in the history recorded so far (with ops still
// in flight, which the checkers take as possibly effective, so what a
// prefix shows the whole run shows too). Naming the story waits for the
// anomaly the fault causes, not one a loaded machine causes on its own (a
// lease that ran out while a worker waited for a core).
func untilAnomaly(c checker.Checker, kind string, story ...string) func(history.History) bool {
	return func(h history.History) bool {
	anomalies:
		for _, a := range c.Check(context.Background(), h).Anomalies {
			if a.Kind != kind {
				continue
			}
			for _, s := range story {
				if !strings.Contains(a.Explanation, s) {
					continue anomalies
				}
			}
			return true
		}
		return false
	}
}

// safeLease is the lease of a run that must be valid: long enough that no
// lease runs out because a worker waited for a core on a loaded machine.
const safeLease = 10_000_000_000 // 10 s, as a time.Duration

// all holds once every one of fs holds.
func all(fs ...func(history.History) bool) func(history.History) bool {
	return func(h history.History) bool {
		for _, f := range fs {
			if !f(h) {
				return false
			}
		}
		return true
	}
}

// untilFaultEnded holds once a fault has been undone and a grant was made
// after that.
func untilFaultEnded(h history.History) bool {
	fs := h.Faults()
	if len(fs) == 0 || len(fs[0].Ops) < 2 {
		return false
	}
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK && op.Time > fs[0].End {
			return true
		}
	}
	return false
}

// untilSales holds once more than n items were sold (the inventory
// workload's cs ok ops that wrote).
func untilSales(n int) func(history.History) bool {
	return func(h history.History) bool {
		sold := 0
		for _, op := range h {
			if op.F == history.FCS && op.Type == history.OK && op.Value != nil && op.Value.Wrote != nil {
				sold++
			}
		}
		return sold > n
	}
}
