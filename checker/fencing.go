package checker

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// NewFencing returns the fencing checker. Only acquire oks and critical
// sections that carry a non-zero token count (see below for where a token
// is read from); a history with no tokens at
// all is Valid with Stats{"fenced": false}; Stats["resource_fenced"] says
// whether any critical section carried a token to the resource (a run
// with --fencing). Per lock key it requires:
//
//   - token order: if acquire A returned before acquire B was invoked, A's
//     token is lower than B's ("token-order", Invalid);
//
//   - no stale write accepted: if accepted (ok) critical section A returned
//     before accepted critical section B was invoked, B's token is not lower
//     than A's ("stale-write", Invalid). Concurrent critical sections are
//     ordered by what they read, too: every access carries the token and
//     the resource refuses a token lower than any it has seen, so when two
//     concurrent accepted critical sections read the same value, each read
//     came before both writes, and the one with the lower token was
//     accepted after the resource had seen the higher one ("stale-write",
//     Invalid). This is how a stale holder paused in the middle of its
//     critical section shows.
//
//   - who read whose write: a critical section that read v came after the
//     write of v, so the resource had seen that writer's token (and every
//     token the writer's own read proves) before the reader's write; an
//     accepted write whose token is below is stale ("stale-write",
//     Invalid). This is how a stale holder that read the newer holder's
//     write, and then wrote with its older token, shows. Where several
//     critical sections (or one left in doubt) may have written v, only
//     what all of them prove counts.
//
//   - no in-doubt write landed stale: when two accepted critical sections
//     that did not overlap read one value, and only critical sections left
//     in doubt can have written it again in between, one of them landed
//     after the resource had accepted the first one's token; when each of
//     them carried a lower token, the resource accepted a stale token,
//     acknowledged or not ("stale-write", Invalid; lateStale). An in-doubt
//     write that no read proves landed is never flagged.
//
// A critical section's token is the one in its reply, or, when the reply
// carries none (a third-party worker need not echo it), the one the
// controller sent with the invocation. A reply whose token contradicts the
// one sent makes the result Unknown, naming the op: the worker's replies
// cannot be trusted either way.
//
// Every critical section the resource refused for a stale token is reported
// as a "stale-write-rejected" anomaly with Fenced set: fencing did its job,
// and the verdict is not affected. Every check is an O(n log n) sweep.
func NewFencing() Checker { return fencing{} }

// NewFencingFor returns the fencing checker for a run checked with opts:
// its stories print tokens as opts.Tokens says (a ZooKeeper zxid as "zxid
// 1:797").
func NewFencingFor(opts Options) Checker { return fencing{tokens: opts.Tokens} }

// fencing implements NewFencing.
type fencing struct {
	// tokens is the kind of the design's tokens, for the stories.
	tokens TokenKind
}

// Name returns "fencing".
func (fencing) Name() string { return "fencing" }

// Check checks h.
func (c fencing) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// opToken returns the fencing token of a pair: the completion's, or, when
// the reply carries none, the one the controller sent with the invocation
// (a third-party worker need not echo it). mismatch is set when both carry
// a token and they differ: a reply that contradicts what was sent.
func opToken(pr pair) (token int64, mismatch bool) {
	var sent, got int64
	if pr.Invoke.Value != nil {
		sent = pr.Invoke.Value.Token
	}
	if pr.Complete != nil && pr.Complete.Value != nil {
		got = pr.Complete.Value.Token
	}
	switch {
	case got == 0:
		return sent, false
	case sent != 0 && sent != got:
		return got, true
	}
	return got, false
}

// tokened is one op that carries a token.
type tokened struct {
	proc      int
	token     int64
	call, ret time.Duration
	inv, done int
	// read is what a critical section read; hasRead says it is known.
	read    int64
	hasRead bool
	// wrote is what it wrote; hasWrote says it wrote anything.
	wrote    int64
	hasWrote bool
	// returned is when the completion was recorded (an info one too).
	returned time.Duration
}

// notUsed is the fencing checker's Result.NotUsed when the resource took
// no tokens.
const notUsed = "not used: the resource took no tokens, so only the order of the grants' tokens was checked"

