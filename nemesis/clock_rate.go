package nemesis

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The ops of clock-rate.
const (
	// FDrift starts a lock node's wall clock running fast; FUndrift puts it
	// back.
	FDrift   = "drift"
	FUndrift = "undrift"
)

func init() {
	Register(Kind{Name: "clock-rate", ClockShim: true, New: newClockRate,
		Summary: "run a lock server's wall clock twice as fast as real time from the fault's start (clock shim, its offset advanced every 10 ms; the leader where there is one): " +
			"a lease judged by that clock ends after half its time, with no jump; real time again after",
		Ops: history.FaultOps{Start: FDrift, End: FUndrift, Class: history.ClassClock, Exercise: history.ExerciseNode}})
}

// Clock rate's defaults: how fast the clock runs, and how often the offset
// is advanced.
const (
	DriftRate = 2.0
	DriftStep = 10 * time.Millisecond
)

// ClockRate makes one lock node's wall clock run at Rate times real time
// from the fault's start: a lease the server times by its wall clock (a
// Redis PX expiry) runs out after 1/Rate of it, with no jump a reader
// could notice. The shim reads an offset only, so the nemesis advances it
// every Step by Step x (Rate - 1), computed from the real time since the
// fault began: a late step makes a larger step, never a wrong rate, and
// the clock never goes back while the fault lasts. The end op puts it back
// to real time, a backward step of what it gained.
type ClockRate struct {
	*drivenClock
	// Rate is how fast the clock runs (2: twice as fast).
	Rate float64
}

var _ Nemesis = (*ClockRate)(nil)

func newClockRate(env Env, rng *rand.Rand) (Nemesis, error) {
	d, err := newDrivenClock(env, rng, "clock-rate", FDrift, FUndrift)
	if err != nil {
		return nil, err
	}
	n := &ClockRate{drivenClock: d, Rate: DriftRate}
	d.Step = DriftStep
	d.at = func(elapsed time.Duration, _ int) time.Duration {
		return time.Duration(float64(elapsed) * (n.Rate - 1))
	}
	d.mark = func(node string, hit *history.Hit) string {
		hit.Rate = n.Rate
		return fmt.Sprintf("wall clock of %s running %sx as fast as real time", node, strconv.FormatFloat(n.Rate, 'g', 4, 64))
	}
	return n, nil
}
