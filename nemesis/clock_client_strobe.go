package nemesis

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func init() {
	Register(Kind{Name: "clock-client-strobe",
		Exercise: &history.ExerciseRule{F: history.FSkew, Shape: history.ExerciseClockClient, Matches: byHitOnly, Missed: "no worker with a strobing clock tried to take a lock while another worker held it"}, ClientClocks: true, New: newClockClientStrobe,
		Summary: "strobe the client clock of every worker that does not hold the lock (the holders keep the real clock): 3 x the lease ahead and real time in turn, " +
			"every 25 ms while the fault lasts; real time again after: a lock client that judges expiry by its own clock takes a live lock in a high phase (M5)"})
}

// ClockClientStrobe is clock-client with a strobing skew: when the fault
// starts, every worker that does not hold a lock (all but one random
// worker, when none does) gets a client clock that swings between High
// ahead and real time every Step, until the end op puts every clock back.
// A skewed waiter that tries the lock in a high phase judges the holder's
// expiry timestamp passed and takes the lock over. It records its fault
// with clock-client's ops (skew, unskew) and Hit.Strobe.
type ClockClientStrobe struct {
	*drivenClientClocks
	// High is the clocks' offset in a high phase.
	High time.Duration
}

var _ Nemesis = (*ClockClientStrobe)(nil)

func newClockClientStrobe(env Env, rng *rand.Rand) (Nemesis, error) {
	d, err := newDrivenClientClocks(env, rng, "clock-client-strobe", StrobeStep)
	if err != nil {
		return nil, err
	}
	n := &ClockClientStrobe{drivenClientClocks: d, High: JumpLeases * leaseOf(env)}
	d.at = func(_ time.Duration, k int) time.Duration {
		if k%2 == 1 {
			return 0
		}
		return n.High
	}
	d.mark = func(procs []int, hit *history.Hit) string {
		hit.Offset, hit.Strobe = n.High, true
		return fmt.Sprintf("client clocks of processes %s strobing between %s ahead and real time every %s", joinInts(procs), seconds(n.High), seconds(n.Step))
	}
	return n, nil
}
