package checker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// NewOverlap returns the overlap checker. A process holds a lock from the
// completion of its acquire ok to its next release invoke or crash invoke, or
// the end of the history. A linear sweep over these holds, per key, finds
// every pair of processes whose holds overlap, and reports one
// "double-holder" anomaly per overlapped hold: the earlier holder and the
// first process granted the lock while it still held it (who, when, for how
// long, which faults were in force), and how many more grants followed. It also names every release ok that
// deleted another holder's key ("foreign-release": a plain DEL that does not
// check the owner, reported through Value.DeletedOwner).
//
// Any anomaly makes the result Invalid. With opts.Fenced every anomaly is
// marked Fenced, and a double holder's story counts the stale accesses the
// resource refused from the earlier holder once the later one was granted
// the lock (any access of the earlier holder is stale from then on, even
// after the overlap ends); Default then
// wraps the checker in Advisory. At most 1000 anomalies of each kind are
// listed; Stats counts them all.
func NewOverlap(opts Options) Checker { return &overlap{opts: opts} }

// overlap implements NewOverlap.
type overlap struct{ opts Options }

// Name returns "overlap".
func (c *overlap) Name() string { return "overlap" }

// Check checks h.
func (c *overlap) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// checkAnalysis implements analyzer.
func (c *overlap) checkAnalysis(_ context.Context, a *analysis) Result {
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	r := newResult(c.Name())
	holds := a.getHolds()
	faults := a.getFaults()
	refused := c.refusals(a)

	byKey := make(map[string][]int)
	var keys []string
	for i, hd := range holds {
		if _, ok := byKey[hd.key]; !ok {
			keys = append(keys, hd.key)
		}
		byKey[hd.key] = append(byKey[hd.key], i)
	}
	// Every hold that another process's grant overlapped becomes one
	// anomaly: a holder paused for three leases overlaps every grant made
	// while it was stopped, and one story with a count reads better than a
	// hundred pairs.
	groups := make(map[int][]overlapPair) // earlier hold -> later holds that overlap it
	var order []int
	doubles := 0
	for _, k := range keys {
		var active []int
		for _, i := range byKey[k] { // in order of grant
			h := holds[i]
			keep := active[:0]
			for _, j := range active {
				if holds[j].end > h.start {
					keep = append(keep, j)
				}
			}
			active = keep
			for _, j := range active {
				e := holds[j]
				if e.proc == h.proc {
					continue
				}
				// A hold of zero length (its release invoked the instant
				// its acquire returned) inside e's still overlaps it: the
				// grant came while e held the lock, as the mutex checker
				// and Porcupine's model say too.
				from, to := h.start, min(e.end, h.end)
				if from > to {
					continue
				}
				doubles++
				if len(groups[j]) == 0 {
					order = append(order, j)
				}
				groups[j] = append(groups[j], overlapPair{later: i, from: from, to: to})
			}
			active = append(active, i)
		}
	}
	events := eventsByProcess(a.h)
	var releases map[int]string // release invoke -> its detail, for combined locks' stories
	releaseOf := func(op int) string {
		if releases == nil {
			releases = releaseDetails(a)
		}
		return releases[op]
	}
	var lost map[int]string // acquire -> its lost-lock window's sentence (window.go)
	if len(order) > 0 {
		lost = windowStories(a)
	}
	for n, j := range order {
		if n == maxListed {
			break
		}
		an := c.double(holds, j, groups[j], faults, refused, events[holds[j].proc], releaseOf)
		an.Explanation = sentences(an.Explanation, backendSentence(a, holds[j], holds[groups[j][0].later]), lost[holds[j].acquire])
		r.Anomalies = append(r.Anomalies, an)
	}
	foreign := c.foreign(a, holds, &r)
	r.Stats["holds"] = len(holds)
	r.Stats["double_holders"] = doubles
	r.Stats["overlapped_holds"] = len(order)
	r.Stats["foreign_releases"] = foreign
	if doubles+foreign > 0 {
		r.Valid = Invalid
	}
	sort.SliceStable(r.Anomalies, func(i, j int) bool { return r.Anomalies[i].Start < r.Anomalies[j].Start })
	return r
}

// refusals returns, per process, the completion times of its critical
// sections the fenced resource refused.
func (c *overlap) refusals(a *analysis) map[int][]time.Duration {
	if !c.opts.Fenced {
		return nil
	}
	out := make(map[int][]time.Duration)
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FCS && pr.Type() == history.Fail {
			if v := pr.Value(); v != nil && v.Ext().Rejected != "" {
				out[pr.Invoke.Process] = append(out[pr.Invoke.Process], pr.Complete.Time)
			}
		}
	}
	return out
}

// overlapPair is a later hold that overlapped an earlier one over [from, to].
type overlapPair struct {
	later    int
	from, to time.Duration
}

// eventGrace is how long after a hold ends its client's events still belong
// to its story.
const eventGrace = 2 * time.Second

