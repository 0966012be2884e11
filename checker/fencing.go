package checker

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// NewFencing returns the fencing checker. Only acquire oks and critical
// sections that carry a non-zero token count; a history with no tokens at
// all is Valid with Stats{"fenced": false}. Per lock key it requires:
//
//   - token order: if acquire A returned before acquire B was invoked, A's
//     token is lower than B's ("token-order", Invalid);
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
// Every critical section the resource refused for a stale token is reported
// as a "stale-write-rejected" anomaly with Fenced set: fencing did its job,
// and the verdict is not affected. Both checks are one O(n log n) sweep.
func NewFencing() Checker { return fencing{} }

// fencing implements NewFencing.
type fencing struct{}

// Name returns "fencing".
func (fencing) Name() string { return "fencing" }

// Check checks h.
func (c fencing) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
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
}

// checkAnalysis implements analyzer.
func (c fencing) checkAnalysis(_ context.Context, a *analysis) Result {
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
		if v := pr.Value(); v == nil || v.Token == 0 {
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
	var refusals []Anomaly
	for _, pr := range a.pairs {
		inv := pr.Invoke
		v := pr.Value()
		if v == nil || (inv.F != history.FAcquire && inv.F != history.FCS) {
			continue
		}
		if inv.F == history.FCS && pr.Type() == history.Fail && v.Rejected != "" {
			rejected++
			if len(refusals) < maxListed {
				refusals = append(refusals, refusal(pr, v, a.getFaults()))
			}
		}
		if v.Token == 0 || pr.Type() != history.OK {
			continue
		}
		tokens++
		t := tokened{proc: inv.Process, token: v.Token, call: inv.Time, ret: pr.Complete.Time,
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
		}
		writes[inv.Key] = append(writes[inv.Key], t)
	}
	r.Stats["fenced"] = tokens > 0 || rejected > 0
	r.Stats["stale_writes_rejected"] = rejected
	if tokens == 0 && rejected == 0 {
		return r
	}
	var order, stale []Anomaly
	nOrder, nStale := 0, 0
	for _, k := range keys {
		sweep(grants[k], false, func(before, after tokened) {
			nOrder++
			if len(order) < maxListed {
				order = append(order, tokenOrder(k, before, after))
			}
		})
		reported := make(map[int]bool) // by the invoke index of the stale write
		sweep(writes[k], true, func(before, after tokened) {
			nStale++
			reported[after.inv] = true
			if len(stale) < maxListed {
				stale = append(stale, staleWrite(k, before, after, a.getFaults()))
			}
		})
		sameRead(writes[k], func(seen, after tokened) {
			if reported[after.inv] {
				return
			}
			nStale++
			reported[after.inv] = true
			if len(stale) < maxListed {
				stale = append(stale, staleConcurrent(k, seen, after, a.getFaults()))
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
	var idx []int
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
func staleConcurrent(key string, seen, after tokened, faults []history.Fault) Anomaly {
	an := Anomaly{
		Kind: "stale-write", Key: key, Processes: []int{after.proc, seen.proc},
		Start: min(seen.call, after.call), End: max(seen.ret, after.ret), Ops: []int{seen.inv, seen.done, after.inv, after.done},
		Nemesis: describeFaults(faultsDuring(faults, after.call, after.ret)),
	}
	why := fmt.Sprintf("both read %d from the resource for lock %s, so %d's token reached the resource before %d's write, and the resource accepted a stale token.",
		after.read, key, seen.proc, after.proc)
	if after.ret > seen.ret {
		an.Explanation = fmt.Sprintf("process %d wrote with token %d at %s after process %d's write with token %d was accepted at %s: %s",
			after.proc, after.token, secs(after.ret), seen.proc, seen.token, secs(seen.ret), why)
	} else {
		an.Explanation = fmt.Sprintf("process %d's write with token %d was accepted at %s, although process %d held token %d: %s",
			after.proc, after.token, secs(after.ret), seen.proc, seen.token, why)
	}
	return an
}

// tokenOrder explains a grant whose token is not above an earlier grant's.
func tokenOrder(key string, before, after tokened) Anomaly {
	return Anomaly{
		Kind: "token-order", Key: key, Processes: []int{before.proc, after.proc},
		Start: before.ret, End: after.ret, Ops: []int{before.done, after.inv, after.done},
		Explanation: fmt.Sprintf("process %d was granted lock %s with token %d at %s (it asked at %s), although process %d had already been granted token %d at %s: fencing tokens must increase in grant order.",
			after.proc, key, after.token, secs(after.ret), secs(after.call), before.proc, before.token, secs(before.ret)),
	}
}

// staleWrite explains an accepted write whose token is below an earlier
// accepted write's.
func staleWrite(key string, before, after tokened, faults []history.Fault) Anomaly {
	return Anomaly{
		Kind: "stale-write", Key: key, Processes: []int{after.proc, before.proc},
		Start: before.ret, End: after.ret, Ops: []int{before.done, after.inv, after.done},
		Nemesis: describeFaults(faultsDuring(faults, after.call, after.ret)),
		Explanation: fmt.Sprintf("process %d wrote with token %d at %s after process %d's write with token %d was accepted at %s: the resource for lock %s accepted a stale token.",
			after.proc, after.token, secs(after.ret), before.proc, before.token, secs(before.ret), key),
	}
}

// refusal reports a stale access the resource refused.
func refusal(pr pair, v *history.Value, faults []history.Fault) Anomaly {
	inv := pr.Invoke
	at := pr.Complete.Time
	seen := "a higher token"
	if v.MaxToken != 0 {
		seen = fmt.Sprintf("token %d", v.MaxToken)
	}
	token := ""
	if v.Token != 0 {
		token = fmt.Sprintf(" with token %d", v.Token)
	}
	return Anomaly{
		Kind: "stale-write-rejected", Key: inv.Key, Processes: []int{inv.Process},
		Start: inv.Time, End: at, Ops: []int{inv.Index, pr.Complete.Index}, Fenced: true,
		Nemesis: describeFaults(faultsDuring(faults, inv.Time, at)),
		Explanation: fmt.Sprintf("the resource refused process %d's %s%s at %s because it had already seen %s.",
			inv.Process, v.Rejected, token, secs(at), seen),
	}
}
