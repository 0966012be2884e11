package schedule

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
)

// Recorder is what the engine needs of the history's recorder: it records
// the faults' ops and tells the time on the history's clock.
type Recorder interface {
	Record(op history.Op) history.Op
	Now() time.Duration
}

// Config is what an Engine needs of the run.
type Config struct {
	// Env is the controller, as the nemeses see it.
	Env nemesis.Env
	// Rec records the faults' ops; the engine's Observe must be
	// subscribed to it (history.Recorder.Subscribe).
	Rec Recorder
	// Kinds are the nemesis kinds by name, as the plan resolved them.
	Kinds map[string]nemesis.Kind
	// Seed is the run's seed; each fault's nemesis gets a source from it.
	Seed uint64
	// Lease is the design's effective lease, for lease-relative durations.
	Lease time.Duration
	// Duration is how long a fault that names none is kept
	// (--nemesis-duration).
	Duration time.Duration
}

// Engine fires faults at lock events: it reads every op as it is recorded
// (Observe), keeps who holds which lock by the history's own order, and
// when an op is a fault's event it starts that fault after its offset,
// aimed at the event's holder (nemesis.WithAim), keeps it for its
// duration, ends it, and arms it again while it has repeats left. Observe
// only matches and hands the event over, so the record path stays fast.
type Engine struct {
	cfg    Config
	faults []*armed

	mu    sync.Mutex
	holds map[int]hold   // process -> the lock it holds, by the history
	keyOf map[string]int // lock -> the process last granted it
	asked map[int]time.Duration
	// quorum is a bare majority of the cluster's lock nodes (0: none
	// known), for majority-grant.
	quorum int
	// ctx and deadline are Run's, once it started (nil before and after).
	ctx      context.Context
	deadline time.Time
	// syncs counts the faults Observe is starting on a recording
	// goroutine: Run heals only once none is.
	syncs sync.WaitGroup
}

// hold is a process's grant as the engine read it from the history.
type hold struct {
	key       string
	invoked   time.Duration // when its acquire was invoked
	inCS      bool
	releasing bool // its release was invoked
}

// armed is one fault of the schedule and its state.
type armed struct {
	f    Fault
	spec string
	n    nemesis.Nemesis
	ch   chan event // the event that fires it; at most one waits
	// Under Engine.mu:
	ready   bool // it may fire: prepared (nemesis.Preparer), or needs none
	seen    int  // matching events so far
	left    int  // firings left
	busy    bool
	skipped int // matching events while it was busy
	fired   []Fired
	unfired string
}

// event is one firing: the op whose event it is, the process whose lock it
// concerns (-1: none, the nemesis picks), and when the fault is due.
type event struct {
	op     history.Op
	target int
	due    time.Duration
	timed  bool // a time trigger's: no op fired it
	// started is the firing Observe started already (a fault due at a
	// worker's invocation), nil for one the loop starts; its Error says
	// why it did not start when it could not.
	started *started
}

// started is a fault in force: its firing so far and how long it is kept.
type started struct {
	f   Fired
	dur time.Duration
	ok  bool // false: it was not started (why is in the record)
}

// New builds an engine for faults, one nemesis of its kind each.
func New(cfg Config, faults []Fault) (*Engine, error) {
	e := &Engine{cfg: cfg, holds: make(map[int]hold), keyOf: make(map[string]int), asked: make(map[int]time.Duration)}
	if cfg.Env != nil && cfg.Env.Cluster() != nil {
		lock := 0
		for _, n := range cfg.Env.Cluster().Nodes() {
			if n.Role == "lock" {
				lock++
			}
		}
		if lock > 0 {
			e.quorum = lock/2 + 1
		}
	}
	for i, f := range faults {
		k, ok := cfg.Kinds[f.Kind]
		if !ok {
			return nil, fmt.Errorf("fault %s: nemesis %q is not in the plan", f, f.Kind)
		}
		n, err := k.New(cfg.Env, rand.New(rand.NewPCG(cfg.Seed, 0x747267+uint64(i))))
		if err != nil {
			return nil, fmt.Errorf("fault %s: %w", f, err)
		}
		_, prepares := n.(nemesis.Preparer)
		e.faults = append(e.faults, &armed{f: f, spec: f.String(), n: n, ch: make(chan event, 1), left: f.times(), ready: !prepares})
	}
	return e, nil
}

