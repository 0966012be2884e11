package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/workloads"
)

// failBackoff is the mean pause after an acquire that failed fast (the lock
// service refused the connection), so a crashed node does not turn the
// slots into a busy loop. An acquire that waited out its timeout is retried
// at once.
const failBackoff = 100 * time.Millisecond

// releaseTries bounds how often a worker retries a release that certainly
// failed (connection refused) before it is retired.
const releaseTries = 3

// slot is one worker slot: a sequence of worker processes, each serving a
// logical process id. A process whose op ended in info is retired and the
// slot continues with a fresh process id (slot + k*workers).
type slot struct {
	r       *run
	index   int
	process int
	rng     *rand.Rand
	w       *workerProc
	invoked time.Duration // when the current op was invoked
}

// newSlot returns worker slot index, before its first worker.
func (r *run) newSlot(index int) *slot {
	return &slot{r: r, index: index, process: index, rng: rand.New(rand.NewPCG(r.test.Seed, uint64(index)+1))}
}

// slotLoop runs acquire -> critical section -> release cycles until the
// deadline, until ctx is done or until the workload is stopped early. A
// cycle that has begun is finished, so every grant that can be released is
// released. The slot's first worker was started by startWorkers; a worker
// that is broken ends the run (see workerError).
func (r *run) slotLoop(ctx context.Context, index int) {
	s := r.slots[index]
	defer func() {
		if s.w != nil {
			s.w.Close(2 * time.Second)
			r.workerCPU.Add(int64(s.w.CPU()))
		}
		r.setLive(index, nil)
	}()
	keys := keyNames(r.test.Keys)
	for ctx.Err() == nil && time.Now().Before(r.deadline) && !r.stoppedEarly() {
		if s.w == nil {
			if err := s.spawn(ctx); err != nil {
				if we := (*workerError)(nil); errors.As(err, &we) && we.Broken {
					r.fail(err)
					return
				}
				fmt.Fprintf(r.workLog, "slot %d: %v\n", index, err)
				sleepCtx(ctx, 100*time.Millisecond)
				continue
			}
		}
		s.cycle(ctx, keys[s.rng.IntN(len(keys))])
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (s *slot) spawn(ctx context.Context) error {
	t := s.r.test
	cfg := t.workerConfig(s.process, s.r.cluster.LockAddrs(s.index), s.r.cluster.StorageAddr())
	cfg.ClockFile = s.r.clockFile(s.index)
	cfg.Report = schedule.WorkerReports(s.r.plan.Faults)
	cfg = withLinks(cfg, s.r.cluster, s.index)
	process := s.process
	onEvent := func(e workloads.Reply) {
		v := e.Value
		if v == nil {
			v = &history.Value{}
		}
		s.r.rec.Record(history.Op{Process: process, Type: history.Info, F: history.FEvent, Value: v})
		if e.Event == workloads.EventFailpoint {
			s.r.setFailpoint(s.index, process, failpointName(v.Ext().Detail))
		}
	}
	w, err := startWorker(ctx, s.r.argv, t.WorkerEnv, cfg, s.r.workLog, s.r.openTimeout(), onEvent)
	if err != nil {
		return err
	}
	s.w = w
	s.r.setLive(s.index, &nemesis.Target{Process: s.process, Slot: s.index, Pid: w.Pid(), ClockFile: cfg.ClockFile})
	return nil
}

// cycle runs one acquire -> cs (Test.Sections of them) -> release on key.
//
// A worker that can (workerProc.thenCS) runs the first critical section
// as soon as it is granted, without waiting for the controller to ask, as
// an application does: its invocation is recorded when the grant's reply is
// read, before the worker can have released the lock. Not in a run that
// stops workers at a failpoint, whose stop ends at each reply, nor in one
// with a fault that must be in force before a critical section begins
// (run.thenCS).
func (s *slot) cycle(ctx context.Context, key string) {
	then := ""
	if s.w.thenCS && s.r.thenCS {
		then = workloads.ThenCS
	}
	acq := s.op(ctx, history.FAcquire, key, nil, then)
	switch acq.Type {
	case history.Fail:
		if acq.Time-s.invoked < failBackoff {
			sleepCtx(ctx, failBackoff/2+time.Duration(s.rng.Int64N(int64(failBackoff))))
		}
		return
	case history.Info:
		s.retire(key)
		return
	}
	grant := acq.Value
	if grant == nil {
		grant = &history.Value{}
	}
	s.r.setHolder(s.index, &nemesis.Target{Process: s.process, Slot: s.index, Pid: s.w.Pid(), Key: key})
	csArg := &history.Value{Owner: grant.Owner}
	if s.r.test.Fencing {
		csArg.Token = grant.Token
	}
	// The critical sections run even past the deadline: the lock is held.
	// The worker stops at the first that fails, as an application stops
	// its work at an error.
	s.r.setInCS(s.index)
	for i := 0; i < s.r.test.sections(); i++ {
		var cs history.Op
		if i == 0 && then != "" {
			cs = s.next(context.WithoutCancel(ctx), history.FCS, key, csArg)
		} else {
			cs = s.op(context.WithoutCancel(ctx), history.FCS, key, csArg, "")
		}
		if cs.Type == history.Info {
			s.r.setHolder(s.index, nil)
			s.retire(key)
			return
		}
		if cs.Type == history.Fail {
			break
		}
	}
	s.r.setHolder(s.index, nil)
	// The release sends the grant's owner and token: the grant's own
	// value when that is all it holds (recorded ops are never changed,
	// and a long run has one a grant).
	rel := grant
	if grant.Read != nil || grant.Wrote != nil || grant.Released != nil || grant.Extra != nil || grant.Backend != 0 {
		rel = &history.Value{Owner: grant.Owner, Token: grant.Token}
	}
	for try := 1; ; try++ {
		done := s.op(context.WithoutCancel(ctx), history.FRelease, key, rel, "")
		switch {
		case done.Type == history.OK:
			return
		case done.Type == history.Info || try == releaseTries || ctx.Err() != nil:
			s.retire(key)
			return
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

// op records an invocation, asks the worker, and records the completion. A
// worker that does not answer in time makes the op info. then is the
// request's Then: what the worker is to do next on its own.
func (s *slot) op(ctx context.Context, f, key string, v *history.Value, then string) history.Op {
	s.invoke(f, key, v)
	reply, err := s.w.Call(ctx, workloads.Request{F: f, Key: key, Value: v, Then: then}, s.r.replyTimeout)
	return s.complete(f, key, reply, err, ctx.Err() != nil)
}

// next records the invocation of the op the worker began on its own after
// the last request (its Then), and waits for its reply as op does.
func (s *slot) next(ctx context.Context, f, key string, v *history.Value) history.Op {
	s.invoke(f, key, v)
	reply, err := s.w.Await(ctx, s.w.LastID(), s.r.replyTimeout)
	return s.complete(f, key, reply, err, ctx.Err() != nil)
}

// invoke records the invocation of op f on key with v.
func (s *slot) invoke(f, key string, v *history.Value) {
	s.invoked = s.r.rec.Record(history.Op{Process: s.process, Type: history.Invoke, F: f, Key: key, Value: v}).Time
}

// complete records the completion of op f on key from the worker's reply
// or the error that took its place; cancelled says the run was interrupted
// meanwhile.
func (s *slot) complete(f, key string, reply workloads.Reply, err error, cancelled bool) history.Op {
	if errors.Is(err, errProtocol) {
		s.r.fail(&workerError{Process: s.process, Broken: true, Err: err, Started: true, Stderr: s.w.stderr.Last()})
	}
	if s.r.test.Failpoint != "" {
		s.r.setFailpoint(s.index, s.process, "") // the reply (or its absence) ends any failpoint stop
	}
	done := history.Op{Process: s.process, F: f, Key: key}
	switch {
	case err != nil:
		done.Type, done.Error = history.Info, err.Error()
	case reply.Type == history.OK || reply.Type == history.Fail || reply.Type == history.Info:
		done.Type, done.Value, done.Error = reply.Type, reply.Value, reply.Error
	default:
		// A reply outside the protocol is the worker's bug, not an
		// outcome of the lock: the run ends with a protocol error.
		done.Type, done.Error = history.Info, fmt.Sprintf("worker replied with unknown type %q", reply.Type)
		s.r.fail(&workerError{Process: s.process, Broken: true, Started: true, Stderr: s.w.stderr.Last(),
			Err: fmt.Errorf("%w: a reply of type %q to %s (want ok, fail or info)", errProtocol, reply.Type, f)})
	}
	if errors.Is(err, errNoReply) && cancelled {
		done.Error = "interrupted: " + done.Error
	}
	return s.r.rec.Record(done)
}

// retire kills the slot's worker, records its process's crash, and moves the
// slot on to a fresh process id.
func (s *slot) retire(key string) {
	if s.w != nil {
		s.w.Kill()
		s.r.workerCPU.Add(int64(s.w.CPU()))
		s.w = nil
	}
	s.r.setLive(s.index, nil)
	rec := s.r.rec
	rec.Record(history.Op{Process: s.process, Type: history.Invoke, F: history.FCrash, Key: key})
	rec.Record(history.Op{Process: s.process, Type: history.Info, F: history.FCrash, Key: key,
		Value: &history.Value{Extra: &history.Extra{Detail: "worker killed; process retired"}}})
	s.process += s.r.test.Workers
}
