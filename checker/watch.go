package checker

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Watch follows a history op by op, as it is recorded, and finds the first
// anomaly that needs no search: a double holder (two processes granted the
// same key, the first having invoked neither a release of it nor a crash
// in between: the holds of the overlap checker) or, in a fenced run, a stale
// write accepted (a critical section accepted with a token lower than that
// of an accepted critical section that returned before it was invoked: the
// fencing checker's rule). Each op costs O(log n) at most, so a controller
// can run it while the workload runs and stop at the first anomaly; the full
// checkers judge the history afterwards.
//
// With Options.StuckBound set, it also finds the liveness checker's stuck
// lock: a key that no process has held for longer than the bound, counted on
// the times of the ops observed, while an acquire of it failed. Whatever the
// watch reports on a prefix of a history, the liveness checker reports on the
// whole of it, so a run stopped there keeps its verdict.
//
// With Options.Fenced, double holders are not anomalies (the resource
// decides) and only stale writes are; with Options.NoLock neither double
// holders nor stale writes of a lock are watched. Watch is not safe for
// concurrent use.
type Watch struct {
	opts Options
	// holding is, per key, the processes holding it and since when.
	holding map[string]map[int]time.Duration
	// reentered counts, per key and process, the grants of a lock its
	// holder already held (a re-entrant lock's depth above one): as many
	// releases go before the one that ends the hold (withoutReentry).
	reentered map[watchHold]int
	// csInvoked is each process's open critical-section invoke.
	csInvoked map[int]csOpen
	// accepted is, per key, the accepted critical sections in order of
	// return: when each returned and the highest token accepted so far.
	accepted map[string][]acceptedCS
	// byRead is, per key and value read, the accepted critical sections
	// that read it (the fencing checker's same-read rule).
	byRead map[string]map[int64][]readCS
	// free is, per key, since when no process has held it (the stuck-lock
	// rule of the liveness checker).
	free map[string]*freeSince
	// inventory is set once a seed op shows an inventory history.
	inventory bool
	first     *Anomaly
}

// watchHold is a process's hold of a key.
type watchHold struct {
	key  string
	proc int
}

// freeSince is a key's current stretch without a holder: since when, and the
// acquires of it that failed since then.
type freeSince struct {
	at     time.Duration
	failed []int // the failed acquires' processes
	ops    []int // and their history indices
}

// readCS is one accepted critical section with a known read.
type readCS struct {
	call, ret time.Duration
	token     int64
	proc      int
}

// csOpen is a critical section invoked and not yet returned.
type csOpen struct {
	at    time.Duration
	token int64
}

// acceptedCS is one accepted critical section in Watch.accepted.
type acceptedCS struct {
	ret   time.Duration
	max   int64
	proc  int
	token int64
}

// NewWatch returns a Watch for a run checked with opts.
func NewWatch(opts Options) *Watch {
	return &Watch{opts: opts, holding: make(map[string]map[int]time.Duration),
		csInvoked: make(map[int]csOpen), reentered: make(map[watchHold]int), accepted: make(map[string][]acceptedCS),
		byRead: make(map[string]map[int64][]readCS), free: make(map[string]*freeSince)}
}

// First returns the first anomaly found so far, and false when none was.
func (w *Watch) First() (Anomaly, bool) {
	if w.first == nil {
		return Anomaly{}, false
	}
	return *w.first, true
}

