package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
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
	calls   *calls        // the calls to w whose completions are not all recorded
	invoked time.Duration // when the current op was invoked
}

// calls are the requests a slot sent one worker process (and the steps the
// worker runs on its own after them, Request.Then) whose completions are
// to be recorded. The worker's reader records a completion when its reply
// arrives (slot.onReply), so that completions are recorded in the order
// the workers wrote them (see workerproc.Mux); the slot records it when it
// stops waiting without a reply. Whichever comes first records it.
type calls struct {
	mu   sync.Mutex
	w    *workerProc // set once the worker is open
	list []*call
}

// call is one request or step awaiting its completion's record.
type call struct {
	id      int64
	process int
	f, key  string
	// then is what the worker runs next on its own once this one
	// succeeds: "", workloads.ThenCS or workloads.ThenCSRelease after an
	// acquire, "release" after such a critical section.
	then string
	// grant is the acquire's value, for the steps after it.
	grant *history.Value
	done  bool
	op    history.Op // the recorded completion, once done
}

// thenRelease is call.then for a critical section the worker follows with
// its release.
const thenRelease = "release"

// get returns the call with id, nil when there is none. Called under mu.
func (cs *calls) get(id int64) *call {
	for _, c := range cs.list {
		if c.id == id {
			return c
		}
	}
	return nil
}

