package checker

import (
	"cmp"
	"slices"
	"time"
)

// The direct lock decision. On one key, a linearization of the mutex model
// is a sequence of holds: a process's acquire takes effect at an instant x
// in its interval, and the end of its hold (its release, or the crash that
// retired it) at an instant y >= x in its own; holds do not overlap. A
// hold whose acquire returned (ar) and whose end was invoked later (ec) is
// certainly held over [ar, ec], whatever instants its ops took effect at:
// x <= ar and y >= ec. Two such certain intervals on one key can therefore
// never overlap, and when none do, the holds are ordered by them, and
// taking every end as early as it may (y = ec, which is never before
// x <= ar) leaves the lock free over [ec_i, ar_i+1] between consecutive
// holds, so that every acquire fits: a key is decided in O(n log n) with no
// search, by sorting the certain intervals and checking they are disjoint.
//
// This holds when each process's ops on the key are a sequence of holds:
// acquire, then release, then acquire ..., and any op that ended in doubt
// is its process's last on the key but for the crash that retired it, as
// the controller makes it: a doubtful acquire then constrains nothing (it
// can be placed last), and a doubtful release or a crash ends its hold at
// any instant after its invocation, best at once. A release that failed
// for certain (an abandon, see NewMutex) ends its hold the same way, before
// the process's next operation on the key. Porcupine's model lets a
// doubtful op land at any later time, even after later ops of its own
// process, which a sequence of holds cannot express; so a key where a
// process goes on after a doubtful op, or any other shape (a release ok
// with nothing held, two grants in a row, ops after a crash), is left to
// Porcupine.

// lockHold is one hold of a lock on one key, as the direct decision sees it.
type lockHold struct {
	proc int
	acq  *mutexOp
	// end is the release or crash that ended the hold; nil when nothing
	// did (the lock was held to the end of the history).
	end *mutexOp
	// ac and ar bound the acquire; ec and er the end (forever when it may
	// land at any later time, or never comes).
	ac, ar, ec, er time.Duration
}

// lockConflict is a hold whose certain interval overlaps a later one's.
type lockConflict struct {
	// holder is the hold in the way; later the first hold it overlaps.
	holder, later *lockHold
	// more are further holds the same holder overlaps.
	more []*lockHold
}

// lockOrder is the outcome of the direct decision on one key.
type lockOrder struct {
	// simple says the key has the shape the direct decision handles;
	// when false, nothing else is set.
	simple    bool
	holds     int
	conflicts []lockConflict
}

// decideLock decides one key's mutex ops (in any order) directly.
func decideLock(ops []linInput) lockOrder {
	sorted := make([]*mutexOp, len(ops))
	for i, in := range ops {
		sorted[i] = in.(*mutexOp)
	}
	sortStable(sorted, func(a, b *mutexOp) int { return cmp.Compare(a.call, b.call) })
	holds := make([]lockHold, 0, len(sorted)/2+1)
	open := make(map[int]int)  // process -> index of its hold still without an end
	done := make(map[int]bool) // process -> it had a doubtful op or a crash here
	for _, op := range sorted {
		p := op.proc
		if op.ret < op.call || (done[p] && op.kind != mCrash) {
			return lockOrder{}
		}
		if op.info {
			done[p] = true
		}
		i, holding := open[p]
		switch op.kind {
		case mAcquire:
			if op.info {
				continue // its process's last: it can be placed last
			}
			if holding {
				return lockOrder{} // granted twice in a row: the search decides
			}
			open[p] = len(holds)
			holds = append(holds, lockHold{proc: p, acq: op, ac: op.call, ar: op.ret, ec: forever, er: forever})
		case mRelease, mCrash:
			if !holding {
				if op.info {
					continue // a crash or doubtful release of nothing is a no-op
				}
				return lockOrder{}
			}
			h := &holds[i]
			if op.call < h.ar {
				return lockOrder{} // times out of order: leave it to the search
			}
			h.end, h.ec, h.er = op, op.call, op.ret
			delete(open, p)
		default:
			return lockOrder{}
		}
	}
	out := lockOrder{simple: true, holds: len(holds)}
	order := make([]*lockHold, len(holds))
	for i := range holds {
		order[i] = &holds[i]
	}
	sortStable(order, func(a, b *lockHold) int {
		if c := cmp.Compare(a.ar, b.ar); c != 0 {
			return c
		}
		return cmp.Compare(a.ec, b.ec)
	})
	// The certain intervals must be disjoint; the hold in the way of a
	// later one is the one with the latest end so far.
	var block *lockHold
	for _, h := range order {
		if block != nil && block.ec > h.ar {
			if n := len(out.conflicts); n > 0 && out.conflicts[n-1].holder == block {
				out.conflicts[n-1].more = append(out.conflicts[n-1].more, h)
			} else {
				out.conflicts = append(out.conflicts, lockConflict{holder: block, later: h})
			}
		}
		if block == nil || h.ec > block.ec {
			block = h
		}
	}
	return out
}

// witness returns the ops of a conflict, the smallest part of the key's
// history that no order fits, for the visualization.
func (c lockConflict) witness() []linInput {
	var out []linInput
	add := func(h *lockHold) {
		if h == nil {
			return
		}
		out = append(out, h.acq)
		if h.end != nil {
			out = append(out, h.end)
		}
	}
	add(c.holder)
	add(c.later)
	return out
}

// explainConflict tells the story of a conflict: which two holds no order
// of the ops can separate (see heldBoth).
func (c *mutex) explainConflict(key string, cf lockConflict) Anomaly {
	an := Anomaly{Kind: "nonlinearizable", Key: key, Fenced: c.opts.Fenced}
	addOps := func(h *lockHold) {
		if h.acq.done >= 0 {
			an.Ops = append(an.Ops, h.acq.done)
		} else {
			an.Ops = append(an.Ops, h.acq.inv)
		}
		if h.end != nil {
			an.Ops = append(an.Ops, h.end.inv)
		}
	}
	e, l := cf.holder, cf.later
	an.Processes = []int{e.proc, l.proc}
	an.Start, an.End = l.ar, min(e.ec, l.ec)
	addOps(e)
	addOps(l)
	for _, m := range cf.more {
		if len(an.Ops) < maxOps {
			addOps(m)
		}
		an.End = max(an.End, min(e.ec, m.ec))
	}
	if an.End == forever {
		an.End = an.Start
	}
	an.Explanation = heldBoth(key, e, l, len(cf.more), c.opts.Tokens)
	return an
}

// sortStable sorts s stably by c, skipping the sort when s is already in
// order, as a history's ops nearly always are.
func sortStable[T any](s []T, c func(a, b T) int) {
	if !slices.IsSortedFunc(s, c) {
		slices.SortStableFunc(s, c)
	}
}
