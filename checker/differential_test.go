package checker

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// simulate runs a small, sometimes buggy, lock service and resource with
// indeterminate operations and retirements, and records the history. bug is
// the probability that the service grants a lock that is held.
func simulate(seed uint64, bug float64) history.History {
	rng := rand.New(rand.NewPCG(seed, 0))
	b := &builder{}
	const key = "k"
	holder := -1
	reg := int64(0)
	type proc struct {
		id, state int // state: 0 acquire next, 1 cs next, 2 release next
		next      int
	}
	nextID := 0
	var procs []*proc
	for range 3 {
		procs = append(procs, &proc{id: nextID, next: rng.IntN(3)})
		nextID++
	}
	tick := func(t int) float64 { return float64(t) * 0.01 }
	type landing struct {
		at  int
		val int64
	}
	var landings []landing // indeterminate writes that land later
	var frees []int        // lease expiries of crashed holders
	for t := 0; t < 80; t++ {
		for _, l := range landings {
			if l.at == t {
				reg = l.val
			}
		}
		for _, f := range frees {
			if f == t && holder >= 0 {
				holder = -1
			}
		}
		for i, p := range procs {
			if p.next != t {
				continue
			}
			d := 1 + rng.IntN(4)
			end := t + d
			info := rng.Float64() < 0.12
			retire := func() {
				b.crash(p.id, tick(end)+0.001)
				if holder == p.id {
					frees = append(frees, end+1+rng.IntN(6))
				}
				procs[i] = &proc{id: nextID, next: end + 2}
				nextID++
			}
			switch p.state {
			case 0:
				granted := holder < 0 || rng.Float64() < bug
				switch {
				case info:
					if granted && rng.IntN(2) == 0 {
						holder = p.id
					}
					b.acquireInfo(p.id, tick(t), tick(end))
					retire()
					continue
				case granted:
					holder = p.id
					b.acquire(p.id, tick(t), tick(end), 0, fmt.Sprint(p.id))
					p.state = 1
				default:
					b.acquireFail(p.id, tick(t), tick(end))
				}
			case 1:
				r := reg
				if info {
					var v *history.Value
					if rng.IntN(2) == 0 {
						v = &history.Value{Read: history.Int64(r)}
					}
					b.pair(p.id, history.FCS, key, tick(t), tick(end), history.Info, nil, v)
					if rng.IntN(2) == 0 {
						landings = append(landings, landing{end + rng.IntN(8), r + 1})
					}
					retire()
					continue
				}
				b.cs(p.id, tick(t), tick(end), r, 0)
				landings = append(landings, landing{end, r + 1})
				p.state = 2
			case 2:
				mine := holder == p.id
				switch {
				case info:
					if mine && rng.IntN(2) == 0 {
						holder = -1
					}
					b.pair(p.id, history.FRelease, key, tick(t), tick(end), history.Info, nil, nil)
					retire()
					continue
				case rng.Float64() < 0.1:
					b.pair(p.id, history.FRelease, key, tick(t), tick(end), history.Fail, nil, nil)
				default:
					if mine {
						holder = -1
					}
					b.release(p.id, tick(t), tick(end), mine, fmt.Sprint(p.id))
					p.state = 0
				}
			}
			p.next = end + 1 + rng.IntN(3)
		}
	}
	return b.build()
}