// maxOps bounds the op indices one double-holder anomaly lists.
const maxOps = 50

// double explains the holds that overlapped hold j: the first of them in
// full, the others as a count. releaseOf gives the detail of the release whose invoke has the given
// index (a combined lock's release says what it found of each half).
func (c *overlap) double(holds []hold, j int, pairs []overlapPair, faults []history.Fault, refused map[int][]time.Duration, events []*history.Op,
	releaseOf func(op int) string) Anomaly {
	e, first := holds[j], pairs[0]
	h := holds[first.later]
	to := first.to
	for _, p := range pairs {
		to = max(to, p.to)
	}
	an := Anomaly{
		Kind: "double-holder", Key: e.key, Processes: []int{e.proc, h.proc},
		Start: first.from, End: to, Ops: []int{e.acquire}, Fenced: c.opts.Fenced,
	}
	for _, p := range pairs {
		if len(an.Ops) < maxOps {
			an.Ops = append(an.Ops, holds[p.later].acquire)
		}
	}
	if e.endOp >= 0 {
		an.Ops = append(an.Ops, e.endOp)
	}
	in := faultsDuring(faults, e.start, to)
	an.Nemesis = describeFaults(in)
	story := fmt.Sprintf("processes %d and %d both held lock %s from %s to %s: %d was granted it at %s%s and %s; %d was granted it at %s%s",
		e.proc, h.proc, e.key, secs(first.from), secs(first.to), e.proc, secs(e.start), c.opts.Tokens.with(e.token)+onNodes(e.nodes), until(e),
		h.proc, secs(h.start), c.opts.Tokens.with(h.token)+onNodes(h.nodes))
	if h.end < e.end {
		story += " and " + until(h)
	}
	story += "."
	more := ""
	if len(pairs) > 1 {
		var procs []int
		seen := map[int]bool{}
		lo, hi := int64(0), int64(0)
		for _, p := range pairs[1:] {
			l := holds[p.later]
			if !seen[l.proc] {
				seen[l.proc] = true
				procs = append(procs, l.proc)
			}
			if l.token != 0 && (lo == 0 || l.token < lo) {
				lo = l.token
			}
			hi = max(hi, l.token)
		}
		more = fmt.Sprintf("While %d still held it, the lock was granted %s more (to %s%s).",
			e.proc, plural(len(pairs)-1, "time", "times"), processList(procs), c.opts.Tokens.tokenRange(lo, hi))
	}
	fenced := ""
	if c.opts.Fenced {
		// From the later grant on, every access of the earlier holder is
		// stale, whether or not the later holder still holds the lock.
		n := 0
		for _, t := range refused[e.proc] {
			if t >= h.start && t <= e.end {
				n++
			}
		}
		fenced = fmt.Sprintf("The lock is fenced: the resource refused %s from process %d after %d was granted the lock.",
			plural(n, "stale access", "stale accesses"), e.proc, h.proc)
	}
	// What the earlier holder's client noticed, up to a moment after it
	// let go: a paused client learns of its expired session only after it
	// resumes, often after its stale write.
	said, expired := eventSentence(events, e.proc, e.start, e.end+eventGrace)
	lost := ""
	if sess := sessionBefore(events, e.start); sess != "" {
		// A ZooKeeper or etcd client: name its session (lease). A pause
		// longer than the session timeout (lease TTL) expires it on the
		// servers even when the client, retired first, never heard of it.
		if d, ok := pausedLonger(in, e.proc, c.opts.Lease); ok || expired {
			lost = "its " + sess
			if c.opts.Server != "" {
				lost = "its " + c.opts.Server + " " + sess
			}
			switch {
			case ok && strings.HasPrefix(sess, "lease "):
				lost += fmt.Sprintf(" (TTL %s, paused %s)", secs(c.opts.Lease), secs(d))
			case ok && !expired:
				lost += fmt.Sprintf(" (timeout %s, paused %s)", secs(c.opts.Lease), secs(d))
			}
			lost += " expired"
		}
	}
	both := ""
	if cl, ok := history.CombinedLockOf(e.nodes); ok {
		// A lock granted on two services at once: its service says what
		// became of each half.
		rel := ""
		if e.endKind == endRelease {
			rel = releaseOf(e.endOp)
		}
		both, lost = cl.Tell(history.CombinedHold{Process: e.proc, Later: h.proc, Granted: e.start, Taken: h.start,
			Lease: c.opts.Lease, Faults: in, Events: events, Grace: eventGrace, Release: rel, Session: sessionBefore(events, e.start)})
	}
	if lost == "" {
		// A database lock: the server ended the silent session, not a
		// lease.
		lost = sessionEnded(c.opts.Session, in, e.proc)
	}
	an.Explanation = sentences(story, more, faultSentence(in, e.proc, lost), both, aftermath(in, e.proc, e.end), said, fenced)
	return an
}

