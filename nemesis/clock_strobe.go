package nemesis

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The ops of clock-strobe.
const (
	// FStrobe starts a lock node's wall clock strobing; FUnstrobe puts it
	// back.
	FStrobe   = "strobe"
	FUnstrobe = "unstrobe"
)

func init() {
	Register(Kind{Name: "clock-strobe", ClockShim: true, New: newClockStrobe,
		Summary: "strobe a lock server's wall clock (clock shim; the leader where there is one): real time and 3 x the lease ahead in turn, " +
			"every 25 ms while the fault lasts (Jepsen's strobe): a key set in a low phase expires in the next high one, one set high lives 3 leases too long; real time again after",
		Ops: history.FaultOps{Start: FStrobe, End: FUnstrobe, Class: history.ClassClock, Exercise: history.ExerciseNode}})
}

// StrobeStep is how long a strobing clock stays at each of its two offsets.
const StrobeStep = 25 * time.Millisecond

// ClockStrobe makes one lock node's wall clock oscillate quickly between
// real time and High ahead, every Step, for the fault's duration (Jepsen's
// clock nemesis strobes the same way). Redis judges a key's PX expiry by
// its wall clock: a key set while the clock reads real time expires at the
// next swing ahead, long before its lease, and one set while it is ahead
// outlives its lease by High once the clock swings back.
type ClockStrobe struct {
	*drivenClock
	// High is the offset of the clock's high phase.
	High time.Duration
}

var _ Nemesis = (*ClockStrobe)(nil)

func newClockStrobe(env Env, rng *rand.Rand) (Nemesis, error) {
	d, err := newDrivenClock(env, rng, "clock-strobe", FStrobe, FUnstrobe)
	if err != nil {
		return nil, err
	}
	n := &ClockStrobe{drivenClock: d, High: JumpLeases * leaseOf(env)}
	d.Step = StrobeStep
	d.at = func(_ time.Duration, k int) time.Duration {
		if k%2 == 0 {
			return n.High
		}
		return 0
	}
	d.mark = func(node string, hit *history.Hit) string {
		hit.Offset, hit.Strobe = n.High, true
		return fmt.Sprintf("wall clock of %s strobing between real time and %s ahead every %s", node, seconds(n.High), seconds(n.Step))
	}
	return n, nil
}