// checkAnalysis implements analyzer. A valid result of a run whose
// resource took no tokens says so in NotUsed.
func (c fencing) checkAnalysis(_ context.Context, a *analysis) Result {
	r := c.judge(a)
	if fenced, ok := r.Stats["resource_fenced"].(bool); ok && !fenced && r.Valid == Valid {
		r.NotUsed = notUsed
	}
	return r
}

// judge implements checkAnalysis.
func (c fencing) judge(a *analysis) Result {
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	r := newResult(c.Name())
	// Size the per-key slices first: a million-op history has half a
	// million of these.
	type sizes struct{ grants, writes int }
	count := make(map[string]*sizes)
	var keys []string
	for _, pr := range a.pairs {
		f := pr.Invoke.F
		if pr.Type() != history.OK || (f != history.FAcquire && f != history.FCS) {
			continue
		}
		if tok, _ := opToken(pr); tok == 0 {
			continue
		}
		n := count[pr.Invoke.Key]
		if n == nil {
			n = &sizes{}
			count[pr.Invoke.Key] = n
			keys = append(keys, pr.Invoke.Key)
		}
		if f == history.FAcquire {
			n.grants++
		} else {
			n.writes++
		}
	}
	grants := make(map[string][]tokened, len(keys))
	writes := make(map[string][]tokened, len(keys))
	for _, k := range keys {
		grants[k] = make([]tokened, 0, count[k].grants)
		writes[k] = make([]tokened, 0, count[k].writes)
	}
	tokens, rejected, invHistory := 0, 0, a.isInventory()
	accesses := 0 // critical sections that carried a token to the resource
	var refusals []Anomaly
	var mismatch []string
	nMismatch := 0
	doubtful := make(map[string][]tokened) // critical sections in doubt, by key
	for _, pr := range a.pairs {
		inv := pr.Invoke
		v := pr.Value()
		if v == nil || (inv.F != history.FAcquire && inv.F != history.FCS) {
			continue
		}
		tok, bad := opToken(pr)
		if bad {
			nMismatch++
			if len(mismatch) < 3 {
				mismatch = append(mismatch, fmt.Sprintf("op %d: process %d's %s reply carries token %d, but the controller sent token %d",
					pr.Complete.Index, inv.Process, inv.F, pr.Complete.Value.Token, inv.Value.Token))
			}
			continue
		}
		if inv.F == history.FCS && pr.Type() == history.Fail && v.Ext().Rejected != "" {
			rejected++
			if len(refusals) < maxListed {
				refusals = append(refusals, refusal(pr, v, tok, a.getFaults(), c.tokens))
			}
		}
		if inv.F == history.FCS && pr.Type() == history.Info && tok != 0 {
			d := tokened{proc: inv.Process, token: tok, call: inv.Time, ret: forever, inv: inv.Index, done: -1, returned: pr.Returned()}
			if pr.Complete != nil {
				d.done = pr.Complete.Index
			}
			if v.Read != nil && v.Wrote != nil && *v.Wrote != *v.Read {
				d.read, d.hasRead, d.wrote, d.hasWrote = *v.Read, true, *v.Wrote, true
			}
			doubtful[inv.Key] = append(doubtful[inv.Key], d)
		}
		if inv.F == history.FCS && tok != 0 {
			accesses++
		}
		if tok == 0 || pr.Type() != history.OK {
			continue
		}
		tokens++
		t := tokened{proc: inv.Process, token: tok, call: inv.Time, ret: pr.Complete.Time,
			inv: inv.Index, done: pr.Complete.Index}
		if inv.F == history.FAcquire {
			grants[inv.Key] = append(grants[inv.Key], t)
			continue
		}
		// In an inventory history a critical section that wrote nothing
		// (sold out) took part in no read-modify-write race; in a
		// register history a missing write means read+1.
		if v.Read != nil && (v.Wrote == nil && !invHistory || v.Wrote != nil && *v.Wrote != *v.Read) {
			t.read, t.hasRead = *v.Read, true
			t.wrote, t.hasWrote = *v.Read+1, true
			if v.Wrote != nil {
				t.wrote = *v.Wrote
			}
		}
		writes[inv.Key] = append(writes[inv.Key], t)
	}
	if nMismatch > 0 {
		// The worker's replies cannot be trusted: no verdict either way.
		r.Valid = Unknown
		r.Stats["token_mismatches"] = nMismatch
		r.Error = fmt.Sprintf("%s contradict the token the controller sent: %s",
			plural(nMismatch, "reply", "replies"), strings.Join(mismatch, "; "))
		return r
	}
	r.Stats["fenced"] = tokens > 0 || rejected > 0
	r.Stats["resource_fenced"] = accesses > 0
	r.Stats["stale_writes_rejected"] = rejected
	if tokens == 0 && rejected == 0 {
		return r
	}
	var order, stale []Anomaly
	nOrder, nStale := 0, 0
	retired := retirements(a)
	for _, k := range keys {
		sweep(grants[k], false, func(before, after tokened) {
			nOrder++
			if len(order) < maxListed {
				order = append(order, tokenOrder(k, before, after, a.getFaults(), c.tokens))
			}
		})
		reported := make(map[int]bool) // by the invoke index of the stale write
		sweep(writes[k], true, func(before, after tokened) {
			nStale++
			reported[after.inv] = true
			if len(stale) < maxListed {
				stale = append(stale, staleWrite(k, before, after, a.getFaults(), c.tokens))
			}
		})
		sameRead(writes[k], func(seen, after tokened) {
			if reported[after.inv] {
				return
			}
			nStale++
			reported[after.inv] = true
			if len(stale) < maxListed {
				stale = append(stale, staleConcurrent(k, seen, after, a.getFaults(), c.tokens))
			}
		})
		readFrom(writes[k], doubtful[k], func(seen, writer, after tokened) {
			if reported[after.inv] {
				return
			}
			nStale++
			reported[after.inv] = true
			if len(stale) < maxListed {
				stale = append(stale, staleReadFrom(k, seen, writer, after, a.getFaults(), c.tokens))
			}
		})
		lateStale(writes[k], doubtful[k], func(l lateFence) {
			nStale++
			if len(stale) < maxListed {
				stale = append(stale, l.anomaly(k, retired, a.getFaults(), c.tokens))
			}
		})
	}
	r.Stats["token_order_violations"] = nOrder
	r.Stats["stale_writes_accepted"] = nStale
	if nOrder+nStale > 0 {
		r.Valid = Invalid
	}
	r.Anomalies = append(append(append(r.Anomalies, order...), stale...), refusals...)
	return r
}

