package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Schedule runs faults at seeded random times: it waits a jittered Interval,
// picks one nemesis at random, applies its fault, keeps it for Duration, ends
// it, and repeats while a whole fault still fits before the deadline. Every
// op goes through Record, which stamps and stores it in the history.
type Schedule struct {
	Nemeses  []Nemesis
	Interval time.Duration
	Duration time.Duration
	Rng      *rand.Rand
	Record   func(history.Op) history.Op
	// Applied, when set, is told of every fault the schedule applied: the
	// index of its nemesis in Nemeses and the completions of its start and
	// end ops (for the run's schedule record).
	Applied func(i int, start, end history.Op)
}

// Run applies faults until the deadline or until ctx is done, then heals
// every nemesis. It returns the heal error, if any.
func (s Schedule) Run(ctx context.Context, deadline time.Time) error {
	if len(s.Nemeses) == 0 {
		return nil
	}
	for {
		wait := s.Interval/2 + time.Duration(s.Rng.Int64N(int64(s.Interval)+1))
		if time.Now().Add(wait + s.Duration).After(deadline) {
			break
		}
		if !sleep(ctx, wait) {
			break
		}
		i := s.Rng.IntN(len(s.Nemeses))
		n := s.Nemeses[i]
		start, end := n.Fs()
		began := s.apply(ctx, n, start)
		sleep(ctx, s.Duration)
		if ctx.Err() == nil {
			s.applied(i, began, s.apply(context.WithoutCancel(ctx), n, end))
			continue
		}
		// Stopped early (an anomaly, an interrupt): the end op may not wait
		// long for what follows the undo (a failover's demotion); Heal
		// below still undoes whatever it left.
		endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StopEndWait)
		s.applied(i, began, s.apply(endCtx, n, end))
		cancel()
		break
	}
	return s.Heal(context.WithoutCancel(ctx))
}

func (s Schedule) apply(ctx context.Context, n Nemesis, f string) history.Op {
	inv := s.Record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: f})
	done := n.Invoke(ctx, inv)
	done.Type = history.Info
	return s.Record(done)
}

// applied tells Applied, if set, of a fault applied.
func (s Schedule) applied(i int, start, end history.Op) {
	if s.Applied != nil {
		s.Applied(i, start, end)
	}
}

// StopEndWait bounds the end op of a fault in force when the schedule is
// stopped early: long enough to undo a fault, too short to wait for the
// cluster to settle afterwards.
const StopEndWait = 3 * time.Second

// Heal undoes every fault of every nemesis.
func (s Schedule) Heal(ctx context.Context) error {
	var errs []error
	for _, n := range s.Nemeses {
		errs = append(errs, n.Heal(ctx))
	}
	return errors.Join(errs...)
}

// sleep waits d or until ctx is done, and reports whether it waited in full.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
