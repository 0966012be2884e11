package checker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// plainOp is one op of the plain models below, written apart from the
// checker's own so that the differential test compares two independent
// readings of the same semantics.
type plainOp struct {
	f     string // acquire, release, crash, cs
	proc  int
	doubt bool // ended in info (or never completed)
	// For cs: known read r and write w; an in-doubt cs with an unknown read
	// adds one.
	known bool
	r, w  int64
}

// plainMutex is the owner-aware mutex, the state the holder + 1 or 0. An op
// in doubt took effect at some instant after its invocation or never: an
// acquire in doubt takes a free lock and leaves a held one alone, a release
// in doubt frees its process's lock and leaves any other state alone, a
// crash frees its process's lock.
var plainMutex = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() any { return 0 },
	Step: func(state, input, _ any) (bool, any) {
		s, in := state.(int), input.(keyed).op
		switch in.f {
		case history.FAcquire:
			if s == 0 {
				return true, in.proc + 1
			}
			return in.doubt, s
		case history.FRelease:
			if s == in.proc+1 {
				return true, 0
			}
			return in.doubt, s
		case history.FCrash:
			if s == in.proc+1 {
				return true, 0
			}
			return true, s
		}
		return false, s
	},
}

// plainRegister is the register every critical section read and wrote: an
// accepted one read r and wrote w; one in doubt with a known read wrote w if
// it found r, else nothing; one in doubt with an unknown read added one (an
// op placed after every other is "never").
var plainRegister = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() any { return int64(0) },
	Step: func(state, input, _ any) (bool, any) {
		s, in := state.(int64), input.(keyed).op
		switch {
		case !in.doubt:
			return s == in.r, in.w
		case !in.known:
			return true, s + 1
		case s == in.r:
			return true, in.w
		}
		return true, s
	},
}

// keyed is a plain op with its key.
type keyed struct {
	key string
	op  plainOp
}

func partitionByKey(ops []porcupine.Operation) [][]porcupine.Operation {
	by := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range ops {
		k := op.Input.(keyed).key
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], op)
	}
	out := make([][]porcupine.Operation, len(keys))
	for i, k := range keys {
		out[i] = by[k]
	}
	return out
}

// plainCheck checks h with plain Porcupine: every op with its real interval
// (open for ever when in doubt), a crash on every key its process used,
// nothing cut, dropped or rewritten.
func plainCheck(t testing.TB, h history.History, register bool, timeout time.Duration) porcupine.CheckResult {
	pairs, err := h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]map[string]bool{}
	roles := literalAbandons(pairs)
	var ops []porcupine.Operation
	for i, pr := range pairs {
		inv := pr.Invoke
		op := plainOp{f: inv.F, proc: inv.Process, doubt: pr.Type() == history.Info}
		ret := int64(pr.End())
		switch {
		case inv.F == history.FRelease && roles[i] == abandonOp:
			// A failed release leaves the lock to its lease: freed, if
			// still the releaser's, before its next try or acquire.
			op.doubt, ret = true, int64(forever)
			for _, q := range pairs[i+1:] {
				if q.Invoke.Process == inv.Process && q.Invoke.Key == inv.Key &&
					(q.Invoke.F == history.FAcquire || q.Invoke.F == history.FRelease) {
					ret = int64(q.Invoke.Time)
					break
				}
			}
		case inv.F == history.FRelease && roles[i] == abandonDropped, pr.Type() == history.Fail:
			continue
		}
		switch inv.F {
		case history.FAcquire, history.FRelease:
			if register {
				continue
			}
			if used[inv.Process] == nil {
				used[inv.Process] = map[string]bool{}
			}
			used[inv.Process][inv.Key] = true
		case history.FCrash:
			if register {
				continue
			}
			for k := range used[inv.Process] {
				ops = append(ops, porcupine.Operation{ClientId: inv.Process, Input: keyed{k, op}, Call: int64(inv.Time), Return: int64(forever)})
			}
			continue
		case history.FCS:
			if !register {
				continue
			}
			if v := pr.Value(); v != nil && v.Read != nil {
				op.known, op.r, op.w = true, *v.Read, *v.Read+1
				if v.Wrote != nil {
					op.w = *v.Wrote
				}
			}
		default:
			continue
		}
		ops = append(ops, porcupine.Operation{ClientId: inv.Process, Input: keyed{inv.Key, op}, Call: int64(inv.Time), Return: ret})
	}
	model := plainMutex
	if register {
		model = plainRegister
	}
	return porcupine.CheckOperationsTimeout(model, ops, timeout)
}