// sweep finds, for each op B, the op A with the highest token among those
// that returned before B was invoked, and calls bad(A, B) when B's token is
// too low: not above A's, or (equalOK) below A's.
func sweep(ops []tokened, equalOK bool, bad func(before, after tokened)) {
	if len(ops) < 2 {
		return
	}
	byCall := make([]int, len(ops))
	byRet := make([]int, len(ops))
	for i := range ops {
		byCall[i], byRet[i] = i, i
	}
	sort.SliceStable(byCall, func(i, j int) bool { return ops[byCall[i]].call < ops[byCall[j]].call })
	sort.SliceStable(byRet, func(i, j int) bool { return ops[byRet[i]].ret < ops[byRet[j]].ret })
	best, j := -1, 0
	for _, b := range byCall {
		for j < len(byRet) && ops[byRet[j]].ret < ops[b].call {
			if a := byRet[j]; best < 0 || ops[a].token > ops[best].token {
				best = a
			}
			j++
		}
		if best < 0 {
			continue
		}
		if ops[b].token < ops[best].token || (!equalOK && ops[b].token == ops[best].token) {
			bad(ops[best], ops[b])
		}
	}
}

// sameRead groups critical sections by the value they read and calls
// bad(A, B) for every B that ran concurrently with an A of its group holding
// a higher token (A is the highest such). When B returned before A was
// invoked, A's read of the same value is the register's fault, not a stale
// token's, and the resource checker reports it.
func sameRead(ops []tokened, bad func(seen, after tokened)) {
	// Indices of the ops with a known read, by read and then by token,
	// highest first.
	idx := make([]int, 0, len(ops))
	for i := range ops {
		if ops[i].hasRead {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(ops[a].read, ops[b].read); c != 0 {
			return c
		}
		return cmp.Compare(ops[b].token, ops[a].token)
	})
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && ops[idx[hi]].read == ops[idx[lo]].read {
			hi++
		}
		g := idx[lo:hi]
		for _, i := range g {
			for _, j := range g {
				if ops[j].token <= ops[i].token {
					break
				}
				if ops[j].call <= ops[i].ret {
					bad(ops[j], ops[i])
					break
				}
			}
		}
		lo = hi
	}
}

