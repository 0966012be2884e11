package checker

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// NewMutex returns the mutex checker: is there an order of the acquires,
// releases and crashes on each lock key, each taking effect at an instant
// within its real interval, that fits an owner-aware mutex (the state is the
// holding process or none)?
//
// An acquire ok takes a free lock; a release ok (whether or not the key was
// still the releaser's) requires the releaser to hold it; a crash frees the
// lock if the crashed process held it, at any instant after its invocation.
// A failed acquire is dropped. A release that failed for certain ends its
// hold all the same: the process has left its critical section and is only
// trying to give the lock up, and the lock is left to its lease or session,
// so the first failed release of a hold frees the releaser's lock at any
// instant after its invocation and before the process's next operation on
// the key (and does nothing if the lock is no longer the releaser's). A
// retry of that release that failed too, or that returned ok saying the key
// was no longer the releaser's, changes nothing; a retry that returned ok
// with the key still the releaser's ends the hold there instead, as if the
// failures had not been. An acquire or release that
// ended in info may have taken effect at any instant after its invocation,
// or never: in doubt, an acquire takes the lock if it is free and does
// nothing otherwise, and a release frees the releaser's lock and does
// nothing otherwise (an op placed after every other is the "never"). An
// acquire that ended in info and is its process's last acquire or release,
// as the controller's retirement of the process makes it, is dropped: it
// can always be placed last.
//
// Each key is decided directly when its ops have the shape a lock client
// gives them (each process acquires, releases, acquires ..., and its last
// hold ends with a release, its crash, or the end of the history): the
// certain part of each hold (from its acquire's return to its end's
// invocation) must not overlap another's, and a hold whose acquire ended in
// doubt needs a free instant in its window (see lockorder.go). This takes
// O(n log n) and no search, whatever the length of the run, and a violation
// is told as the two holds whose certain parts overlap. A key of any other
// shape (a third-party history where a process releases what it never
// acquired, or goes on after its crash) is searched by Porcupine, cut where
// no op is in flight, with opts.Timeout; a search that does not finish is
// Unknown.
func NewMutex(opts Options) Checker { return &mutex{opts: opts} }

// mutex implements NewMutex.
type mutex struct {
	opts Options
	// target overrides chunkTarget, for tests.
	target int
}

// Name returns "mutex".
func (c *mutex) Name() string { return "mutex" }

// Check checks h. A history it cannot read (see history.Pairs: a
// completion before its invocation included) and a panic of its own are
// Unknown with Error set, never a verdict.
func (c *mutex) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// mutexKind is the kind of one mutex model operation.
type mutexKind uint8

const (
	mStart mutexKind = iota
	mAcquire
	mRelease
	mCrash
)

// mutexOp is the input of one mutex model operation.
type mutexOp struct {
	kind mutexKind
	// zxid says token is a ZooKeeper zxid, described as epoch:counter
	// (beside kind, it takes no room).
	zxid bool
	key  string
	proc int
	// holder is the start state of an mStart op: holding process + 1, or 0.
	holder int
	token  int64
	// inv and done are history indices of the invoke and completion (-1).
	inv, done int
	// call and ret are the op's times; ret is forever when indeterminate.
	call, ret time.Duration
	info      bool
	// abandon marks a hold's first release that failed for certain: it
	// frees the releaser's lock at any instant in [call, ret], where ret is
	// the process's next operation on the key, or forever.
	abandon bool
}

// detached implements linInput.
func (in *mutexOp) detached() linInput {
	c := *in
	return &c
}

// operation implements linInput.
func (in *mutexOp) operation() porcupine.Operation {
	return porcupine.Operation{ClientId: in.proc, Input: in, Call: int64(in.call), Return: int64(in.ret)}
}

// tokens says what the op's token is, for its description.
func (in *mutexOp) tokens() TokenKind {
	if in.zxid {
		return ZxidTokens
	}
	return NumberTokens
}

// mutexState renders a state (holding process + 1, 0 when free).
func mutexState(s int) string {
	if s == 0 {
		return "free"
	}
	return fmt.Sprintf("held by %d", s-1)
}

