package checker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// NewLiveness returns the liveness checker. A history in which no acquire
// ever succeeded proves nothing, so it is Unknown, with the reason in
// Error (unless a stuck bound finds it stuck); so is one whose grants
// stopped long before its end with no fault in force to explain it (see
// grantsStopped), unless a stuck bound is set. With
// opts.StuckBound > 0, a lock key that had no holder for longer than the
// bound, between the first acquire invoke (or the end of a hold) and the next
// grant (or the end of the history), while at least one acquire of it failed,
// is stuck ("stuck-lock", Invalid): the lock service kept refusing a lock no
// live process held. A long critical section is not a stuck lock: the time
// any process held the lock (see NewOverlap) does not count. Choose the bound
// above the lock's lease, since a crashed holder's lease must run out first.
func NewLiveness(opts Options) Checker { return &liveness{opts: opts} }

// liveness implements NewLiveness.
type liveness struct{ opts Options }

// Name returns "liveness".
func (c *liveness) Name() string { return "liveness" }

// Check checks h.
func (c *liveness) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// checkAnalysis implements analyzer.
func (c *liveness) checkAnalysis(_ context.Context, a *analysis) Result {
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	r := newResult(c.Name())
	type keyInfo struct {
		first time.Duration   // first acquire invoke
		fails []time.Duration // acquire fail completions
		ops   []int           // their history indices
		procs []int
	}
	info := make(map[string]*keyInfo)
	var keys []string
	attempts, grants, failed, unknown := 0, 0, 0, 0
	for _, pr := range a.pairs {
		inv := pr.Invoke
		if inv.F != history.FAcquire {
			continue
		}
		attempts++
		k := info[inv.Key]
		if k == nil {
			k = &keyInfo{first: inv.Time}
			info[inv.Key] = k
			keys = append(keys, inv.Key)
		}
		switch pr.Type() {
		case history.OK:
			grants++
		case history.Fail:
			failed++
			k.fails = append(k.fails, pr.Complete.Time)
			k.ops = append(k.ops, pr.Complete.Index)
			k.procs = append(k.procs, inv.Process)
		default:
			unknown++
		}
	}
	r.Stats["grants"] = grants
	r.Stats["acquire_attempts"] = attempts
	r.Stats["acquires_failed"] = failed
	r.Stats["acquires_indeterminate"] = unknown
	if grants == 0 {
		// Nothing was tested: a broken worker or a dead service is far
		// likelier than a lock that refuses everyone, and neither is a
		// finding about mutual exclusion.
		r.Valid = Unknown
		r.Error = fmt.Sprintf("no process was ever granted a lock: the run proves nothing (%s: %d failed, %d indeterminate)",
			plural(attempts, "acquire attempt", "acquire attempts"), failed, unknown)
	} else if c.opts.StuckBound <= 0 {
		if why := grantsStopped(a); why != "" {
			r.Valid, r.Error = Unknown, why
		}
	}
	why := serverExited(a.h)
	if why != "" {
		r.Valid, r.Error = Unknown, why
		if grants == 0 {
			r.Error = fmt.Sprintf("no process was ever granted a lock; %s", why)
		}
	}
	// A lock is stuck only on a live service: one whose server died is
	// undecided, not stuck.
	if c.opts.StuckBound <= 0 || why != "" {
		return r
	}
	// Per key, the holds in order of grant; the gaps between them (from the
	// first acquire invoke) are the times the lock had no holder.
	all := a.getHolds()
	counts := make(map[string]int)
	for i := range all {
		counts[all[i].key]++
	}
	byKey := make(map[string][]*hold, len(counts))
	for k, n := range counts {
		byKey[k] = make([]*hold, 0, n)
	}
	for i := range all {
		byKey[all[i].key] = append(byKey[all[i].key], &all[i])
	}
	stuck := 0
	for _, k := range keys {
		ki := info[k]
		sort.Sort(byFail{ki.fails, ki.ops, ki.procs})
		free := ki.first
		var last *hold
		holds := byKey[k]
		check := func(until time.Duration, next *hold) {
			if until-free <= c.opts.StuckBound {
				return
			}
			lo := sort.Search(len(ki.fails), func(i int) bool { return ki.fails[i] > free })
			hi := sort.Search(len(ki.fails), func(i int) bool { return ki.fails[i] > until })
			if lo == hi {
				return
			}
			stuck++
			if stuck <= maxListed {
				an := stuckLock(k, free, until, c.opts.StuckBound, last, next, ki.procs[lo:hi], ki.ops[lo:hi], a.getFaults())
				an.Explanation = sentences(an.Explanation, crashAtFailpoint(a.h, k, faultsDuring(a.getFaults(), free, until)))
				r.Anomalies = append(r.Anomalies, an)
			}
		}
		for _, hd := range holds {
			if hd.start > free {
				check(hd.start, hd)
			}
			if hd.end > free {
				free, last = hd.end, hd
			}
		}
		check(a.end, nil)
	}
	r.Stats["stuck_locks"] = stuck
	if stuck > 0 {
		r.Valid = Invalid
	}
	return r
}