// staleConcurrent explains an accepted write whose token is below that of a
// critical section that read the same value, and so had shown its token to
// the resource before the write landed.
func staleConcurrent(key string, seen, after tokened, faults []history.Fault, k TokenKind) Anomaly {
	an := Anomaly{
		Kind: "stale-write", Key: key, Processes: []int{after.proc, seen.proc},
		Start: min(seen.call, after.call), End: max(seen.ret, after.ret), Ops: []int{seen.inv, seen.done, after.inv, after.done},
		Nemesis: describeFaults(faultsDuring(faults, after.call, after.ret)),
	}
	why := fmt.Sprintf("both read %d from the resource for lock %s, so %d's token reached the resource before %d's write, and the resource accepted a stale token.",
		after.read, key, seen.proc, after.proc)
	if after.ret > seen.ret {
		an.Explanation = fmt.Sprintf("process %d wrote with %s at %s after process %d's write with %s was accepted at %s: %s",
			after.proc, k.Token(after.token), secs(after.ret), seen.proc, k.Token(seen.token), secs(seen.ret), why)
	} else {
		an.Explanation = fmt.Sprintf("process %d's write with %s was accepted at %s, although process %d held %s: %s",
			after.proc, k.Token(after.token), secs(after.ret), seen.proc, k.Token(seen.token), why)
	}
	return an
}

// tokenOrder explains a grant whose token is not above an earlier grant's,
// and names a lock node that lost its token counter in between, if one
// did (tokenResetWhy).
func tokenOrder(key string, before, after tokened, faults []history.Fault, k TokenKind) Anomaly {
	an := Anomaly{
		Kind: "token-order", Key: key, Processes: []int{before.proc, after.proc},
		Start: before.ret, End: after.ret, Ops: []int{before.done, after.inv, after.done},
		Explanation: fmt.Sprintf("process %d was granted lock %s with %s at %s (it asked at %s), although process %d had already been granted %s at %s: fencing tokens must increase in grant order.",
			after.proc, key, k.Token(after.token), secs(after.ret), secs(after.call), before.proc, k.Token(before.token), secs(before.ret)),
	}
	if why, f, ok := tokenResetWhy(faults, before.ret, after.ret); ok {
		an.Explanation += " " + why
		an.Nemesis = describeFaults([]history.Fault{f})
	}
	return an
}

// staleWrite explains an accepted write whose token is below an earlier
// accepted write's.
func staleWrite(key string, before, after tokened, faults []history.Fault, k TokenKind) Anomaly {
	return Anomaly{
		Kind: "stale-write", Key: key, Processes: []int{after.proc, before.proc},
		Start: before.ret, End: after.ret, Ops: []int{before.done, after.inv, after.done},
		Nemesis: describeFaults(faultsDuring(faults, after.call, after.ret)),
		Explanation: fmt.Sprintf("process %d wrote with %s at %s after process %d's write with %s was accepted at %s: the resource for lock %s accepted a stale token.",
			after.proc, k.Token(after.token), secs(after.ret), before.proc, k.Token(before.token), secs(before.ret), key),
	}
}

