package checker

import (
	"fmt"
	"sort"
	"time"
)

// The direct lock decision. On one key, a linearization of the mutex model
// is a sequence of holds: a process's acquire takes effect at an instant x
// in its interval, and the end of its hold (its release, or the crash that
// retired it) at an instant y >= x in its own; holds do not overlap. A
// hold whose acquire returned (ar) and whose end was invoked later (ec) is
// certainly held over [ar, ec], whatever instants its ops took effect at:
// x <= ar and y >= ec. Two such certain intervals on one key can therefore
// never overlap, and when none do, the holds are ordered by them and taking
// every end as early as it may (y = ec, which is never before x <= ar)
// leaves the lock free over [ec_i, ar_i+1] between consecutive holds, the
// most any order can. A hold whose acquire ended in doubt (info, not the
// process's last op, so the model requires it to take effect) has no
// certain interval: it needs one free instant in [max(its call, its end's
// call), its end's return], and such a hold never keeps any other from
// its place. So a key is decided in O(n log n) with no search: sort the
// certain intervals, check they are disjoint, and look each doubtful hold's
// window up among the free gaps.
//
// This holds when each process's ops on the key are a sequence of holds:
// acquire, then release (ok or info), then acquire ..., the last hold ended
// by a release, by the crash that retired the process, or by nothing (held
// to the end). Any other shape on a key (a release with nothing held, two
// acquires in a row, ops after a crash) is left to Porcupine.

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

// floating reports whether the hold's acquire ended in doubt, so that it
// has no certain interval.
func (h *lockHold) floating() bool { return h.ar == forever }

// lockConflict is one way a key's holds cannot be ordered.
type lockConflict struct {
	// holder is the hold whose certain interval is in the way; later the
	// hold that could not be placed.
	holder, later *lockHold
	// more counts further holds the same holder was in the way of.
	more []*lockHold
	// cover, for a doubtful later hold, are the holds whose certain
	// intervals cover its whole window.
	cover []*lockHold
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
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].call < sorted[j].call })
	holds := make([]lockHold, 0, len(sorted)/2+1)
	open := make(map[int]int)     // process -> index of its hold still without an end
	crashed := make(map[int]bool) // process -> its crash was seen on this key
	for _, op := range sorted {
		if crashed[op.proc] || op.ret < op.call {
			return lockOrder{}
		}
		i, holding := open[op.proc]
		switch op.kind {
		case mAcquire:
			if holding {
				return lockOrder{}
			}
			open[op.proc] = len(holds)
			holds = append(holds, lockHold{proc: op.proc, acq: op, ac: op.call, ar: op.ret, ec: forever, er: forever})
		case mRelease, mCrash:
			if op.kind == mCrash {
				crashed[op.proc] = true
			}
			if !holding {
				if op.kind == mCrash {
					continue // a no-op: the process held nothing here
				}
				return lockOrder{}
			}
			h := &holds[i]
			if !h.floating() && op.call < h.ar {
				return lockOrder{} // times out of order: leave it to the search
			}
			h.end, h.ec, h.er = op, op.call, op.ret
			delete(open, op.proc)
		default:
			return lockOrder{}
		}
	}
	out := lockOrder{simple: true, holds: len(holds)}
	var fixed, doubtful []*lockHold
	forevers := 0
	for i := range holds {
		h := &holds[i]
		switch {
		case !h.floating():
			fixed = append(fixed, h)
		case h.end == nil:
			forevers++
			doubtful = append(doubtful, h)
		default:
			doubtful = append(doubtful, h)
		}
	}
	sort.SliceStable(fixed, func(i, j int) bool {
		if fixed[i].ar != fixed[j].ar {
			return fixed[i].ar < fixed[j].ar
		}
		return fixed[i].ec < fixed[j].ec
	})
	// The certain intervals must be disjoint; the hold in the way of a
	// later one is the one with the latest end so far.
	var block *lockHold
	for _, h := range fixed {
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
	if len(out.conflicts) > 0 {
		return out
	}
	// The free gaps: before the first hold, between holds, after the last.
	type gap struct{ from, to time.Duration }
	gaps := make([]gap, 0, len(fixed)+1)
	prev := time.Duration(-1 << 63)
	for _, h := range fixed {
		gaps = append(gaps, gap{prev, h.ar})
		prev = h.ec
	}
	if prev != forever {
		gaps = append(gaps, gap{prev, forever})
	}
	for _, h := range doubtful {
		lo, hi := max(h.ac, h.ec), h.er
		if h.end == nil {
			// Held from some instant on for ever: it needs the lock free
			// after every other hold, and no other hold for ever.
			if forevers > 1 || prev == forever {
				out.conflicts = append(out.conflicts, lockConflict{later: h, cover: foreverCover(fixed, doubtful, h)})
			}
			continue
		}
		k := sort.Search(len(gaps), func(k int) bool { return gaps[k].to >= lo })
		if k < len(gaps) && gaps[k].from <= hi {
			continue
		}
		var cover []*lockHold
		for _, f := range fixed {
			if f.ar <= hi && f.ec >= lo {
				cover = append(cover, f)
			}
		}
		out.conflicts = append(out.conflicts, lockConflict{later: h, cover: cover})
	}
	return out
}