// mutexModel is the owner-aware mutex model.
func mutexModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return 0 },
		Step: func(state, input, _ any) (bool, any) {
			s, _ := state.(int)
			in, ok := input.(*mutexOp)
			if !ok {
				// Not an op of this model: Porcupine's visualization
				// passes nil for a completion it saw before its call.
				return false, s
			}
			switch in.kind {
			case mStart:
				return true, in.holder
			case mAcquire:
				if in.info {
					// In doubt: it took a free lock, or had no effect.
					if s == 0 {
						return true, in.proc + 1
					}
					return true, s
				}
				return s == 0, in.proc + 1
			case mRelease:
				if in.info || in.abandon {
					// In doubt: it freed the releaser's lock, or had no
					// effect.
					if s == in.proc+1 {
						return true, 0
					}
					return true, s
				}
				return s == in.proc+1, 0
			case mCrash:
				if s == in.proc+1 {
					return true, 0
				}
				return true, s
			}
			return false, s
		},
		Equal: func(a, b any) bool { return a == b },
		Hash: func(s any) uint64 {
			n, _ := s.(int)
			return uint64(n)
		},
		DescribeOperation: func(input, _ any) string {
			in, ok := input.(*mutexOp)
			if !ok {
				return "?"
			}
			var s string
			switch in.kind {
			case mStart:
				return "start: " + mutexState(in.holder)
			case mAcquire:
				s = fmt.Sprintf("%d acquire%s", in.proc, in.tokens().with(in.token))
			case mRelease:
				s = fmt.Sprintf("%d release", in.proc)
				if in.abandon {
					s += " (failed: left to its lease)"
				}
			case mCrash:
				return fmt.Sprintf("%d crash", in.proc)
			}
			if in.info {
				s += " (info)"
			}
			return s
		},
		DescribeState: func(s any) string {
			n, ok := s.(int)
			if !ok {
				return "?"
			}
			return mutexState(n)
		},
	}
}

// mutexTracker follows which processes hold the lock, for the cuts: after
// any valid linearization, the holder is the process whose last operation is
// an acquire (every process's ops are sequential, and only its own release
// or crash ends its hold).
type mutexTracker struct {
	holders map[int]time.Duration // process -> acquire call
}

func (t *mutexTracker) add(input linInput) {
	in := input.(*mutexOp)
	switch in.kind {
	case mAcquire:
		t.holders[in.proc] = in.call
	case mRelease, mCrash:
		delete(t.holders, in.proc)
	}
}

// settle returns the holder; with two holders the chunk is already
// nonlinearizable, and the latest acquirer is carried on.
func (t *mutexTracker) settle() (any, bool) {
	s, at := 0, time.Duration(-1)
	for p, call := range t.holders {
		if call > at || (call == at && p+1 < s) {
			s, at = p+1, call
		}
	}
	return s, true
}