// readFrom finds accepted critical sections whose token is below one the
// resource had certainly seen before their write, by who read whose write:
// a critical section that read v came after a write of v, so the resource
// had seen that writer's token, and every token its writer had seen, before
// the reader's write. When several critical sections may have written v
// (a lost update, or one left in doubt and invoked before the reader
// returned, which may have written anything), only the least that all of
// them prove counts. It runs when every accepted write is above its read (a
// register) or below it (a stock), so that the values order the writes;
// bad(seen, writer, after) names the critical section whose token was seen,
// the writer of what after read, and after.
func readFrom(ops, doubtful []tokened, bad func(seen, writer, after tokened)) {
	idx := make([]int, 0, len(ops))
	up, down := true, true
	for i := range ops {
		if ops[i].hasRead && ops[i].hasWrote {
			idx = append(idx, i)
			up = up && ops[i].wrote > ops[i].read
			down = down && ops[i].wrote < ops[i].read
		}
	}
	if len(idx) < 2 || !(up || down) {
		return
	}
	// By read, in the order the values were written.
	slices.SortStableFunc(idx, func(a, b int) int {
		c := cmp.Compare(ops[a].read, ops[b].read)
		if down {
			c = -c
		}
		return c
	})
	// The doubtful ones by invocation, with the running least token: those
	// invoked before a reader returned may have written what it read.
	slices.SortFunc(doubtful, func(a, b tokened) int { return cmp.Compare(a.call, b.call) })
	leastDoubt := make([]int64, len(doubtful))
	for i, d := range doubtful {
		leastDoubt[i] = d.token
		if i > 0 {
			leastDoubt[i] = min(leastDoubt[i], leastDoubt[i-1])
		}
	}
	// seen[i] is the highest token the resource had certainly seen when
	// ops[idx[i]]'s write was accepted (its own included), from the op
	// that carried it.
	type proof struct {
		token int64
		by    int // index into ops
	}
	seen := make([]proof, len(ops)) // by index into ops
	known := make([]bool, len(ops))
	// The writers by the value they wrote.
	byWrote := slices.Clone(idx)
	slices.SortFunc(byWrote, func(a, b int) int { return cmp.Compare(ops[a].wrote, ops[b].wrote) })
	writers := func(v int64) []int {
		lo := sort.Search(len(byWrote), func(j int) bool { return ops[byWrote[j]].wrote >= v })
		hi := lo
		for hi < len(byWrote) && ops[byWrote[hi]].wrote == v {
			hi++
		}
		return byWrote[lo:hi]
	}
	for _, i := range idx {
		op := ops[i]
		// What the resource had seen before op's write: at least what
		// every possible writer of op's read proves.
		var before proof
		ws := writers(op.read)
		if len(ws) > 0 {
			before = proof{token: -1}
			for _, w := range ws {
				p, ok := seen[w], known[w]
				if !ok {
					before = proof{} // not yet known: a cycle of values; prove nothing
					break
				}
				if before.token < 0 || p.token < before.token {
					before = p
				}
			}
			n := sort.Search(len(doubtful), func(j int) bool { return doubtful[j].call > op.ret })
			if n > 0 && leastDoubt[n-1] < before.token {
				before = proof{}
			}
			if before.token > op.token {
				w := ws[0]
				for _, x := range ws {
					if seen[x] == before {
						w = x
					}
				}
				bad(ops[before.by], ops[w], op)
			}
		}
		seen[i], known[i] = proof{token: op.token, by: i}, true
		if before.token > op.token {
			seen[i] = before
		}
	}
}

