package checker

import (
	"cmp"
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// The direct register decision. When every accepted critical section on a
// key read r and wrote more than r, and the others ended in doubt with an
// unknown read (each a pending increment that may land at any later time,
// or never), the register only grows along any linearization, so the
// accepted critical sections take effect in the order of what they read:
// that order is forced. Between two of them the register must climb from
// what the first wrote to what the second read, one pending increment per
// step, each drawn from a doubtful critical section invoked by then. Taking
// every critical section at the earliest instant its interval, its
// predecessor and the increments it needs allow is then optimal (later
// instants only make more increments available and every later constraint
// tighter, and increments are interchangeable), so one sweep in read order
// decides the key in O(n log n). Any other shape on a key (a blind accepted
// write, a write not above its read, a doubtful critical section with a
// known read) is left to Porcupine.

// regFailure is why a key's critical sections cannot be ordered.
type regFailure int

const (
	regOK    regFailure = iota
	regBack             // cur read less than the register already held
	regShort            // not enough pending increments to reach cur's read
	regLate             // what cur read cannot have been written before cur returned
)

// regOrder is the outcome of the direct decision on one key.
type regOrder struct {
	// simple says the key has the shape the direct decision handles;
	// when false, nothing else is set.
	simple bool
	ok     int
	fail   regFailure
	// cur is the critical section that could not be placed, prev the one
	// before it in read order (nil when it is the first).
	cur, prev *csOp
	// held is the register's value before cur; at is the earliest instant
	// cur could take effect; credits counts the doubtful critical sections
	// invoked by cur's return and not drawn on before.
	held    int64
	at      time.Duration
	credits int
	// late, for regLate, is what made at too late: prev's own instant
	// (fromPrev) or the invocation of the last increment cur needs.
	fromPrev bool
	// witness are the ops of a small part of the key that no order fits,
	// with the state before them, for the visualization.
	witness []linInput
	start   regState
}

// decideRegister decides one key's register ops (in any order) directly.
func decideRegister(ops []linInput) regOrder { return decideRegisterFrom(ops, regState{}) }

// decideRegisterFrom decides register ops directly from the state init:
// the register holds init.v and init.c increments left in doubt before
// them are pending, to be drawn on from the start or never (a chunk cut
// from a key Porcupine searches starts so).
func decideRegisterFrom(ops []linInput, init regState) regOrder {
	rmws := make([]*csOp, 0, len(ops))
	var credits []*csOp
	// The pending increments come first in order of invocation (before
	// every op here): credit k is pending for k < pre, else credits[k-pre].
	pre := int(init.c)
	callOf := func(k int) time.Duration {
		if k < pre {
			return -1 << 63
		}
		return credits[k-pre].call
	}
	for _, in := range ops {
		op := in.(*csOp)
		switch {
		case op.kind == rRMW && op.wrote > op.read && op.ret >= op.call:
			rmws = append(rmws, op)
		case op.kind == rCredit:
			credits = append(credits, op)
		default:
			return regOrder{}
		}
	}
	sortStable(rmws, func(a, b *csOp) int {
		if c := cmp.Compare(a.read, b.read); c != 0 {
			return c
		}
		return cmp.Compare(a.call, b.call)
	})
	sortStable(credits, func(a, b *csOp) int { return cmp.Compare(a.call, b.call) })
	out := regOrder{simple: true}
	v := init.v
	at := time.Duration(-1 << 63)
	used := 0 // credits drawn so far: the earliest invoked
	var prev *csOp
	prevUsed, prevV := 0, init.v
	for _, cur := range rmws {
		p, fromPrev := at, true
		if cur.call > p {
			p, fromPrev = cur.call, false
		}
		fail := regOK
		need := cur.read - v
		switch {
		case need < 0:
			fail = regBack
		case need > 0:
			if int64(pre+len(credits)-used) < need {
				fail = regShort
				break
			}
			if t := callOf(used + int(need) - 1); t > p {
				p, fromPrev = t, false
			}
		}
		if fail == regOK && p > cur.ret {
			fail = regLate
		}
		if fail != regOK {
			n := pre + sort.Search(len(credits), func(i int) bool { return credits[i].call > cur.ret })
			out.fail, out.cur, out.prev, out.held, out.at, out.fromPrev = fail, cur, prev, v, p, fromPrev
			out.credits = max(0, n-used)
			// The witness: prev and cur from the state before prev, with
			// the increments not drawn on before prev (those pending from
			// the start in the state).
			out.start = regState{v: prevV, c: int64(max(0, pre-prevUsed))}
			if prev != nil {
				out.witness = append(out.witness, prev)
			}
			out.witness = append(out.witness, cur)
			for i := max(prevUsed, pre); i < n && len(out.witness) < maxChunk; i++ {
				out.witness = append(out.witness, credits[i-pre])
			}
			return out
		}
		prevUsed, prevV = used, v
		used += int(need)
		v, at, prev = cur.wrote, p, cur
		out.ok++
	}
	return out
}

// explain tells the story of a key the direct decision found no order for,
// in terms of the critical sections' real intervals.
func (d regOrder) explain(key string) Anomaly {
	cur := d.cur
	an := Anomaly{Kind: "nonlinearizable", Key: key, Processes: []int{cur.proc}, Start: cur.call, End: cur.ret, Ops: []int{cur.inv, cur.done}}
	what := fmt.Sprintf("Process %d's critical section on lock %s (%s) read %d and wrote %d",
		cur.proc, key, span(cur.call, cur.ret), cur.read, cur.wrote)
	before := "the register starts at 0"
	if p := d.prev; p != nil {
		an.Processes = []int{p.proc, cur.proc}
		an.Ops = []int{p.inv, p.done, cur.inv, cur.done}
		an.Start = min(p.call, cur.call)
		an.End = max(p.ret, cur.ret)
		before = fmt.Sprintf("process %d's critical section (%s) read %d and wrote %d", p.proc, span(p.call, p.ret), p.read, p.wrote)
	}
	var why string
	switch d.fail {
	case regBack:
		why = fmt.Sprintf("but %s, and every accepted write here is above its read, so the register never again held %d", before, cur.read)
	case regShort:
		why = fmt.Sprintf("but %s, and only %s left in doubt by %s could have added the missing %d",
			before, plural(d.credits, "critical section", "critical sections"), secs(cur.ret), cur.read-d.held)
	case regLate:
		if d.fromPrev && d.prev != nil {
			why = fmt.Sprintf("but %s, which could not have taken effect before %s, after %d's returned", before, secs(d.at), cur.proc)
		} else {
			why = fmt.Sprintf("but %s, and the last of the increments left in doubt that could have brought it to %d was invoked only at %s, after %d's returned",
				before, cur.read, secs(d.at), cur.proc)
		}
	}
	an.Explanation = what + ", " + why + ": " + registerNoOrder + "."
	return an
}

// witnessChunk returns the failing part of the key as a chunk, or false
// when it is not a failing part on its own.
func (d regOrder) witnessChunk(key string) (chunk, bool) {
	start := func(_ any, at time.Duration, proc int) linInput {
		return &csOp{kind: rStart, start: d.start, proc: proc, inv: -1, done: -1, call: at, ret: at}
	}
	ch := witnessChunk(key, d.witness, start)
	ops := make([]porcupine.Operation, 0, len(d.witness)+1)
	for _, in := range d.witness {
		ops = append(ops, in.operation())
	}
	ops = append(ops, ch.start.operation())
	return ch, !porcupine.CheckOperations(registerModel(), ops)
}