// Observe reads one recorded op: it updates who holds what and hands each
// event the op is to the faults armed for it. It is history.Recorder's
// subscriber and must stay quick.
func (e *Engine) Observe(op history.Op) {
	if len(e.faults) == 0 {
		return
	}
	var now []firing
	e.mu.Lock()
	for _, ev := range e.events(op) {
		for _, a := range e.faults {
			if !matches(a.f.Trigger, ev) {
				continue
			}
			if a.left == 0 || a.busy || !a.ready {
				if a.busy {
					a.skipped++
				}
				continue
			}
			a.seen++
			if a.seen < a.f.nth() {
				continue
			}
			a.busy = true
			x := event{op: op, target: ev.target, due: op.Time + a.f.Trigger.Offset.Of(e.cfg.Lease)}
			if ev.name == EventLeaseLeft {
				x.due = ev.at + max(0, e.cfg.Lease-a.f.Trigger.Below.Of(e.cfg.Lease)) + a.f.Trigger.Offset.Of(e.cfg.Lease)
			}
			if x.due == op.Time && op.Type == history.Invoke && op.Process != history.NemesisProcess && e.ctx != nil && e.ctx.Err() == nil {
				e.syncs.Add(1)
				now = append(now, firing{a, x})
				continue
			}
			a.ch <- x // never blocks: busy was false, so the channel is empty
		}
	}
	ctx, deadline := e.ctx, e.deadline
	e.mu.Unlock()
	// A fault due at a worker's invocation is started here, on the
	// goroutine that recorded it, before the request leaves for the
	// worker: a cut of the reply to a release loses that release's reply.
	for _, f := range now {
		x := f.ev
		x.started = e.start(ctx, f.a, x, deadline)
		f.a.ch <- x // never blocks: busy was false, so the channel was empty
		e.syncs.Done()
	}
}

// firing is a fault and the event that fires it.
type firing struct {
	a  *armed
	ev event
}

// lockEvent is one event an op is: its name, the process whose event it
// is (the rival's, for rival), the process whose lock it concerns (-1 for
// none), and for lease-left when the lease began at the latest.
type lockEvent struct {
	name    string
	process int
	target  int
	at      time.Duration
}

// events updates the engine's holds with op and returns the events op is.
// Called under e.mu.
func (e *Engine) events(op history.Op) []lockEvent {
	p := op.Process
	switch {
	case op.F == history.FAcquire && op.Type == history.Invoke:
		e.asked[p] = op.Time
		evs := []lockEvent{{name: EventAcquire, process: p, target: p}}
		if q, ok := e.keyOf[op.Key]; ok && q != p {
			if _, holds := e.holds[q]; holds {
				evs = append(evs, lockEvent{name: EventRival, process: p, target: q}, lockEvent{name: EventQueued, process: p, target: p})
			}
		}
		return evs
	case op.F == history.FAcquire && op.Type == history.OK:
		invoked := e.asked[p]
		e.holds[p] = hold{key: op.Key, invoked: invoked}
		e.keyOf[op.Key] = p
		evs := []lockEvent{{name: EventGrant, process: p, target: p}, {name: EventLeaseLeft, process: p, target: p, at: invoked}}
		if op.Value != nil && op.Value.Extra != nil && e.quorum > 0 && len(op.Value.Extra.Nodes) == e.quorum {
			evs = append(evs, lockEvent{name: EventMajorityGrant, process: p, target: p})
		}
		return evs
	case op.F == history.FCS && op.Type == history.Invoke:
		if h, ok := e.holds[p]; ok {
			h.inCS = true
			e.holds[p] = h
		}
		return []lockEvent{{name: EventCS, process: p, target: p}}
	case op.F == history.FCS:
		if h, ok := e.holds[p]; ok {
			h.inCS = false
			e.holds[p] = h
		}
	case op.F == history.FRelease && op.Type == history.Invoke:
		if h, ok := e.holds[p]; ok {
			h.releasing = true
			e.holds[p] = h
		}
		return []lockEvent{{name: EventRelease, process: p, target: p}}
	case op.F == history.FRelease || op.F == history.FCrash && op.Type != history.Invoke:
		if h, ok := e.holds[p]; ok {
			delete(e.holds, p)
			if e.keyOf[h.key] == p {
				delete(e.keyOf, h.key)
			}
		}
	case p == history.NemesisProcess && op.Type == history.Info && op.Value != nil && op.Value.Extra != nil &&
		op.Value.Extra.Hit != nil && op.Value.Extra.Hit.Promoted:
		return []lockEvent{{name: EventPromotion, process: p, target: e.promoted(op.Value.Extra)}}
	case op.F == history.FEvent && op.Value != nil && op.Value.Extra != nil:
		d := op.Value.Extra.Detail
		switch {
		case strings.HasPrefix(d, history.EventFailpointPrefix):
			return []lockEvent{{name: EventFailpoint, process: p, target: p}}
		case history.MarkName(d) == EventWrite:
			return []lockEvent{{name: EventWrite, process: p, target: p}}
		case history.MarkName(d) == EventRenewal:
			// Only a holder's: an etcd session renews its lease from
			// the worker's start, holding a lock or not.
			if _, holds := e.holds[p]; holds {
				return []lockEvent{{name: EventRenewal, process: p, target: p}}
			}
		}
	case op.F == history.FServerRelease && op.Key != "":
		// Only a release of a lock whose holder, by the history, still
		// holds it and has not begun to give it back: the lock lost
		// under its holder, not the holder's own release.
		q, ok := e.keyOf[op.Key]
		if h, holds := e.holds[q]; ok && holds && !h.releasing {
			return []lockEvent{{name: EventServerRelease, process: q, target: q}}
		}
	}
	return nil
}