// staleReadFrom explains an accepted write whose token is below one the
// resource had seen before it, proved by what it read.
func staleReadFrom(key string, seen, writer, after tokened, faults []history.Fault, k TokenKind) Anomaly {
	an := Anomaly{
		Kind: "stale-write", Key: key, Processes: []int{after.proc, seen.proc},
		Start: min(seen.call, after.call), End: after.ret, Ops: []int{seen.inv, seen.done, after.inv, after.done},
		Nemesis: describeFaults(faultsDuring(faults, after.call, after.ret)),
	}
	how := fmt.Sprintf("process %d's critical section (%s) read %d, which process %d wrote with %s", after.proc, span(after.call, after.ret), after.read, writer.proc, k.Token(writer.token))
	if writer.inv != seen.inv {
		if !slices.Contains(an.Processes, writer.proc) {
			an.Processes = append(an.Processes, writer.proc)
		}
		an.Ops = append(an.Ops, writer.inv, writer.done)
		how += fmt.Sprintf(" after the resource had accepted process %d's write with %s (%s), as the values read and written show",
			seen.proc, k.Token(seen.token), span(seen.call, seen.ret))
	}
	an.Explanation = fmt.Sprintf("%s; yet its own write with %s was accepted at %s: the resource for lock %s had seen %s before and accepted a stale token.",
		capitalize(how), k.Token(after.token), secs(after.ret), key, k.Token(seen.token))
	return an
}

// refusal reports a stale access the resource refused; token is the
// access's token.
func refusal(pr pair, v *history.Value, tok int64, faults []history.Fault, k TokenKind) Anomaly {
	inv := pr.Invoke
	at := pr.Complete.Time
	seen := "a higher token"
	if v.Ext().MaxToken != 0 {
		seen = k.Token(v.Ext().MaxToken)
	}
	token := ""
	if tok != 0 {
		token = " with " + k.Token(tok)
	}
	return Anomaly{
		Kind: "stale-write-rejected", Key: inv.Key, Processes: []int{inv.Process},
		Start: inv.Time, End: at, Ops: []int{inv.Index, pr.Complete.Index}, Fenced: true,
		Nemesis: describeFaults(faultsDuring(faults, inv.Time, at)),
		Explanation: fmt.Sprintf("the resource refused process %d's %s%s at %s because it had already seen %s.",
			inv.Process, v.Ext().Rejected, token, secs(at), seen),
	}
}

// lateFence is a critical section left in doubt whose write, a later read
// proves, landed after the resource had accepted a higher token.
type lateFence struct {
	late tokened
	// others counts further critical sections left in doubt that could
	// have written the same value, all with tokens below seen's.
	others int
	// seen carries the highest token the resource had certainly accepted
	// before the late write; first and again are the first two accepted
	// critical sections that read the value it wrote: first's write was
	// overwritten, again's read proves the late write landed.
	seen, first, again tokened
}

// lateStale finds in-doubt writes that a later read proves landed with a
// stale token. When the first two accepted critical sections that read
// one value r (by invocation) did not overlap, r was written again after
// the first one's write: where no accepted critical section can have
// written it then (each accepted writer of r returned before the first
// began), a critical section left in doubt did, invoked before the second
// returned and before the first accepted writer of r returned (it read the
// value before r, which the resource held only until then). The resource
// had then accepted the first's token, and every token of an accepted
// write that returned before the first began; when every such in-doubt
// candidate's token is below the highest of those, bad(l) names the latest
// invoked one. As in readFrom, the values must order the writes (every
// accepted write above its read, or every one below).
func lateStale(ops, doubtful []tokened, bad func(l lateFence)) {
	var rmw []tokened
	up, down := true, true
	for _, op := range ops {
		if op.hasRead && op.hasWrote {
			rmw = append(rmw, op)
			up = up && op.wrote > op.read
			down = down && op.wrote < op.read
		}
	}
	if len(rmw) < 2 || !(up || down) || len(doubtful) == 0 {
		return
	}
	// By read, then by invocation.
	slices.SortStableFunc(rmw, func(a, b tokened) int {
		return cmp.Or(cmp.Compare(a.read, b.read), cmp.Compare(a.call, b.call))
	})
	for lo := 0; lo < len(rmw); {
		hi := lo + 1
		for hi < len(rmw) && rmw[hi].read == rmw[lo].read {
			hi++
		}
		if hi-lo > 1 {
			if l, ok := lateFor(rmw, rmw[lo], rmw[lo+1], doubtful); ok {
				bad(l)
			}
		}
		lo = hi
	}
}

