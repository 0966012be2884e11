package checker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestDecideRegisterFromState checks the direct decision from a chunk's
// start state: the register's value and the increments left in doubt
// before the chunk, which it may draw on from the start or never.
func TestDecideRegisterFromState(t *testing.T) {
	ms := time.Millisecond
	rmw := func(read, wrote int64, call, ret time.Duration) linInput {
		return &csOp{kind: rRMW, proc: int(read), read: read, wrote: wrote, call: call, ret: ret}
	}
	credit := func(call time.Duration) linInput {
		return &csOp{kind: rCredit, proc: 9, call: call, ret: forever}
	}
	for _, c := range []struct {
		name string
		init regState
		ops  []linInput
		want regFailure
	}{
		{"reads what the start holds", regState{v: 5}, []linInput{rmw(5, 6, ms, 2*ms)}, regOK},
		{"reads below the start", regState{v: 5}, []linInput{rmw(4, 5, ms, 2*ms)}, regBack},
		{"one pending increment brings it to its read", regState{v: 5, c: 1}, []linInput{rmw(6, 7, ms, 2*ms)}, regOK},
		{"two needed, one pending", regState{v: 5, c: 1}, []linInput{rmw(7, 8, ms, 2*ms)}, regShort},
		{"two needed, two pending", regState{v: 5, c: 2}, []linInput{rmw(7, 8, ms, 2*ms)}, regOK},
		{"one pending and one invoked in time", regState{v: 5, c: 1}, []linInput{credit(ms), rmw(7, 8, ms, 2*ms)}, regOK},
		{"one pending and one invoked too late", regState{v: 5, c: 1}, []linInput{credit(3 * ms), rmw(7, 8, ms, 2*ms)}, regLate},
		{"a pending increment is drawn once", regState{v: 5, c: 1}, []linInput{rmw(6, 7, ms, 2*ms), rmw(8, 9, 3*ms, 4*ms)}, regShort},
	} {
		d := decideRegisterFrom(c.ops, c.init)
		if !d.simple || d.fail != c.want {
			t.Errorf("%s: simple %v, fail %v; want %v", c.name, d.simple, d.fail, c.want)
		}
	}
}

// TestChunkOrderedMatchesPorcupine checks chunkOrdered against Porcupine
// on random chunks of the direct decision's shape, each from a random
// start state: a chunk it orders must be linearizable from that state, and
// one Porcupine linearizes it must order (the decision is exact on them).
func TestChunkOrderedMatchesPorcupine(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	ordered, not := 0, 0
	for n := range 3000 {
		init := regState{v: int64(rng.IntN(4)), c: int64(rng.IntN(3))}
		var ops []linInput
		v := init.v
		for i := range 2 + rng.IntN(5) {
			call := time.Duration(rng.IntN(20)) * time.Millisecond
			if rng.IntN(4) == 0 {
				ops = append(ops, &csOp{kind: rCredit, proc: 100 + i, inv: -1, done: -1, call: call, ret: forever})
				continue
			}
			read := v + int64(rng.IntN(3)) - 1
			ret := call + time.Duration(1+rng.IntN(10))*time.Millisecond
			ops = append(ops, &csOp{kind: rRMW, proc: i, inv: -1, done: -1, read: read, wrote: read + 1, call: call, ret: ret})
			v = read + 1
		}
		start := &csOp{kind: rStart, start: init, proc: 99, inv: -1, done: -1, call: -time.Millisecond, ret: -time.Millisecond}
		ch := chunk{key: "k", ops: ops, start: start}
		calls := []porcupine.Operation{start.operation()}
		for _, in := range ops {
			calls = append(calls, in.operation())
		}
		lin := porcupine.CheckOperations(registerModel(), calls)
		if got := chunkOrdered(ch); got != lin {
			t.Fatalf("chunk %d from %v: chunkOrdered %v, Porcupine %v: %+v", n, init, got, lin, ops)
		}
		if lin {
			ordered++
		} else {
			not++
		}
	}
	if ordered < 300 || not < 300 {
		t.Errorf("the chunks are nearly all of one kind: %d ordered, %d not", ordered, not)
	}
}

// TestDecideRegisterFromStateWitness checks the part of a chunk the direct
// decision names when it finds no order from a state with increments
// pending: the state before the critical section it placed last keeps the
// pending increments not drawn on before it, the witness holds the
// increments in doubt invoked in time, and Porcupine finds no order for it.
func TestDecideRegisterFromStateWitness(t *testing.T) {
	ms := time.Millisecond
	first := &csOp{kind: rRMW, proc: 1, read: 6, wrote: 7, call: ms, ret: 2 * ms}
	second := &csOp{kind: rRMW, proc: 2, read: 9, wrote: 10, call: 3 * ms, ret: 4 * ms}
	late := &csOp{kind: rCredit, proc: 3, call: 500 * time.Microsecond, ret: forever}
	for _, c := range []struct {
		name    string
		ops     []linInput
		credits int
		witness int
	}{
		{"no increment in doubt but the pending one", []linInput{first, second}, 0, 2},
		{"one more in doubt, still one short", []linInput{late, first, second}, 1, 3},
	} {
		d := decideRegisterFrom(c.ops, regState{v: 5, c: 1})
		if d.fail != regShort || d.cur != second || d.prev != first {
			t.Fatalf("%s: fail %v at %v after %v, want regShort at the second after the first", c.name, d.fail, d.cur, d.prev)
		}
		if d.start != (regState{v: 5, c: 1}) || d.credits != c.credits || len(d.witness) != c.witness {
			t.Errorf("%s: start %v, credits %d, witness of %d; want {5 1}, %d, %d", c.name, d.start, d.credits, len(d.witness), c.credits, c.witness)
		}
		if _, ok := d.witnessChunk("k"); !ok {
			t.Errorf("%s: Porcupine orders the witness", c.name)
		}
	}
}

// TestDecideRegisterFromStateWitnessAfterDraws checks the witness's start
// state when the critical sections before it drew on pending increments:
// it keeps only those not drawn on before the one placed last.
func TestDecideRegisterFromStateWitnessAfterDraws(t *testing.T) {
	ms := time.Millisecond
	a := &csOp{kind: rRMW, proc: 1, read: 6, wrote: 7, call: ms, ret: 2 * ms}     // draws one
	b := &csOp{kind: rRMW, proc: 2, read: 8, wrote: 9, call: 3 * ms, ret: 4 * ms} // draws one
	c := &csOp{kind: rRMW, proc: 3, read: 12, wrote: 13, call: 5 * ms, ret: 6 * ms}
	d := decideRegisterFrom([]linInput{a, b, c}, regState{v: 5, c: 3})
	if d.fail != regShort || d.prev != b || d.cur != c {
		t.Fatalf("fail %v at %v after %v, want regShort at c after b", d.fail, d.cur, d.prev)
	}
	// Before b the register held 7 with two of the three still pending.
	if d.start != (regState{v: 7, c: 2}) || d.credits != 1 {
		t.Errorf("start %v, credits %d; want {7 2}, 1", d.start, d.credits)
	}
	if _, ok := d.witnessChunk("k"); !ok {
		t.Error("Porcupine orders the witness")
	}
}