// promoted returns the process whose lock a failover's promotion concerns:
// the holder of the key its hit names (the grant the old master did not
// replicate), else one of the processes left with the old master that
// holds a lock by the history; -1 for none.
func (e *Engine) promoted(x *history.Extra) int {
	if q, ok := e.keyOf[x.Hit.Key]; ok && x.Hit.Key != "" {
		return q
	}
	for _, q := range x.Targets {
		if _, holds := e.holds[q]; holds {
			return q
		}
	}
	return -1
}

// matches reports whether ev fires a fault with trigger t.
func matches(t Trigger, ev lockEvent) bool {
	return t.Event == ev.name && (t.Process == nil || *t.Process == ev.process)
}

// Run fires the faults until deadline or until ctx is done: a time-
// triggered fault at its time from start (the workload's start on the
// recorder's clock), the others at their events. A fault whose duration
// would outlast the deadline is not started, as a timed fault is not. It
// ends every fault in force, heals every nemesis, and returns the heal
// error, if any.
func (e *Engine) Run(ctx context.Context, start time.Duration, deadline time.Time) error {
	e.mu.Lock()
	e.ctx, e.deadline = ctx, deadline
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range e.faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.loop(ctx, a, start, deadline)
		}()
	}
	wg.Wait()
	// No fault starts on a recording goroutine from here on, and any that
	// was starting is in force before Heal undoes it.
	e.mu.Lock()
	e.ctx = nil
	e.mu.Unlock()
	e.syncs.Wait()
	var errs []error
	for _, a := range e.faults {
		errs = append(errs, a.n.Heal(context.WithoutCancel(ctx)))
	}
	return errors.Join(errs...)
}

// loop fires a while it has repeats left, until deadline or ctx is done.
func (e *Engine) loop(ctx context.Context, a *armed, start time.Duration, deadline time.Time) {
	end := time.NewTimer(time.Until(deadline))
	defer end.Stop()
	next := start
	for {
		e.mu.Lock()
		left := a.left
		e.mu.Unlock()
		if left == 0 {
			return
		}
		if p, ok := a.n.(nemesis.Preparer); ok {
			// Made ready before its event may fire it: an event that
			// comes meanwhile fires nothing.
			if err := p.Prepare(ctx); err != nil {
				e.setUnfired(a, "it could not be prepared: "+err.Error())
				return
			}
			e.mu.Lock()
			a.ready = true
			e.mu.Unlock()
		}
		var ev event
		if a.f.Trigger.Event == EventAt {
			next += a.f.Trigger.Offset.Of(e.cfg.Lease)
			ev = event{target: -1, due: next, timed: true}
			e.mu.Lock()
			a.busy = true
			e.mu.Unlock()
		} else {
			select {
			case ev = <-a.ch:
			case <-ctx.Done():
				return
			case <-end.C:
				e.setUnfired(a, "its event did not come before the workload's end")
				return
			}
		}
		if !e.fire(ctx, a, ev, deadline) {
			return
		}
		next = e.cfg.Rec.Now()
	}
}

// setUnfired notes why a fired fewer times than asked, the first reason.
func (e *Engine) setUnfired(a *armed, why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a.unfired == "" && a.left > 0 {
		a.unfired = why
	}
}

// fire starts a's fault at ev (unless Observe did), keeps it for its
// duration and ends it. It reports whether a may fire again.
func (e *Engine) fire(ctx context.Context, a *armed, ev event, deadline time.Time) bool {
	st := ev.started
	if st == nil {
		st = e.start(ctx, a, ev, deadline)
	}
	if !st.ok {
		return false
	}
	f := st.f
	ok := sleep(ctx, st.dur)
	endCtx := context.WithoutCancel(ctx)
	if !ok {
		var cancel context.CancelFunc
		endCtx, cancel = context.WithTimeout(endCtx, nemesis.StopEndWait)
		defer cancel()
	}
	_, endF := a.n.Fs()
	inv := e.cfg.Rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: endF})
	fin := a.n.Invoke(endCtx, inv)
	fin.Type = history.Info
	fin = e.cfg.Rec.Record(fin)
	f.End, f.Ended = fin.Index, fin.Time
	_, prepares := a.n.(nemesis.Preparer)
	e.mu.Lock()
	a.fired = append(a.fired, f)
	a.left--
	a.busy = false
	a.ready = !prepares
	e.mu.Unlock()
	return ok
}