// differentialShapes are the harness shapes of the differential test: the
// controller's (info retires), a third-party harness's (processes go on
// after info), with kills, stalls past the lease and double grants, on one
// and several keys.
func differentialShapes(seed uint64) (string, harnessShape) {
	s := harnessShape{ops: 30 + int(seed%4)*20, workers: 2 + int(seed%4), keys: 1 + int(seed/4%3), tick: 100 * time.Microsecond}
	name := "controller"
	s.retire = seed%2 == 0
	s.late = seed%3 != 0
	if !s.retire {
		name = "third-party"
	}
	switch seed / 2 % 5 {
	case 0:
		s.info = 0.1
	case 1:
		s.info, s.kill = 0.15, 0.1
	case 2:
		s.info, s.stall = 0.05, 0.15
	case 3:
		s.info, s.bug = 0.1, 0.03
	case 4:
		s.info, s.stall, s.bug, s.kill = 0.2, 0.05, 0.01, 0.05
	}
	if seed%3 == 1 {
		// Releases refused for certain, retried, left to the lease.
		s.refuse = 0.3
	}
	return fmt.Sprintf("%s keys=%d workers=%d info=%.2f kill=%.2f stall=%.2f bug=%.2f", name, s.keys, s.workers, s.info, s.kill, s.stall, s.bug), s
}

// TestDirectMatchesPorcupine compares the mutex and resource checkers with
// plain Porcupine on 1000 random harness-shaped histories: polling
// acquires in flight, info ops with and without retirement, kills, holders
// stalled past the lease, double grants. Every verdict must agree.
func TestDirectMatchesPorcupine(t *testing.T) {
	ctx := context.Background()
	n := 1000
	if testing.Short() {
		n = 200
	}
	// LOCKCHECK_DIFF_N runs more (or fewer) histories, for a soak.
	if v, err := strconv.Atoi(os.Getenv("LOCKCHECK_DIFF_N")); err == nil && v > 0 {
		n = v
	}
	type tally struct{ valid, invalid, direct, searched, undecided int }
	got := map[string]*tally{"mutex": {}, "resource": {}}
	for seed := range uint64(n) {
		name, shape := differentialShapes(seed)
		h := genHarness(seed, shape)
		for _, tc := range []struct {
			c        Checker
			register bool
		}{{NewMutex(Options{Timeout: 20 * time.Second}), false}, {NewResource(Options{Timeout: 20 * time.Second}), true}} {
			r := tc.c.Check(ctx, h)
			tl := got[tc.c.Name()]
			plain := plainCheck(t, h, tc.register, 3*time.Second)
			want := map[porcupine.CheckResult]Validity{porcupine.Ok: Valid, porcupine.Illegal: Invalid, porcupine.Unknown: Unknown}[plain]
			if want == Unknown {
				// Doubtful ops open for ever make the plain search
				// blow up now and then; such a history is not compared.
				tl.undecided++
				continue
			}
			if r.Valid != want {
				var b strings.Builder
				for _, op := range h {
					b.WriteString(op.String() + "\n")
				}
				t.Fatalf("seed %d (%s) %s: got %v (%s), plain Porcupine says %v\n%s\n%s", seed, name, tc.c.Name(), r.Valid, r.Error, want, dump(r.Anomalies), b.String())
			}
			if want == Valid {
				tl.valid++
			} else {
				tl.invalid++
			}
			if d, ok := r.Stats["keys_decided_directly"].(int); ok {
				tl.direct += d
			}
			tl.searched += r.Stats["partitions"].(int)
		}
	}
	for name, tl := range got {
		t.Logf("%s: %d valid, %d invalid, %d not decided by plain Porcupine in 3 s; %d keys decided directly, %d Porcupine partitions",
			name, tl.valid, tl.invalid, tl.undecided, tl.direct, tl.searched)
		if tl.undecided > n/100 {
			t.Errorf("%s: plain Porcupine could not decide %d of %d histories: make them smaller", name, tl.undecided, n)
		}
		if tl.valid < n/10 || tl.invalid < n/10 {
			t.Errorf("%s: the histories are nearly all of one verdict: %+v", name, *tl)
		}
		if tl.direct < n/2 || tl.searched == 0 {
			t.Errorf("%s: both paths must be exercised: %+v", name, *tl)
		}
	}
}

// TestFencingValidOnHarness checks that the fencing checker finds nothing
// in harness-shaped histories of an exclusive lock: in-flight acquires, ops
// in doubt (retired or not), kills, doubtful writes that land late, on one
// and several keys; nothing but the in-doubt writes that a later read
// proves landed late with a stale token (the harness's resource takes any
// token), in histories the resource checker finds invalid too.
func TestFencingValidOnHarness(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(200) {
		_, shape := differentialShapes(seed)
		shape.stall, shape.bug = 0, 0
		shape.ops *= 5
		h := genHarness(seed, shape)
		r := NewFencing().Check(ctx, h)
		for _, a := range r.Anomalies {
			if !shape.late || !strings.Contains(a.Explanation, "left in doubt") || NewResource(Options{}).Check(ctx, h).Valid != Invalid {
				t.Fatalf("seed %d: valid = %v (%s)\n%s", seed, r.Valid, r.Error, dump(r.Anomalies))
			}
		}
		if r.Valid == Unknown {
			t.Fatalf("seed %d: unknown (%s)", seed, r.Error)
		}
	}
}