// literalMutex checks h with the mutex model exactly as first specified:
// crashes and indeterminate releases stay open to the end of time, nothing
// is cut. Only the drop of a retired process's last indeterminate acquire
// (and its crash) is kept.
func literalMutex(t *testing.T, h history.History) porcupine.CheckResult {
	pairs, err := h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	last := make(map[int]int)
	for i, pr := range pairs {
		if pr.Invoke.F == history.FAcquire || pr.Invoke.F == history.FRelease {
			last[pr.Invoke.Process] = i
		}
	}
	droppedProc := make(map[int]bool)
	abandons := literalAbandons(pairs)
	var ops []porcupine.Operation
	for i, pr := range pairs {
		in := &mutexOp{proc: pr.Invoke.Process}
		ret := int64(pr.End())
		switch pr.Invoke.F {
		case history.FAcquire:
			if pr.Type() == history.Fail {
				continue
			}
			if pr.Type() == history.Info && last[pr.Invoke.Process] == i {
				droppedProc[pr.Invoke.Process] = true
				continue
			}
			in.kind = mAcquire
		case history.FRelease:
			in.kind = mRelease
			switch abandons[i] {
			case abandonOp:
				in.abandon = true
				ret = math.MaxInt64
				for _, q := range pairs[i+1:] {
					if q.Invoke.Process == pr.Invoke.Process && q.Invoke.Key == pr.Invoke.Key &&
						(q.Invoke.F == history.FAcquire || q.Invoke.F == history.FRelease) {
						ret = int64(q.Invoke.Time)
						break
					}
				}
			case abandonDropped:
				continue
			}
		case history.FCrash:
			if droppedProc[pr.Invoke.Process] {
				continue
			}
			in.kind = mCrash
			ret = math.MaxInt64
		default:
			continue
		}
		ops = append(ops, porcupine.Operation{ClientId: in.proc, Input: in, Call: int64(pr.Invoke.Time), Return: ret})
	}
	return porcupine.CheckOperationsTimeout(mutexModel(), ops, 20*time.Second)
}

// The roles of releases in literalAbandons.
const (
	abandonNone    = iota // an ordinary release
	abandonOp             // the failed release that ends its hold
	abandonDropped        // a failed or released-false try after it
)

// literalAbandons gives each release pair its role, read from the spec in
// NewMutex's comment: within one hold (an acquire not failed, up to the
// process's next acquire on the key), the first failed release ends it
// unless a later try returned ok with the key still the releaser's, which
// then ends it alone; every other failed try, and an ok try saying the key
// was no longer the releaser's after a failure, changes nothing.
func literalAbandons(pairs []history.Pair) map[int]int {
	roles := make(map[int]int)
	for i, pr := range pairs {
		if pr.Invoke.F != history.FAcquire || pr.Type() == history.Fail {
			continue
		}
		var tries []int
		for j := i + 1; j < len(pairs); j++ {
			q := pairs[j]
			if q.Invoke.Process != pr.Invoke.Process || q.Invoke.Key != pr.Invoke.Key {
				continue
			}
			if q.Invoke.F == history.FAcquire {
				break
			}
			if q.Invoke.F == history.FRelease {
				tries = append(tries, j)
				if q.Type() != history.Fail {
					break
				}
			}
		}
		if len(tries) == 0 || pairs[tries[0]].Type() != history.Fail {
			continue
		}
		last := pairs[tries[len(tries)-1]]
		v := last.Value()
		confirmed := last.Type() == history.OK && (v == nil || v.Released == nil || *v.Released)
		for n, j := range tries {
			switch {
			case confirmed && n == len(tries)-1:
				roles[j] = abandonNone
			case n == 0 && !confirmed:
				roles[j] = abandonOp
			default:
				roles[j] = abandonDropped
			}
		}
	}
	for i, pr := range pairs {
		if _, ok := roles[i]; !ok && pr.Invoke.F == history.FRelease && pr.Type() == history.Fail {
			roles[i] = abandonDropped
		}
	}
	return roles
}