// checkAnalysis implements analyzer. A panic is recovered as Unknown with
// Error set, and so is one of the Visualize it returns: a checker that
// fails is an error, never a verdict.
func (c *mutex) checkAnalysis(ctx context.Context, a *analysis) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = newResult(c.Name())
			res.Valid, res.Error = Unknown, fmt.Sprintf("internal error: %v", p)
		}
		res.Visualize = safeVisualize(res.Visualize)
	}()
	r := newResult(c.Name())
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	if err := ctx.Err(); err != nil {
		r.Valid, r.Error = Unknown, fmt.Sprintf("not checked: %v", err)
		return r
	}
	// The last acquire or release of each process, and of each process on
	// each key (as an index into inputs).
	lastOp := make(map[int]int)
	lastOnKey := make(map[int]map[string]int)
	for i, pr := range a.pairs {
		if pr.Invoke.F == history.FAcquire || pr.Invoke.F == history.FRelease {
			lastOp[pr.Invoke.Process] = i
		}
	}
	n := 0
	for _, pr := range a.pairs {
		switch pr.Invoke.F {
		case history.FAcquire, history.FRelease, history.FCrash:
			n++
		}
	}
	inputs := make([]mutexOp, 0, n)
	dropped := 0
	type procKey struct {
		proc int
		key  string
	}
	// abandons holds each process's abandon on a key whose interval is not
	// yet bounded by the process's next operation there.
	abandons := make(map[procKey]int)
	for i, pr := range a.pairs {
		inv := pr.Invoke
		if j, ok := abandons[procKey{inv.Process, inv.Key}]; ok {
			inputs[j].ret = inv.Time
			delete(abandons, procKey{inv.Process, inv.Key})
		}
		op := mutexOp{key: inv.Key, proc: inv.Process, inv: inv.Index, done: -1, call: inv.Time, ret: pr.End()}
		if pr.Complete != nil {
			op.done = pr.Complete.Index
		}
		op.info = pr.Type() == history.Info
		switch inv.F {
		case history.FAcquire:
			switch {
			case pr.Type() == history.Fail:
				continue
			case op.info && lastOp[inv.Process] == i:
				dropped++
				continue
			}
			op.kind = mAcquire
			if v := pr.Value(); v != nil {
				op.token, op.zxid = v.Token, c.opts.Tokens == ZxidTokens
			}
		case history.FRelease:
			op.kind = mRelease
			j, seen := lastOnKey[inv.Process][inv.Key]
			if pr.Type() == history.OK && releasedElse(pr) && !(seen && inputs[j].kind == mAcquire) {
				// It held nothing there by its own history, and its
				// client says it deleted nothing: no effect on the lock
				// (a third-party worker's release of a lock it never
				// got, or one it had let go already).
				continue
			}
			abandoned := seen && inputs[j].abandon
			switch {
			case pr.Type() == history.Fail && seen && inputs[j].kind == mAcquire:
				op.abandon, op.ret = true, forever
				abandons[procKey{inv.Process, inv.Key}] = len(inputs)
			case abandoned && pr.Type() == history.OK && !releasedElse(pr):
				// The retry proves the key was still the releaser's: it,
				// not the failure, ends the hold.
				inputs[j] = op
				continue
			case pr.Type() == history.Fail, abandoned:
				continue
			}
		case history.FCrash:
			// The crash ends the process's hold on every key where its
			// last operation is an acquire; elsewhere it is a no-op.
			for key, j := range lastOnKey[inv.Process] {
				if inputs[j].kind != mAcquire {
					continue
				}
				inputs = append(inputs, mutexOp{kind: mCrash, key: key, proc: inv.Process, inv: inv.Index, done: op.done,
					call: inv.Time, ret: forever, info: true})
			}
			continue
		default:
			continue
		}
		inputs = append(inputs, op)
		if lastOnKey[inv.Process] == nil {
			lastOnKey[inv.Process] = make(map[string]int)
		}
		lastOnKey[inv.Process][inv.Key] = len(inputs) - 1
	}
	keys, byKey := groupByKey(len(inputs), func(i int) (string, linInput) { return inputs[i].key, &inputs[i] })
	var chunks []chunk
	start := func(state any, at time.Duration, proc int) linInput {
		return &mutexOp{kind: mStart, holder: state.(int), proc: proc, inv: -1, done: -1, call: at, ret: at}
	}
	var conflicts []Anomaly
	var witnesses []chunk
	direct, holds := 0, 0
	for _, k := range keys {
		d := decideLock(byKey[k])
		if !d.simple {
			chunks = append(chunks, split(k, byKey[k], &mutexTracker{holders: make(map[int]time.Duration)}, 0, c.target, start)...)
			continue
		}
		direct++
		holds += d.holds
		for _, cf := range d.conflicts {
			if len(conflicts) < maxListed {
				an := c.explainConflict(k, cf)
				an.Nemesis = describeFaults(faultsDuring(a.getFaults(), min(cf.holder.ar, an.Start), an.End))
				conflicts = append(conflicts, an)
			}
			if len(witnesses) < maxVisualized {
				witnesses = append(witnesses, witnessChunk(k, cf.witness(), start))
			}
		}
	}
	r.Stats["keys"] = len(keys)
	r.Stats["keys_decided_directly"] = direct
	r.Stats["holds_decided_directly"] = holds
	r.Stats["operations"] = len(inputs)
	r.Stats["indeterminate_acquires_dropped"] = dropped
	linearizable(ctx, &r, mutexModel(), chunks, c.opts.timeout(), a.getFaults, func(ch chunk, s *stuck) Anomaly {
		return c.explain(ch, s, a.getFaults())
	})
	if len(conflicts) > 0 {
		r.Valid = Invalid
		r.Anomalies = append(r.Anomalies, conflicts...)
		sort.SliceStable(r.Anomalies, func(i, j int) bool { return r.Anomalies[i].Start < r.Anomalies[j].Start })
		if r.Visualize == nil {
			info, parts := verbose(mutexModel(), witnesses, a.getFaults(), c.opts.timeout())
			r.Visualize = visualizer(mutexModel(), parts, info)
		}
	}
	return r
}

// releasedElse says a release ok reported that the key was no longer the
// releaser's.
func releasedElse(pr history.Pair) bool {
	v := pr.Value()
	return v != nil && v.Released != nil && !*v.Released
}