// Observe takes the next op of the history, in order, and returns the first
// anomaly once one has been found (the same one on every later call).
func (w *Watch) Observe(op history.Op) (Anomaly, bool) {
	if w.first != nil {
		return *w.first, true
	}
	if op.F == history.FSeed {
		w.inventory = true
	}
	if w.opts.NoLock {
		return Anomaly{}, false
	}
	if w.opts.StuckBound > 0 {
		if a, ok := w.stuck(op); ok {
			return a, true
		}
	}
	if op.IsNemesis() {
		return Anomaly{}, false
	}
	switch {
	case op.F == history.FAcquire && op.Type == history.OK:
		held := w.holding[op.Key]
		if held == nil {
			held = make(map[int]time.Duration)
			w.holding[op.Key] = held
		}
		if !w.opts.Fenced {
			var others []int
			for p := range held {
				if p != op.Process {
					others = append(others, p)
				}
			}
			if len(others) > 0 {
				sort.Slice(others, func(i, j int) bool { return held[others[i]] < held[others[j]] })
				q := others[0]
				w.first = &Anomaly{Kind: "double-holder", Key: op.Key, Processes: []int{q, op.Process},
					Start: op.Time, End: op.Time, Ops: []int{op.Index},
					Explanation: fmt.Sprintf("process %d was granted %s at %s while process %d, granted it at %s, had not released it",
						op.Process, op.Key, secs(op.Time), q, secs(held[q]))}
				return *w.first, true
			}
		}
		if _, again := held[op.Process]; again {
			w.reentered[watchHold{op.Key, op.Process}]++
			break
		}
		held[op.Process] = op.Time
	case op.F == history.FRelease && op.Type == history.Invoke:
		if k := (watchHold{op.Key, op.Process}); w.reentered[k] > 0 {
			w.reentered[k]--
			break
		}
		w.unhold(op.Key, op.Process, op.Time)
	case op.F == history.FCrash && op.Type == history.Invoke:
		for key := range w.holding {
			w.unhold(key, op.Process, op.Time)
		}
	case op.F == history.FCS && op.Type == history.Invoke:
		c := csOpen{at: op.Time}
		if op.Value != nil {
			c.token = op.Value.Token
		}
		w.csInvoked[op.Process] = c
	case op.F == history.FCS && op.Type != history.Invoke:
		c, ok := w.csInvoked[op.Process]
		delete(w.csInvoked, op.Process)
		if op.Value != nil && op.Value.Token != 0 {
			c.token = op.Value.Token
		}
		if !ok || op.Type != history.OK || c.token == 0 || !w.opts.Fenced {
			return Anomaly{}, false
		}
		if a, ok := w.acceptCS(op, c.at, c.token); ok {
			return a, true
		}
		return w.sameRead(op, c.at, c.token)
	}
	return Anomaly{}, false
}

// unhold ends process p's hold of key at t; a key left with no holder is
// free from t.
func (w *Watch) unhold(key string, p int, t time.Duration) {
	held := w.holding[key]
	if _, ok := held[p]; !ok {
		return
	}
	delete(held, p)
	delete(w.reentered, watchHold{key, p})
	if len(held) == 0 {
		w.free[key] = &freeSince{at: t}
	}
}

// stuck applies the liveness checker's stuck-lock rule as of op: a key
// without a holder for longer than Options.StuckBound (up to op's time, or
// up to op when op grants it) while at least one acquire of it failed. It
// also keeps the free stretches up to date for the acquire ops.
func (w *Watch) stuck(op history.Op) (Anomaly, bool) {
	if op.F == history.FAcquire && !op.IsNemesis() {
		fs := w.free[op.Key]
		switch {
		case fs == nil && op.Type == history.Invoke && len(w.holding[op.Key]) == 0:
			w.free[op.Key] = &freeSince{at: op.Time}
		case fs != nil && op.Type == history.Fail && len(w.holding[op.Key]) == 0 && op.Time > fs.at:
			fs.failed = append(fs.failed, op.Process)
			fs.ops = append(fs.ops, op.Index)
		}
	}
	k, found := "", false
	for key, fs := range w.free {
		if len(fs.failed) > 0 && len(w.holding[key]) == 0 && op.Time-fs.at > w.opts.StuckBound && (!found || key < k) {
			k, found = key, true
		}
	}
	if !found {
		return Anomaly{}, false
	}
	fs := w.free[k]
	var procs []int
	for _, p := range fs.failed {
		if !slices.Contains(procs, p) {
			procs = append(procs, p)
		}
	}
	w.first = &Anomaly{Kind: "stuck-lock", Key: k, Processes: procs, Start: fs.at, End: op.Time,
		Ops: fs.ops[:min(len(fs.ops), 20)],
		Explanation: fmt.Sprintf("lock %s has had no holder since %s, longer than the %.2f s bound, while %s failed",
			k, secs(fs.at), w.opts.StuckBound.Seconds(), plural(len(fs.failed), "acquire", "acquires"))}
	return *w.first, true
}

