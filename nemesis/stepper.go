package nemesis

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// stepper runs the later steps of a fault on a ticker until it is halted:
// the further jumps of clock, the swings of a strobe, the advances of a
// clock running fast. The zero value is ready; one run at a time.
type stepper struct {
	mu      sync.Mutex
	stop    context.CancelFunc
	stopped chan struct{}
	err     error // the first error of a step, unless it came from halting
}

// run calls step(ctx, k) every d for k = 1, 2, ... below max, in a
// goroutine of its own, until halt; a step's error ends the steps and is
// kept for halt.
func (s *stepper) run(d time.Duration, max int, step func(ctx context.Context, k int) error) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	s.mu.Lock()
	s.stop, s.stopped, s.err = cancel, stopped, nil
	s.mu.Unlock()
	go func() {
		defer close(stopped)
		t := time.NewTicker(d)
		defer t.Stop()
		for k := 1; k < max; k++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := step(ctx, k); err != nil {
				if ctx.Err() == nil {
					s.mu.Lock()
					s.err = err
					s.mu.Unlock()
				}
				return
			}
		}
	}()
}

// halt stops the steps, waits for the one in flight, and returns the error
// that ended them early (nil when none did, or when none ran).
func (s *stepper) halt() error {
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.stop, s.stopped = nil, nil
	s.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	<-stopped
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	s.err = nil
	return err
}

// movedClock is what a fault on one lock node's wall clock keeps while it
// is in force: the node, since when, and the steps still moving it.
type movedClock struct {
	c     clusters.Clocker
	mu    sync.Mutex
	node  string // "" when no clock is moved
	since time.Time
	steps stepper
}

// moving records that node's clock is moved from now on, and runs step
// every d (at most max steps) until putBack.
func (m *movedClock) moving(node string, d time.Duration, max int, step func(ctx context.Context, k int) error) {
	m.mu.Lock()
	m.node, m.since = node, time.Now()
	m.mu.Unlock()
	m.steps.run(d, max, step)
}

// moved returns the node whose clock is moved ("" for none) and since when.
func (m *movedClock) moved() (string, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.node, m.since
}

// putBack stops the steps and puts the moved clock back to real time; an
// error of a step that ended them early is returned once the clock is
// back, as the steps' words say ("jumping"). It is idempotent.
func (m *movedClock) putBack(ctx context.Context, words string) error {
	node, _ := m.moved()
	if node == "" {
		return nil
	}
	stepErr := m.steps.halt()
	if err := m.c.SetClockOffset(ctx, node, 0); err != nil {
		return fmt.Errorf("put back the clock of %s: %w", node, err)
	}
	m.mu.Lock()
	m.node = ""
	m.mu.Unlock()
	if stepErr != nil {
		return fmt.Errorf("clock of %s stopped %s early: %w", node, words, stepErr)
	}
	return nil
}