// foreverCover names what keeps a doubtful hold that never ends from being
// the last: the other holds that never end, or the last hold.
func foreverCover(fixed, doubtful []*lockHold, h *lockHold) []*lockHold {
	var out []*lockHold
	for _, d := range doubtful {
		if d != h && d.end == nil {
			out = append(out, d)
		}
	}
	if n := len(fixed); n > 0 && fixed[n-1].ec == forever {
		out = append(out, fixed[n-1])
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
	for _, h := range c.cover {
		add(h)
	}
	return out
}

// holdSpan says what is certain about a hold: "its acquire returned at
// 2.31 s (token 42) and it did not invoke its release until 5.60 s".
func holdSpan(h *lockHold) string {
	return fmt.Sprintf("its acquire returned at %s%s and %s", secs(h.ar), withToken(h.acq.token), endClause(h))
}

// explainConflict tells the story of a conflict in terms of the ops' real
// intervals.
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
	if cf.holder != nil {
		e, l := cf.holder, cf.later
		an.Processes = []int{e.proc, l.proc}
		an.Start, an.End = l.ar, min(e.ec, l.ec)
		addOps(e)
		addOps(l)
		more := ""
		if len(cf.more) > 0 {
			more = fmt.Sprintf(" Before %d gave it up, %s more acquired it.", e.proc, plural(len(cf.more), "process", "processes"))
			for _, m := range cf.more {
				if len(an.Ops) < maxOps {
					addOps(m)
				}
				an.End = max(an.End, min(e.ec, m.ec))
			}
		}
		if an.End == forever {
			an.End = an.Start
		}
		an.Explanation = fmt.Sprintf("Processes %d and %d both held lock %s at %s, whatever instants within their real intervals their operations took effect at: %d's acquire (%s) returned at %s%s and %s; %d's acquire (%s) returned at %s%s.%s The overlap checker tells who held the lock when.",
			e.proc, l.proc, key, secs(l.ar), e.proc, span(e.ac, e.ar), secs(e.ar), withToken(e.acq.token), endClause(e),
			l.proc, span(l.ac, l.ar), secs(l.ar), withToken(l.acq.token), more)
		return an
	}
	h := cf.later
	an.Processes = []int{h.proc}
	addOps(h)
	lo, hi := max(h.ac, h.ec), h.er
	an.Start, an.End = lo, hi
	var who []string
	for _, f := range cf.cover {
		an.Processes = append(an.Processes, f.proc)
		if len(an.Ops) < maxOps {
			addOps(f)
		}
		if len(who) < maxEvents {
			who = append(who, fmt.Sprintf("process %d (%s)", f.proc, holdSpan(f)))
		}
	}
	if len(cf.cover) > len(who) {
		who = append(who, fmt.Sprintf("%d more", len(cf.cover)-len(who)))
	}
	if h.end == nil {
		an.End = max(an.Start, an.End)
		if hi == forever {
			an.End = lo
		}
		an.Explanation = fmt.Sprintf("Process %d's acquire of lock %s, invoked at %s, ended in doubt and %d went on without releasing it, so the model has it take effect and hold the lock for ever after; but %s also held the lock to the end.",
			h.proc, key, secs(h.ac), h.proc, joinAnd(who))
		return an
	}
	an.Explanation = fmt.Sprintf("Process %d's acquire of lock %s, invoked at %s, ended in doubt, yet %d then released the lock (%s): the acquire must have taken effect at an instant between %s and %s when the lock was free, but %s held it throughout.",
		h.proc, key, secs(h.ac), h.proc, span(h.ec, h.er), secs(lo), secs(hi), joinAnd(who))
	return an
}

// endClause says what is certain about the end of a hold: "it did not
// invoke its release until 5.60 s".
func endClause(h *lockHold) string {
	switch {
	case h.end == nil:
		return "it never released it"
	case h.end.kind == mCrash:
		return "it was not retired until " + secs(h.ec)
	}
	return "it did not invoke its release until " + secs(h.ec)
}