// stuckLock explains a lock left without a holder while acquires failed.
func stuckLock(key string, from, to, bound time.Duration, last, next *hold, failedBy, ops []int, faults []history.Fault) Anomaly {
	an := Anomaly{Kind: "stuck-lock", Key: key, Processes: []int{}, Start: from, End: to}
	seen := make(map[int]bool)
	for _, p := range failedBy {
		if !seen[p] {
			seen[p] = true
			an.Processes = append(an.Processes, p)
		}
	}
	an.Ops = append(an.Ops, ops[:min(len(ops), 20)]...)
	in := faultsDuring(faults, from, to)
	an.Nemesis = describeFaults(in)
	before := "from the first acquire at " + secs(from) + ","
	if last != nil {
		how := "started its release"
		switch last.endKind {
		case endCrash:
			how = "was retired"
		case endHistory:
			how = "stopped"
		}
		before = fmt.Sprintf("from %s, when process %d (granted it at %s) %s,", secs(from), last.proc, secs(last.start), how)
	}
	after := "until the history ended at " + secs(to)
	if next != nil {
		after = fmt.Sprintf("until process %d was granted it at %s", next.proc, secs(to))
	}
	an.Explanation = sentences(fmt.Sprintf("lock %s had no granted holder for %.2f s, longer than the %.2f s bound, %s %s, while %s failed.",
		key, (to-from).Seconds(), bound.Seconds(), before, after, plural(len(failedBy), "acquire", "acquires")),
		faultSentence(in, -1, ""))
	return an
}

// crashAtFailpoint tells how a worker that a crash (kill-worker) among
// faults killed while it was stopped at a failpoint in its acquire of key
// left the lock behind. It returns "" when no crash was of that kind. When the
// client's failpoint event says the key has no TTL yet, it says what that
// means: no lease will ever free the lock.
func crashAtFailpoint(h history.History, key string, faults []history.Fault) string {
	for _, f := range faults {
		if f.F != history.FKillWorker || len(f.Ops) == 0 {
			continue
		}
		for _, p := range f.Targets {
			inv, ev := failpointBefore(h, p, key, f.Ops[0])
			if ev == nil {
				continue
			}
			s := fmt.Sprintf("Process %d was killed by the crash nemesis (%s at %s) while stopped at a failpoint in its acquire of %s (begun at %s), which its client reported at %s: %q.",
				p, f.F, secs(f.Start), key, secs(inv.Time), secs(ev.Time), ev.Value.Ext().Detail)
			if strings.Contains(ev.Value.Ext().Detail, "no TTL") {
				s += fmt.Sprintf(" It died after taking the key and before giving it a TTL: key %s has no TTL, so no lease ever runs out and the lock stays taken by a dead process.", key)
			}
			return s
		}
	}
	return ""
}

