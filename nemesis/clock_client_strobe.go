package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	Register(Kind{Name: "clock-client-strobe", ClientClocks: true, New: newClockClientStrobe,
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
	env Env
	rng *rand.Rand
	cc  ClientClocker
	// High is the clocks' offset in a high phase; Step how long each phase
	// lasts.
	High, Step time.Duration

	mu    sync.Mutex
	files map[string]int // the strobing clock files -> their processes
	steps stepper
}

var _ Nemesis = (*ClockClientStrobe)(nil)

func newClockClientStrobe(env Env, rng *rand.Rand) (Nemesis, error) {
	cc, ok := env.(ClientClocker)
	if !ok {
		return nil, fmt.Errorf("clock-client-strobe nemesis: the controller cannot set client clocks: %w", clusters.ErrUnsupported)
	}
	return &ClockClientStrobe{env: env, rng: rng, cc: cc, High: JumpLeases * leaseOf(env), Step: StrobeStep}, nil
}

// Fs returns skew and unskew.
func (n *ClockClientStrobe) Fs() (string, string) { return history.FSkew, history.FUnskew }

// Invoke starts the non-holders' clocks strobing (skew) or puts every
// clock back (unskew).
func (n *ClockClientStrobe) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FSkew:
		if err := n.Heal(ctx); err != nil {
			return completed(op, nil, err)
		}
		ws := n.env.Workers()
		if len(ws) < 2 {
			return completed(op, nil, fmt.Errorf("clock-client-strobe nemesis: %d live workers, want at least 2", len(ws)))
		}
		real := -1 // the slot that keeps the real clock when none holds
		holders := 0
		for _, w := range ws {
			if w.Key != "" {
				holders++
			}
		}
		if holders == 0 {
			real = ws[n.rng.IntN(len(ws))].Slot
		}
		files := make(map[string]int)
		var procs []int
		for _, w := range ws {
			if w.Key != "" || w.Slot == real {
				continue
			}
			if w.ClockFile == "" {
				return completed(op, nil, errors.New("clock-client-strobe nemesis: the workers have no clock files"))
			}
			files[w.ClockFile] = w.Process
			procs = append(procs, w.Process)
		}
		sort.Ints(procs)
		err := n.swing(files, n.High)
		n.start(files)
		hit := &history.Hit{Nemesis: "clock-client-strobe", Lease: leaseOf(n.env), Holders: holders, Offset: n.High, Strobe: true}
		return completed(op, &history.Value{Targets: procs, Hit: hit,
			Detail: fmt.Sprintf("client clocks of processes %s strobing between %s ahead and real time every %s", joinInts(procs), seconds(n.High), seconds(n.Step))}, err)
	case history.FUnskew:
		n.mu.Lock()
		var procs []int
		for _, p := range n.files {
			procs = append(procs, p)
		}
		n.mu.Unlock()
		sort.Ints(procs)
		return completed(op, &history.Value{Targets: procs, Detail: "client clocks put back"}, n.Heal(ctx))
	}
	return completed(op, nil, fmt.Errorf("clock-client-strobe nemesis cannot %q", op.F))
}

// joinInts renders 1, 2, 3.
func joinInts(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(x)
	}
	return s
}

// swing sets every clock in files to offset.
func (n *ClockClientStrobe) swing(files map[string]int, offset time.Duration) error {
	var errs []error
	for f := range files {
		errs = append(errs, n.cc.SetClientClock(f, offset))
	}
	return errors.Join(errs...)
}

// start swings the clocks every Step until Heal stops it.
func (n *ClockClientStrobe) start(files map[string]int) {
	n.mu.Lock()
	n.files = files
	n.mu.Unlock()
	n.steps.run(n.Step, maxDrivenSteps, func(_ context.Context, k int) error {
		off := n.High
		if k%2 == 1 {
			off = 0
		}
		return n.swing(files, off)
	})
}

// Heal stops the swings and puts every strobing clock back. It is
// idempotent.
func (n *ClockClientStrobe) Heal(context.Context) error {
	n.mu.Lock()
	files := n.files
	n.mu.Unlock()
	if files == nil {
		return nil
	}
	swingErr := n.steps.halt()
	if err := n.swing(files, 0); err != nil {
		return fmt.Errorf("put back the client clocks: %w", err)
	}
	n.mu.Lock()
	n.files = nil
	n.mu.Unlock()
	if swingErr != nil {
		return fmt.Errorf("client clocks stopped strobing early: %w", swingErr)
	}
	return nil
}