// lateFor is lateStale for one value, read by a and then by b.
func lateFor(rmw []tokened, a, b tokened, doubtful []tokened) (lateFence, bool) {
	if a.ret >= b.call {
		return lateFence{}, false // a plain race: the resource checker names it
	}
	r := a.read
	readBy := forever
	seen := a
	for _, op := range rmw {
		if op.wrote == r {
			if op.ret > a.call {
				return lateFence{}, false
			}
			readBy = min(readBy, op.ret)
		}
		if op.ret < a.call && op.token > seen.token {
			seen = op
		}
	}
	l := lateFence{seen: seen, first: a, again: b}
	found := false
	for _, d := range doubtful {
		if d.call > b.ret || d.call > readBy || d.hasWrote && d.wrote != r {
			continue
		}
		if d.token >= seen.token {
			return lateFence{}, false // it may have landed with a fresh token
		}
		if !found {
			l.late, found = d, true
			continue
		}
		l.others++
		if d.call > l.late.call {
			l.late = d
		}
	}
	return l, found
}

// anomaly tells the story of a late stale write.
func (l lateFence) anomaly(key string, retired map[int]*history.Op, faults []history.Fault, k TokenKind) Anomaly {
	d, seen, a, b := l.late, l.seen, l.first, l.again
	an := Anomaly{Kind: "stale-write", Key: key, Processes: []int{d.proc, seen.proc}, Start: d.call, End: b.ret, Ops: []int{d.inv}}
	if d.done >= 0 {
		an.Ops = append(an.Ops, d.done)
	}
	an.Ops = append(an.Ops, seen.inv, seen.done)
	if a.inv != seen.inv {
		an.Processes = append(an.Processes, a.proc)
		an.Ops = append(an.Ops, a.inv, a.done)
	}
	if !slices.Contains(an.Processes, b.proc) {
		an.Processes = append(an.Processes, b.proc)
	}
	an.Ops = append(an.Ops, b.inv, b.done)
	an.Nemesis = describeFaults(faultsDuring(faults, d.call, b.ret))
	doubt := fmt.Sprintf("invoked at %s, never completed", secs(d.call))
	if d.done >= 0 {
		doubt = fmt.Sprintf("invoked at %s, info at %s, op %d", secs(d.call), secs(d.returned), d.done)
	}
	s := fmt.Sprintf("Process %d's write with %s, left in doubt (%s)", d.proc, k.Token(d.token), doubt)
	if c := retired[d.proc]; c != nil {
		s += fmt.Sprintf(", whose process was retired at %s,", secs(c.Time))
	}
	only := fmt.Sprintf("only process %d's write could have written %d then", d.proc, a.read)
	if l.others > 0 {
		only = fmt.Sprintf("only process %d's write or %s left in doubt, all with tokens below %s, could have written %d then",
			d.proc, plural(l.others, "other critical section", "other critical sections"), k.Token(seen.token), a.read)
	}
	an.Explanation = fmt.Sprintf("%s landed after the resource had accepted process %d's write with %s (%s): process %d's critical section (%s) read %d after process %d had written %d, and %s; the resource for lock %s accepted a stale token.",
		s, seen.proc, k.Token(seen.token), span(seen.call, seen.ret), b.proc, span(b.call, b.ret), a.read, a.proc, a.wrote, only, key)
	return an
}

// tokenResetWhy says how a lock node restarted with its data gone between
// two grants (a restart-lose that struck after from and by to) sent the
// fencing tokens back: a token counter kept on the node (INCR) started
// over with its keys. It returns the sentence and the fault, and false
// when no such fault struck.
func tokenResetWhy(faults []history.Fault, from, to time.Duration) (string, history.Fault, bool) {
	for _, f := range faults {
		if f.Hit == nil || f.Hit.Node == "" || f.Start <= from || f.Start > to {
			continue
		}
		s := "In between, " + f.Hit.Node + " was killed and restarted with its data gone at " + secs(f.Start)
		if len(f.Hit.Lost) > 0 {
			s += " (it lost " + joinAnd(f.Hit.Lost) + ")"
		}
		return s + ", so a token counter kept on it started over.", f, true
	}
	return "", history.Fault{}, false
}