// start waits until ev is due and starts a's fault, aimed at ev's holder:
// what it did, and how long the fault is to be kept. A fault that would
// outlast the deadline is not started.
func (e *Engine) start(ctx context.Context, a *armed, ev event, deadline time.Time) *started {
	dur := e.cfg.Duration
	if a.f.Duration != nil {
		dur = a.f.Duration.Of(e.cfg.Lease)
	}
	if ctx.Err() != nil {
		return &started{}
	}
	wait := ev.due - e.cfg.Rec.Now()
	if time.Now().Add(max(0, wait) + dur).After(deadline) {
		e.setUnfired(a, fmt.Sprintf("its event came too late for a %s fault to end before the workload's end", shortDur(dur)))
		return &started{}
	}
	if wait > 0 && !sleep(ctx, wait) {
		return &started{}
	}
	startF, _ := a.n.Fs()
	fctx := ctx
	if ev.target >= 0 {
		fctx = nemesis.WithAim(ctx, e.aim(ev.target))
	}
	inv := e.cfg.Rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: startF})
	done := a.n.Invoke(fctx, inv)
	done.Type = history.Info
	inForce := e.cfg.Rec.Now()
	var waited time.Duration
	if h := history.HitOf(&done); h != nil {
		// A fault whose start waits for its own moment (redlock-clock-jump's
		// cut-off holder, restart-lose's bare-majority grant) says so in
		// Waited: that wait is the fault's, not the trigger's lateness.
		waited = min(h.Waited, max(0, inForce-ev.due))
		h.Trigger, h.Event, h.Due, h.Late = a.spec, ev.op.Index, ev.due, inForce-ev.due-waited
	}
	late := inForce - ev.due - waited
	if done.Value != nil && done.Value.Extra != nil && done.Error == "" {
		x := done.Value.Mut()
		x.Detail += fmt.Sprintf(" (trigger %s: %s)", a.spec, firedBy(ev))
	}
	done = e.cfg.Rec.Record(done)
	if ev.timed {
		ev.op.Index = -1
	}
	f := Fired{Event: ev.op.Index, EventF: eventName(a.f.Trigger), Process: ev.target, Key: ev.op.Key,
		Due: ev.due, Start: done.Index, InForce: inForce, Waited: waited, Late: late, Error: done.Error}
	return &started{f: f, dur: dur, ok: true}
}

// aim returns the Aim of a fault whose event concerns process: its live
// worker, holding what the history says it holds right now.
func (e *Engine) aim(process int) nemesis.Aim {
	return func() (nemesis.Target, error) {
		for _, w := range e.cfg.Env.Workers() {
			if w.Process != process {
				continue
			}
			e.mu.Lock()
			h, ok := e.holds[process]
			e.mu.Unlock()
			w.Key, w.InCS = "", false
			if ok {
				w.Key, w.InCS = h.key, h.inCS
			}
			return w, nil
		}
		return nemesis.Target{}, fmt.Errorf("process %d, whose lock event fired the fault, has no live worker (it was retired)", process)
	}
}

// firedBy says what fired a firing: "process 2's grant of k0 at op 10".
func firedBy(ev event) string {
	if ev.timed {
		return "its time"
	}
	what := ev.op.F
	switch {
	case ev.op.F == history.FAcquire && ev.op.Type == history.OK:
		what = "grant"
	case ev.op.F == history.FAcquire:
		what = "acquire"
	case ev.op.F == history.FCS:
		what = "critical section"
	case ev.op.F == history.FEvent && ev.op.Value != nil && ev.op.Value.Extra != nil:
		// A worker's report names no key: its detail says what it was.
		what, _, _ = strings.Cut(ev.op.Value.Extra.Detail, ":")
	}
	if ev.op.Process == history.NemesisProcess {
		if h := history.HitOf(&ev.op); h != nil && h.Promoted {
			return fmt.Sprintf("the promotion of the %s at op %d", what, ev.op.Index)
		}
		return fmt.Sprintf("the %s of %s at op %d", what, ev.op.Key, ev.op.Index)
	}
	if ev.op.Key == "" {
		return fmt.Sprintf("process %d's %s at op %d", ev.op.Process, what, ev.op.Index)
	}
	return fmt.Sprintf("process %d's %s of %s at op %d", ev.op.Process, what, ev.op.Key, ev.op.Index)
}

// eventName is the event a trigger names, as the record says it.
func eventName(t Trigger) string {
	if t.Event == EventLeaseLeft {
		return EventLeaseLeft + "<" + t.Below.String()
	}
	return t.Event
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
