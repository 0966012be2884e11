package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// untilPoll is how often Test.Until is asked whether the workload may end.
const untilPoll = 100 * time.Millisecond

// startWorkers starts and opens the first worker of every slot, all at once,
// before the workload and the nemesis begin. No fault is in force yet, so a
// failure here is the harness's or the worker command's: the workers
// already started are stopped and the first slot's error is returned. Only
// a refused open is tried again, for up to openTimeout, since a lock
// service that was just set up may still drop a first connection on a
// loaded machine.
func (r *run) startWorkers(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.slots = make([]*slot, r.test.Workers)
	errs := make([]error, r.test.Workers)
	var wg sync.WaitGroup
	for i := range r.slots {
		r.slots[i] = r.newSlot(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(r.openTimeout())
			for {
				err := r.slots[i].spawn(ctx)
				var we *workerError
				if err == nil || !errors.As(err, &we) || !we.Refused || ctx.Err() != nil || time.Now().After(deadline) {
					errs[i] = err
					break
				}
				fmt.Fprintf(r.workLog, "slot %d: %v; trying again\n", i, err)
				sleepCtx(ctx, 200*time.Millisecond)
			}
			if errs[i] != nil {
				cancel() // one broken worker is enough: do not wait for the others
			}
		}()
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		// A slot cancelled because another failed is not the cause.
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first == nil {
		return nil
	}
	if we := (*workerError)(nil); errors.As(first, &we) {
		we.Broken = true // no fault is in force yet: nothing else explains it
	}
	for _, s := range r.slots {
		if s.w != nil {
			s.w.Kill()
			s.w = nil
		}
		r.setLive(s.index, nil)
	}
	return first
}

// fail ends the run at once because of err (the first error wins): the
// workload's context is cancelled, the nemesis heals, and Run returns err
// once the servers are torn down. What was recorded stays in history.jsonl.
func (r *run) fail(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	if r.abort != nil {
		r.abort(err)
	}
}

// failure returns the error that ended the run, if any.
func (r *run) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal
}

// stopEarly ends the workload before its time is up: every slot finishes
// the cycle it is in, and the nemesis ends its fault and heals.
func (r *run) stopEarly() {
	r.early.Store(true)
	if r.endFaults != nil {
		r.endFaults()
	}
}

// stoppedEarly reports whether stopEarly was called.
func (r *run) stoppedEarly() bool { return r.early.Load() }

// watchUntil asks Test.Until, every untilPoll, whether the history recorded
// so far is enough, and stops the workload early once it is. The returned
// function ends the watch.
func (r *run) watchUntil() func() {
	until := r.test.Until
	if until == nil {
		return func() {}
	}
	return poll(untilPoll, func() bool {
		if until(r.rec.History()) {
			r.stopEarly()
			return true
		}
		return false
	})
}

// poll calls f every interval, on a goroutine of its own, until f returns
// true or the returned function is called; that function returns once the
// goroutine has ended.
func poll(interval time.Duration, f func() bool) func() {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if f() {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// aborted tears the cluster down after err ended the run and returns err.
// The store's latest already names the run (its workers.log and partial
// history).
func (r *run) aborted(err error) error {
	if terr := r.cluster.Teardown(context.Background()); terr != nil {
		fmt.Fprintf(r.log, "teardown: %v\n", terr)
	}
	return err
}