// onNodes renders " on lock0, lock1 and lock2", the nodes that granted a
// lock, or nothing when the design did not say.
func onNodes(nodes []string) string {
	if len(nodes) == 0 {
		return ""
	}
	return " on " + joinAnd(nodes)
}

// processList names processes: "process 5", "processes 5, 1 and 3".
func processList(procs []int) string {
	if len(procs) == 1 {
		return fmt.Sprintf("process %d", procs[0])
	}
	s := "processes "
	for i, p := range procs {
		switch {
		case i == 0:
		case i == len(procs)-1:
			s += " and "
		default:
			s += ", "
		}
		s += fmt.Sprint(p)
	}
	return s
}

// tokenRange renders "; tokens 269 to 418" (or "; zxids 1:269 to 1:418"),
// or "" without tokens.
func (k TokenKind) tokenRange(lo, hi int64) string {
	switch {
	case hi == 0:
		return ""
	case lo == hi:
		return "; " + k.Token(lo)
	}
	first, last := k.Token(lo), k.Token(hi)
	word, from, _ := strings.Cut(first, " ")
	_, to, _ := strings.Cut(last, " ")
	return fmt.Sprintf("; %ss %s to %s", word, from, to)
}

// until says how a hold ended.
func until(hd hold) string {
	switch hd.endKind {
	case endRelease:
		return "did not start its release until " + secs(hd.end)
	case endCrash:
		return "was not retired until " + secs(hd.end)
	}
	return "still held it when the history ended at " + secs(hd.end)
}

// foreign lists releases that deleted another holder's key, and returns how
// many there were.
func (c *overlap) foreign(a *analysis, holds []hold, r *Result) int {
	// Only a plain DEL reports whose key it deleted; most designs never
	// do, and the owner maps below are costly on a long history.
	deleted := false
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FRelease && pr.Type() == history.OK && pr.Complete.Value != nil && pr.Complete.Value.Ext().DeletedOwner != "" {
			deleted = true
			break
		}
	}
	if !deleted {
		return 0
	}
	byOwner := make(map[string]int)
	for i, hd := range holds {
		if hd.owner != "" {
			byOwner[hd.owner] = i
		}
	}
	// The owner each process last acquired with, per key.
	mine := make(map[int]map[string]string)
	n := 0
	for _, pr := range a.pairs {
		inv := pr.Invoke
		switch {
		case inv.F == history.FAcquire && pr.Type() == history.OK:
			if v := pr.Value(); v != nil && v.Owner != "" {
				if mine[inv.Process] == nil {
					mine[inv.Process] = make(map[string]string)
				}
				mine[inv.Process][inv.Key] = v.Owner
			}
			continue
		case inv.F != history.FRelease || pr.Type() != history.OK:
			continue
		}
		v := pr.Complete.Value
		if v == nil || v.Ext().DeletedOwner == "" {
			continue
		}
		own := mine[inv.Process][inv.Key]
		if inv.Value != nil && inv.Value.Owner != "" {
			own = inv.Value.Owner
		}
		if own == "" || own == v.Ext().DeletedOwner {
			continue
		}
		n++
		if n > maxListed {
			continue
		}
		an := Anomaly{
			Kind: "foreign-release", Key: inv.Key, Processes: []int{inv.Process},
			Start: inv.Time, End: pr.Complete.Time, Ops: []int{inv.Index, pr.Complete.Index}, Fenced: c.opts.Fenced,
		}
		victim := fmt.Sprintf("another holder (owner %s)", v.Ext().DeletedOwner)
		if i, ok := byOwner[v.Ext().DeletedOwner]; ok {
			hd := holds[i]
			an.Processes = append(an.Processes, hd.proc)
			an.Ops = append(an.Ops, hd.acquire)
			victim = fmt.Sprintf("process %d (owner %s), granted at %s", hd.proc, v.Ext().DeletedOwner, secs(hd.start))
			an.Start = min(an.Start, hd.start)
		}
		in := faultsDuring(a.getFaults(), an.Start, an.End)
		an.Nemesis = describeFaults(in)
		an.Explanation = sentences(fmt.Sprintf("process %d's release at %s deleted the lock key %s held by %s: a plain DEL does not check the owner.",
			inv.Process, secs(pr.Complete.Time), inv.Key, victim), faultSentence(in, inv.Process, ""))
		r.Anomalies = append(r.Anomalies, an)
	}
	return n
}

// releaseDetails returns, by the index of a release invoke, the detail its
// ok completion carried.
func releaseDetails(a *analysis) map[int]string {
	out := make(map[int]string)
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FRelease && pr.Type() == history.OK {
			if v := pr.Value(); v != nil && v.Ext().Detail != "" {
				out[pr.Invoke.Index] = v.Ext().Detail
			}
		}
	}
	return out
}

// combined reports whether hold e was granted on every half of a combined
// lock (history.CombinedLock), whose grants name halves, not nodes.
func (e hold) combined() bool {
	_, ok := history.CombinedLockOf(e.nodes)
	return ok
}