// witnessChunk makes a chunk of a few ops that no order fits, spanning
// their calls and returns, whose start op (start(0, ...), the initial state
// just before the first call) is made by start: a free lock for the mutex,
// the register's value for the resource checker.
func witnessChunk(key string, ops []linInput, start startFunc) chunk {
	ch := chunk{key: key, ops: ops, from: forever}
	proc := 0
	for _, in := range ops {
		op := in.operation()
		if t := time.Duration(op.Call); t < ch.from {
			ch.from, proc = t, op.ClientId
		}
		if op.Return != int64(forever) {
			ch.to = max(ch.to, time.Duration(op.Return))
		}
		ch.to = max(ch.to, time.Duration(op.Call))
	}
	ch.start = start(0, ch.from-1, proc)
	return ch
}

// explain tells the story of a chunk Porcupine could not linearize.
func (c *mutex) explain(ch chunk, s *stuck, faults []history.Fault) Anomaly {
	an := Anomaly{Kind: "nonlinearizable", Key: ch.key, Start: ch.from, End: ch.to, Fenced: c.opts.Fenced}
	n := len(ch.ops)
	general := fmt.Sprintf("no order of the %s on lock %s between %s and %s fits a lock with at most one holder at a time",
		plural(n, "acquire, release or crash", "acquires, releases and crashes"), ch.key, secs(ch.from), secs(ch.to))
	if s == nil || s.op == nil {
		an.Nemesis = describeFaults(faultsDuring(faults, ch.from, ch.to))
		an.Explanation = capitalize(general) + "; the overlap checker names the double holders."
		return an
	}
	op := s.op.Input.(*mutexOp)
	holder := s.state.(int) - 1
	// The grant that made the holder, if it is in the prefix.
	var grant *mutexOp
	for i := len(s.prefix) - 1; i >= 0 && holder >= 0; i-- {
		if in := s.prefix[i].Input.(*mutexOp); (in.kind == mAcquire || in.kind == mStart) && (in.proc == holder || in.kind == mStart) {
			if in.kind == mAcquire {
				grant = in
			}
			break
		}
	}
	if holder >= 0 {
		an.Processes = append(an.Processes, holder)
		if grant != nil {
			an.Start = grant.ret
			if grant.done >= 0 {
				an.Ops = append(an.Ops, grant.done)
			}
		}
	}
	if op.proc != holder {
		an.Processes = append(an.Processes, op.proc)
	}
	an.Ops = append(an.Ops, op.inv)
	if op.done >= 0 {
		an.Ops = append(an.Ops, op.done)
	}
	if op.ret != forever {
		an.End = op.ret
	}
	// The holder may have been granted the lock after the stuck op began
	// (they were concurrent): the window covers both.
	an.Start = min(an.Start, op.call)
	if grant != nil {
		an.End = max(an.End, grant.ret)
	}
	an.End = max(an.End, an.Start)
	an.Nemesis = describeFaults(faultsDuring(faults, an.Start, an.End))
	what := map[mutexKind]string{mAcquire: "acquire", mRelease: "release", mCrash: "crash"}[op.kind]
	state := "the lock is free"
	if holder >= 0 {
		state = fmt.Sprintf("process %d holds the lock", holder)
		if grant != nil {
			state += " (its acquire ran " + span(grant.call, grant.ret)
			if grant.token != 0 {
				state += ", " + c.opts.Tokens.Token(grant.token)
			}
			state += ")"
		}
	}
	var why string
	switch op.kind {
	case mAcquire:
		why = fmt.Sprintf("%s when %d's acquire (%s) returns", state, op.proc, span(op.call, op.ret))
	case mRelease:
		why = fmt.Sprintf("%s, not %d, when %d's release (%s) returns", state, op.proc, op.proc, span(op.call, op.ret))
	default:
		why = fmt.Sprintf("%s when %d's %s at %s happens", state, op.proc, what, secs(op.call))
	}
	an.Explanation = fmt.Sprintf("Process %d's %s of lock %s cannot be placed: %s. In the longest order that fits, %s. The overlap checker names the double holders.",
		op.proc, what, ch.key, general, why)
	return an
}

// safeVisualize returns v with a panic of its own (Porcupine's, on a
// history it cannot draw) returned as an error; nil stays nil.
func safeVisualize(v func(io.Writer) error) func(io.Writer) error {
	if v == nil {
		return nil
	}
	return func(w io.Writer) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("write porcupine visualization: internal error: %v", p)
			}
		}()
		return v(w)
	}
}