// literalRegister checks h with the register model as first specified: every
// indeterminate critical section stays open to the end of time; one with an
// unknown read adds one, one with a known read moves r to r+1 or does
// nothing. Nothing is cut and there are no pending-increment counts.
func literalRegister(t *testing.T, h history.History) porcupine.CheckResult {
	pairs, err := h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	type op struct {
		known, incr bool
		r, w        int64
	}
	model := porcupine.Model{
		Init: func() any { return int64(0) },
		Step: func(state, input, _ any) (bool, any) {
			s, in := state.(int64), input.(op)
			switch {
			case in.incr:
				return true, s + 1
			case in.known:
				return s == in.r, in.w
			case s == in.r:
				return true, in.w
			}
			return true, s
		},
	}
	var ops []porcupine.Operation
	for _, pr := range pairs {
		if pr.Invoke.F != history.FCS || pr.Type() == history.Fail {
			continue
		}
		v := pr.Value()
		in := op{}
		switch {
		case pr.Type() == history.OK:
			in = op{known: true, r: *v.Read, w: *v.Wrote}
		case v != nil && v.Read != nil:
			in = op{r: *v.Read, w: *v.Read + 1}
		default:
			in = op{incr: true}
		}
		ops = append(ops, porcupine.Operation{Input: in, Call: int64(pr.Invoke.Time), Return: int64(pr.End())})
	}
	return porcupine.CheckOperationsTimeout(model, ops, 20*time.Second)
}

// TestCutsAndRewritesPreserveVerdicts compares, on many small random
// histories, the chunked checkers (cut at every possible instant), the same
// checkers uncut, and the literal models without any of the rewrites.
func TestCutsAndRewritesPreserveVerdicts(t *testing.T) {
	ctx := context.Background()
	seeds := 400
	if testing.Short() {
		seeds = 100
	}
	agree := map[bool]int{}
	parts := map[string]int{}
	for seed := range uint64(seeds) {
		h := simulate(seed, []float64{0, 0.05, 0.3}[seed%3])
		for _, tc := range []struct {
			name     string
			cut, one Checker
			literal  func(*testing.T, history.History) porcupine.CheckResult
		}{
			{"mutex", &mutex{target: 1}, &mutex{target: math.MaxInt}, literalMutex},
			{"resource", &resource{target: 1}, &resource{target: math.MaxInt}, literalRegister},
		} {
			cut := tc.cut.Check(ctx, h)
			one := tc.one.Check(ctx, h)
			lit := tc.literal(t, h)
			want := Valid
			switch lit {
			case porcupine.Illegal:
				want = Invalid
			case porcupine.Unknown:
				t.Fatalf("seed %d %s: literal check timed out", seed, tc.name)
			}
			parts[tc.name] += cut.Stats["partitions"].(int)
			parts[tc.name+" searched"] += cut.Stats["partitions"].(int)
			if n, ok := cut.Stats["keys_decided_directly"].(int); ok {
				parts[tc.name] += n
			}
			if n, ok := cut.Stats["partitions_decided_directly"].(int); ok {
				parts[tc.name] += n
				parts[tc.name+" chunks ordered directly"] += n
			}
			if cut.Valid != want || one.Valid != want {
				var buf []byte
				for _, op := range h {
					buf = append(buf, op.String()...)
					buf = append(buf, '\n')
				}
				t.Fatalf("seed %d %s: cut %v (%s), uncut %v, literal %v\n%s", seed, tc.name, cut.Valid, cut.Error, one.Valid, lit, buf)
			}
			agree[want == Valid]++
		}
	}
	if agree[true] == 0 || agree[false] == 0 {
		t.Errorf("the random histories are all of one verdict: %v", agree)
	}
	t.Logf("verdicts: %d valid, %d invalid; partitions: %v", agree[true], agree[false], parts)
	for _, name := range []string{"mutex", "resource"} {
		// The mutex checker decides these keys directly (one count per
		// history); the resource checker cuts them.
		if want, n := map[string]int{"mutex": seeds, "resource": seeds + seeds/2}[name], parts[name]; n < want {
			t.Errorf("%s: only %d partitions over %d histories: the cuts are not exercised", name, n, seeds)
		}
	}
	// The resource checker orders some chunks directly and searches others.
	for _, part := range []string{"resource searched", "resource chunks ordered directly"} {
		if parts[part] < seeds/4 {
			t.Errorf("%s: %d over %d histories: that path is not exercised", part, parts[part], seeds)
		}
	}
}