// add appends c. Called under mu.
func (cs *calls) add(c *call) { cs.list = append(cs.list, c) }

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
	pc := &calls{}
	onReply := func(r workloads.Reply) { s.onReply(pc, r) }
	w, err := startWorker(ctx, s.r.argv, t.WorkerEnv, cfg, s.r.workLog, s.r.openTimeout(), s.r.mux, onEvent, onReply)
	if err != nil {
		return err
	}
	pc.mu.Lock()
	pc.w = w
	pc.mu.Unlock()
	s.w, s.calls = w, pc
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
// (run.thenCS). A worker on the run's mux (run.thenRelease) then also
// releases the lock on its own after a single critical section: the
// release's invocation is recorded when the critical section's reply is
// read, which the worker wrote before its release left, and the mux hands
// that reply over before any line written after it.
func (s *slot) cycle(ctx context.Context, key string) {
	then := ""
	if s.w.thenCS && s.r.thenCS {
		then = workloads.ThenCS
		if s.w.thenRelease && s.r.thenRelease {
			then = workloads.ThenCSRelease
		}
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
	// The worker's reader marked the hold when it recorded the grant
	// (onReply), and the critical section too when the worker runs it on
	// its own.
	if then == "" {
		s.r.setInCS(s.index)
	}
	// The critical sections run even past the deadline: the lock is held.
	// The worker stops at the first that fails, as an application stops
	// its work at an error.
	for i := 0; i < s.r.test.sections(); i++ {
		var cs history.Op
		if i == 0 && then != "" {
			cs = s.await(context.WithoutCancel(ctx), s.w.LastID()-int64(workloads.ThenSteps(then))+1, history.FCS, key)
		} else {
			cs = s.op(context.WithoutCancel(ctx), history.FCS, key, csArg(grant, s.r.test.Fencing), "")
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
	try := 1
	if then == workloads.ThenCSRelease {
		// The reader cleared the hold when it recorded the release's
		// invocation.
		done := s.await(context.WithoutCancel(ctx), s.w.LastID(), history.FRelease, key)
		switch {
		case done.Type == history.OK:
			return
		case done.Type == history.Info || ctx.Err() != nil:
			s.retire(key)
			return
		}
		sleepCtx(ctx, 100*time.Millisecond)
		try = 2
	} else {
		s.r.setHolder(s.index, nil)
	}
	for ; ; try++ {
		done := s.op(context.WithoutCancel(ctx), history.FRelease, key, releaseArg(grant), "")
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

// csArg is the value a critical section under grant is sent: the grant's
// owner, and its token with fencing.
func csArg(grant *history.Value, fencing bool) *history.Value {
	v := &history.Value{}
	if grant != nil {
		v.Owner = grant.Owner
		if fencing {
			v.Token = grant.Token
		}
	}
	return v
}

// releaseArg is the value a release of grant is sent: its owner and token,
// the grant's own value when that is all it holds (recorded ops are never
// changed, and a long run has one a grant).
func releaseArg(grant *history.Value) *history.Value {
	if grant == nil {
		return &history.Value{}
	}
	if grant.Read != nil || grant.Wrote != nil || grant.Released != nil || grant.Extra != nil || grant.Backend != 0 {
		return &history.Value{Owner: grant.Owner, Token: grant.Token}
	}
	return grant
}

// op records an invocation, asks the worker, and returns the completion
// recorded (by the worker's reader, or here when no reply came). then is
// the request's Then: what the worker is to do next on its own.
func (s *slot) op(ctx context.Context, f, key string, v *history.Value, then string) history.Op {
	s.invoke(f, key, v)
	c := &call{id: s.w.LastID() + 1, process: s.process, f: f, key: key, then: then}
	s.calls.mu.Lock()
	// Every call before this one is done, or given up: a late reply to
	// one is dropped.
	clear(s.calls.list)
	s.calls.list = append(s.calls.list[:0], c)
	s.calls.mu.Unlock()
	reply, err := s.w.Call(ctx, workloads.Request{F: f, Key: key, Value: v, Then: then}, s.r.replyTimeout)
	return s.finish(c, reply, err, ctx.Err() != nil)
}

// await waits for the reply to the step with id, op f on key, that the
// worker runs on its own (its invocation recorded by the reader with the
// completion before it) and returns its completion as op does.
func (s *slot) await(ctx context.Context, id int64, f, key string) history.Op {
	s.calls.mu.Lock()
	c := s.calls.get(id)
	if c == nil {
		// The reader adds the step before it hands over the reply
		// that led to it, so this is never; should it be, the step's
		// completion is still recorded once.
		c = &call{id: id, process: s.process, f: f, key: key}
		s.calls.add(c)
	}
	s.calls.mu.Unlock()
	reply, err := s.w.Await(ctx, id, s.r.replyTimeout)
	return s.finish(c, reply, err, ctx.Err() != nil)
}

// finish returns c's completion: the one the reader recorded, or, when no
// reply came, one recorded now from err; cancelled says the run was
// interrupted meanwhile.
func (s *slot) finish(c *call, reply workloads.Reply, err error, cancelled bool) history.Op {
	if errors.Is(err, errProtocol) {
		s.r.fail(&workerError{Process: c.process, Broken: true, Err: err, Started: true, Stderr: s.w.stderr.Last()})
	}
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	if !c.done {
		c.op, c.done = s.complete(s.calls, c, reply, err, cancelled), true
	}
	return c.op
}

// onReply records the completion a reply of pc's worker brings, on the
// goroutine that read it, and the invocation of the step the worker runs
// next on its own; a reply to a call the slot stopped waiting for is
// dropped.
func (s *slot) onReply(pc *calls, r workloads.Reply) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	c := pc.get(r.ID)
	if c == nil || c.done {
		return
	}
	c.op, c.done = s.complete(pc, c, r, nil, false), true
	op := c.op
	switch {
	case c.f == history.FAcquire && op.Type == history.OK:
		s.r.setHolder(s.index, &nemesis.Target{Process: c.process, Slot: s.index, Pid: pc.w.Pid(), Key: c.key})
		if c.then == "" {
			return
		}
		s.r.setInCS(s.index)
		next := &call{id: c.id + 1, process: c.process, f: history.FCS, key: c.key, grant: op.Value}
		if c.then == workloads.ThenCSRelease {
			next.then = thenRelease
		}
		s.invokeStep(pc, next, csArg(op.Value, s.r.test.Fencing))
	case c.f == history.FCS && c.then == thenRelease && op.Type != history.Info:
		s.r.setHolder(s.index, nil)
		s.r.ownReleases.Add(1)
		s.invokeStep(pc, &call{id: c.id + 1, process: c.process, f: history.FRelease, key: c.key}, releaseArg(c.grant))
	}
}

// invokeStep records the invocation of a step the worker has begun on its
// own, with value v, and adds it to pc. Called under pc.mu.
func (s *slot) invokeStep(pc *calls, c *call, v *history.Value) {
	s.r.rec.Record(history.Op{Process: c.process, Type: history.Invoke, F: c.f, Key: c.key, Value: v})
	pc.add(c)
}

// invoke records the invocation of op f on key with v.
func (s *slot) invoke(f, key string, v *history.Value) {
	s.invoked = s.r.rec.Record(history.Op{Process: s.process, Type: history.Invoke, F: f, Key: key, Value: v}).Time
}

// complete records the completion of call c from the worker's reply or the
// error that took its place; cancelled says the run was interrupted
// meanwhile. Called under pc.mu.
func (s *slot) complete(pc *calls, c *call, reply workloads.Reply, err error, cancelled bool) history.Op {
	if s.r.test.Failpoint != "" {
		s.r.setFailpoint(s.index, c.process, "") // the reply (or its absence) ends any failpoint stop
	}
	done := history.Op{Process: c.process, F: c.f, Key: c.key}
	switch {
	case err != nil:
		done.Type, done.Error = history.Info, err.Error()
	case reply.Type == history.OK || reply.Type == history.Fail || reply.Type == history.Info:
		done.Type, done.Value, done.Error = reply.Type, reply.Value, reply.Error
	default:
		// A reply outside the protocol is the worker's bug, not an
		// outcome of the lock: the run ends with a protocol error.
		done.Type, done.Error = history.Info, fmt.Sprintf("worker replied with unknown type %q", reply.Type)
		s.r.fail(&workerError{Process: c.process, Broken: true, Started: true, Stderr: pc.w.stderr.Last(),
			Err: fmt.Errorf("%w: a reply of type %q to %s (want ok, fail or info)", errProtocol, reply.Type, c.f)})
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