// failpointBefore returns process p's acquire of key that was still in
// flight at history index i and the failpoint event p reported during it
// (nil when it reported none), or nils.
func failpointBefore(h history.History, p int, key string, i int) (inv, ev *history.Op) {
	for j := min(i, len(h)) - 1; j >= 0; j-- {
		op := &h[j]
		if op.Process != p {
			continue
		}
		switch {
		case op.F == history.FEvent:
			if ev == nil && op.Value != nil && strings.HasPrefix(op.Value.Ext().Detail, history.EventFailpointPrefix) {
				ev = op
			}
		case op.Type == history.Invoke && op.F == history.FAcquire && op.Key == key:
			return op, ev // ev nil: no stop reported in this acquire
		default:
			return nil, nil // p completed something since: no stop was in flight
		}
	}
	return nil, nil
}

// byFail sorts failed acquires by completion time, keeping their ops and
// processes in step.
type byFail struct {
	at    []time.Duration
	ops   []int
	procs []int
}

func (b byFail) Len() int           { return len(b.at) }
func (b byFail) Less(i, j int) bool { return b.at[i] < b.at[j] }
func (b byFail) Swap(i, j int) {
	b.at[i], b.at[j] = b.at[j], b.at[i]
	b.ops[i], b.ops[j] = b.ops[j], b.ops[i]
	b.procs[i], b.procs[j] = b.procs[j], b.procs[i]
}

// Grants that stop for longer than stallMin and stallShare of the history,
// with acquires still failing and no fault in force, leave a run that
// tested nothing for that long: a lock server or a worker setup that broke.
const (
	stallMin   = 5 * time.Second
	stallShare = 2 // the stall is longer than 1/stallShare of the history
)

// grantsStopped returns why a history whose grants stopped is undecided,
// or "" when they did not: the last grant was completed more than stallMin
// and more than half the history before its end, acquires invoked after it
// failed or went unanswered, and no fault was in force after it. With a
// stuck bound set, the bound decides instead (a stuck lock is Invalid).
func grantsStopped(a *analysis) string {
	last := time.Duration(-1)
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FAcquire && pr.Type() == history.OK {
			last = max(last, pr.Complete.Time)
		}
	}
	gap := a.end - last
	if last < 0 || gap <= stallMin || gap*stallShare <= a.end {
		return ""
	}
	tried := 0
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FAcquire && pr.Invoke.Time > last && pr.Type() != history.OK {
			tried++
		}
	}
	if tried == 0 || len(faultsDuring(a.getFaults(), last, a.end)) > 0 {
		return ""
	}
	return fmt.Sprintf("grants stopped at %.2f s, %.2f s before the end of the history, while %s failed or went unanswered and no fault was in force: "+
		"a lock server or the workers stopped working, so the rest of the run tested nothing",
		last.Seconds(), gap.Seconds(), plural(tried, "acquire", "acquires"))
}

// serverExited returns why a history in which a server of the run exited
// with no fault asking for it (history.FServerExit) is undecided, or ""
// when none did: the run ended there, and a service that lost a server on
// its own is not the service the test meant to judge.
func serverExited(h history.History) string {
	for i := range h {
		op := &h[i]
		if op.F != history.FServerExit || op.Type != history.Info {
			continue
		}
		name, how := "a server", "it exited"
		if v := op.Value; v != nil {
			if len(v.Ext().Nodes) > 0 {
				name = "server " + strings.Join(v.Ext().Nodes, ", ")
			}
			if v.Ext().Detail != "" {
				how = v.Ext().Detail
			}
		}
		return fmt.Sprintf("%s exited at %.2f s with no fault asking for it (%s): the run ended there, and what it recorded proves nothing about the lock",
			name, op.Time.Seconds(), how)
	}
	return ""
}
