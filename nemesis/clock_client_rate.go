package nemesis

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func init() {
	Register(Kind{Name: "clock-client-rate",
		Exercise: &history.ExerciseRule{F: history.FSkew, Shape: history.ExerciseClockClient, Matches: byHitOnly, Missed: "no worker whose clock ran fast tried to take a lock while another worker held it"}, ClientClocks: true, New: newClockClientRate,
		Summary: "run the client clock of every worker that does not hold the lock (the holders keep the real clock) twice as fast as real time from the fault's start " +
			"(its offset advanced every 10 ms); real time again after: a lock client that judges expiry by its own clock sees a live lock's expiry pass early, with no jump (M5)"})
}

// ClockClientRate is clock-client with a clock that runs fast instead of
// jumping: when the fault starts, every worker that does not hold a lock
// (all but one random worker, when none does) gets a client clock that
// runs at Rate times real time, until the end op puts every clock back. A
// lock client that judges a holder's expiry by its own clock (an expiry
// timestamp in the lock's value) sees it pass after 1/Rate of the lease,
// once its clock has gained enough. The offset is advanced every Step by
// Step x (Rate - 1), computed from the real time since the fault began, as
// clock-rate does for a server's clock. It records its fault with
// clock-client's ops (skew, unskew) and Hit.Rate.
type ClockClientRate struct {
	*drivenClientClocks
	// Rate is how fast the clocks run (2: twice as fast).
	Rate float64
}

var _ Nemesis = (*ClockClientRate)(nil)

func newClockClientRate(env Env, rng *rand.Rand) (Nemesis, error) {
	d, err := newDrivenClientClocks(env, rng, "clock-client-rate", DriftStep)
	if err != nil {
		return nil, err
	}
	n := &ClockClientRate{drivenClientClocks: d, Rate: DriftRate}
	d.at = func(elapsed time.Duration, _ int) time.Duration {
		return time.Duration(float64(elapsed) * (n.Rate - 1))
	}
	d.mark = func(procs []int, hit *history.Hit) string {
		hit.Rate = n.Rate
		return fmt.Sprintf("client clocks of processes %s running %sx as fast as real time", joinInts(procs), strconv.FormatFloat(n.Rate, 'g', 4, 64))
	}
	return n, nil
}
