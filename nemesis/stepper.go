package nemesis

import (
	"context"
	"sync"
	"time"
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