// acceptCS records an accepted fenced critical section invoked at inv, and
// reports it when an earlier one that returned before inv carried a higher
// token.
func (w *Watch) acceptCS(op history.Op, inv time.Duration, tok int64) (Anomaly, bool) {
	acc := w.accepted[op.Key]
	i := sort.Search(len(acc), func(i int) bool { return acc[i].ret >= inv })
	if i > 0 && acc[i-1].max > tok {
		// The earliest accepted section with the higher token, for the story.
		j := sort.Search(i, func(j int) bool { return acc[j].max > tok })
		e := acc[j]
		w.first = &Anomaly{Kind: "stale-write", Key: op.Key, Processes: []int{e.proc, op.Process},
			Start: e.ret, End: op.Time, Ops: []int{op.Index},
			Explanation: fmt.Sprintf("the resource accepted process %d's critical section on %s with %s at %s, after it had accepted process %d's %s at %s",
				op.Process, op.Key, w.opts.Tokens.Token(tok), secs(op.Time), e.proc, w.opts.Tokens.Token(e.token), secs(e.ret))}
		return *w.first, true
	}
	m := tok
	if n := len(acc); n > 0 {
		m = max(m, acc[n-1].max)
	}
	w.accepted[op.Key] = append(acc, acceptedCS{ret: op.Time, max: m, proc: op.Process, token: tok})
	return Anomaly{}, false
}

// sameRead applies the fencing checker's same-read rule to an accepted
// critical section invoked at call: of two accepted critical sections that
// read the same value, the one with the lower token is stale when the other
// was invoked before it returned.
func (w *Watch) sameRead(op history.Op, call time.Duration, tok int64) (Anomaly, bool) {
	v := op.Value
	if v.Read == nil || !(v.Wrote == nil && !w.inventory || v.Wrote != nil && *v.Wrote != *v.Read) {
		return Anomaly{}, false
	}
	reads := w.byRead[op.Key]
	if reads == nil {
		reads = make(map[int64][]readCS)
		w.byRead[op.Key] = reads
	}
	x := readCS{call: call, ret: op.Time, token: tok, proc: op.Process}
	for _, y := range reads[*v.Read] {
		seen, stale := y, x
		switch {
		case y.token > x.token:
		case y.token < x.token && x.call <= y.ret:
			seen, stale = x, y
		default:
			continue
		}
		w.first = &Anomaly{Kind: "stale-write", Key: op.Key, Processes: []int{seen.proc, stale.proc},
			Start: min(seen.call, stale.call), End: op.Time, Ops: []int{op.Index},
			Explanation: fmt.Sprintf("the resource accepted process %d's critical section on %s with %s, which read %d as process %d's with %s did",
				stale.proc, op.Key, w.opts.Tokens.Token(stale.token), *v.Read, seen.proc, w.opts.Tokens.Token(seen.token))}
		return *w.first, true
	}
	reads[*v.Read] = append(reads[*v.Read], x)
	return Anomaly{}, false
}

// FirstAnomaly runs a Watch over h and returns the first anomaly it finds.
func FirstAnomaly(h history.History, opts Options) (Anomaly, bool) {
	w := NewWatch(opts)
	for _, op := range h {
		if a, ok := w.Observe(op); ok {
			return a, true
		}
	}
	return Anomaly{}, false
}
