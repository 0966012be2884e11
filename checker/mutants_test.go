package checker

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// Tests that pin behaviour the mutation run (make mutation,
// docs/testing.md) found unpinned: each case fails on at least one mutant
// that survived the suite before. They are grouped by the file whose
// mutants they kill.

// sec is a whole number of seconds, for exact boundaries.
func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ---- compose.go

// nameless is a checker (not an analyzer) whose results carry no name.
type nameless struct{}

func (nameless) Name() string { return "nameless" }
func (nameless) Check(context.Context, history.History) Result {
	return Result{Valid: Valid}
}

func TestComposeNamesANamelessResult(t *testing.T) {
	r := Compose("all", nameless{}).Check(context.Background(), clean())
	if len(r.Results) != 1 || r.Results[0].Checker != "nameless" || r.Results[0].Anomalies == nil {
		t.Fatalf("results %+v", r.Results)
	}
}

// ---- analysis.go

func TestHoldsAcrossKeys(t *testing.T) {
	// Process 0 holds keys a and b at once, releases a, then b; process 1
	// is granted b after 0 released it: no double holder.
	b := &builder{}
	b.pair(0, history.FAcquire, "a", 0, 0.1, history.OK, nil, &history.Value{Owner: "a0"})
	b.pair(0, history.FAcquire, "b", 0.2, 0.3, history.OK, nil, &history.Value{Owner: "b0"})
	b.pair(0, history.FRelease, "a", 0.4, 0.5, history.OK, nil, &history.Value{Released: history.Bool(true)})
	b.pair(0, history.FRelease, "b", 0.6, 0.7, history.OK, nil, &history.Value{Released: history.Bool(true)})
	b.pair(1, history.FAcquire, "b", 0.8, 0.9, history.OK, nil, &history.Value{Owner: "b1"})
	h := b.build()
	a := newAnalysis(h)
	holds := a.getHolds()
	if len(holds) != 3 {
		t.Fatalf("holds %+v", holds)
	}
	want := []struct {
		key        string
		proc       int
		start, end time.Duration
		kind       endKind
		endOp      int
	}{
		{"a", 0, sec(0.1), sec(0.4), endRelease, 4},
		{"b", 0, sec(0.3), sec(0.6), endRelease, 6},
		{"b", 1, sec(0.9), sec(0.9), endHistory, -1},
	}
	for i, w := range want {
		hd := holds[i]
		if hd.key != w.key || hd.proc != w.proc || hd.start != w.start || hd.end != w.end || hd.endKind != w.kind || hd.endOp != w.endOp {
			t.Errorf("hold %d: %+v, want %+v", i, hd, w)
		}
	}
	if r := NewOverlap(Options{}).Check(context.Background(), h); r.Valid != Valid {
		t.Fatalf("overlap %v %v", r.Valid, r.Anomalies)
	}
}

func TestDoubleHolderNeverReleasedOps(t *testing.T) {
	// Process 0 is granted the lock and never lets go; 1 is granted it
	// too. The anomaly's ops are the two grants only: no end op.
	b := &builder{}
	b.acquire(0, 0, 0.1, 0, "o0").acquire(1, 0.2, 0.3, 0, "o1").release(1, 0.4, 0.5, true, "o1")
	r := NewOverlap(Options{}).Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 {
		t.Fatalf("%v %v", r.Valid, r.Anomalies)
	}
	if an := r.Anomalies[0]; !slices.Equal(an.Ops, []int{1, 3}) || !slices.Equal(an.Processes, []int{0, 1}) ||
		!strings.Contains(an.Explanation, "and still held it when the history ended at 0.50 s") {
		t.Fatalf("anomaly %+v", an)
	}
}

func TestSimultaneousGrantsKeepHistoryOrder(t *testing.T) {
	// Processes 2 and 1 are granted the lock at the same instant (2's
	// completion recorded first): the story keeps the history's order.
	h := history.History{
		{Index: 0, Time: 0, Process: 2, Type: history.Invoke, F: history.FAcquire, Key: "k"},
		{Index: 1, Time: 0, Process: 1, Type: history.Invoke, F: history.FAcquire, Key: "k"},
		{Index: 2, Time: sec(1), Process: 2, Type: history.OK, F: history.FAcquire, Key: "k"},
		{Index: 3, Time: sec(1), Process: 1, Type: history.OK, F: history.FAcquire, Key: "k"},
		{Index: 4, Time: sec(2), Process: 2, Type: history.Invoke, F: history.FRelease, Key: "k"},
		{Index: 5, Time: sec(2), Process: 1, Type: history.Invoke, F: history.FRelease, Key: "k"},
	}
	r := NewOverlap(Options{}).Check(context.Background(), h)
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !slices.Equal(r.Anomalies[0].Processes, []int{2, 1}) {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestFaultsSortedByStart(t *testing.T) {
	// A failover starts at its invoke (0.5 s), before a pause whose start
	// op comes first in the history (1 s).
	h := history.History{
		{Index: 0, Time: sec(0.5), Process: history.NemesisProcess, Type: history.Invoke, F: history.FFailover},
		{Index: 1, Time: sec(0.9), Process: history.NemesisProcess, Type: history.Invoke, F: history.FPause},
		{Index: 2, Time: sec(1), Process: history.NemesisProcess, Type: history.Info, F: history.FPause, Value: &history.Value{Extra: &history.Extra{Targets: []int{1}}}},
		{Index: 3, Time: sec(2), Process: history.NemesisProcess, Type: history.Info, F: history.FFailover, Value: &history.Value{Extra: &history.Extra{Nodes: []string{"redis0"}}}},
	}
	fs := newAnalysis(h).getFaults()
	if len(fs) != 2 || fs[0].F != history.FFailover || fs[1].F != history.FPause {
		t.Fatalf("faults %+v, want the failover first", fs)
	}
	// Equal starts keep the history's order.
	h = history.History{
		{Index: 0, Time: sec(1), Process: history.NemesisProcess, Type: history.Info, F: history.FPause, Value: &history.Value{Extra: &history.Extra{Targets: []int{1}}}},
		{Index: 1, Time: sec(1), Process: history.NemesisProcess, Type: history.Info, F: history.FPartition, Value: &history.Value{Extra: &history.Extra{Targets: []int{2}}}},
	}
	fs = newAnalysis(h).getFaults()
	if len(fs) != 2 || fs[0].F != history.FPause || fs[1].F != history.FPartition {
		t.Fatalf("faults %+v, want the pause first", fs)
	}
}

// ---- exercise.go

func TestExerciseRunHelpers(t *testing.T) {
	x := &exerciseRun{
		grants: []time.Duration{sec(1), sec(2), sec(3)},
		holds: []hold{
			{proc: 0, start: 0, end: sec(0.5)},
			{proc: 1, start: sec(1), end: sec(2)},
		},
	}
	if g, ok := x.lastGrantBefore(sec(2)); !ok || g != sec(2) {
		t.Errorf("lastGrantBefore(2 s) = %v %v, want the grant at 2 s", g, ok)
	}
	if _, ok := x.lastGrantBefore(sec(0.5)); ok {
		t.Errorf("lastGrantBefore(0.5 s) found a grant")
	}
	if n := x.grantsBefore(sec(2)); n != 1 {
		t.Errorf("grantsBefore(2 s) = %d, want 1", n)
	}
	if h := x.holdOf(1, sec(1)); h == nil || h.proc != 1 {
		t.Errorf("holdOf(1, 1 s) = %v, want the hold granted then", h)
	}
	if h := x.holdOf(1, sec(2)); h != nil {
		t.Errorf("holdOf(1, 2 s) = %v, want none: the hold ended then", h)
	}
	if h := x.holdOf(0, sec(1)); h != nil {
		t.Errorf("holdOf(0, 1 s) = %v, want none: another process's hold", h)
	}
	if h := x.heldAt(sec(1)); h == nil || h.proc != 1 {
		t.Errorf("heldAt(1 s) = %v, want 1's hold", h)
	}
	if h := x.heldAt(sec(2)); h != nil {
		t.Errorf("heldAt(2 s) = %v, want none", h)
	}
	if h := x.heldAt(sec(0.7)); h != nil {
		t.Errorf("heldAt(0.7 s) = %v, want none", h)
	}
	if s := x.leaseWords(); s != "the lease" {
		t.Errorf("leaseWords with no lease: %q", s)
	}
	x.lease = 1500 * time.Millisecond
	if s := x.leaseWords(); s != "the 1.5 s lease" {
		t.Errorf("leaseWords: %q", s)
	}
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{999 * time.Millisecond, "999 ms"}, {time.Second, "1 s"}, {1250 * time.Millisecond, "1.25 s"}} {
		if got := secsShort(tt.d); got != tt.want {
			t.Errorf("secsShort(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	// A fault with no known lease is not judged on its length, even one
	// of no length at all.
	if !outlasts(&fault{Fault: history.Fault{Start: sec(1), End: sec(1)}}) {
		t.Errorf("a fault with no lease does not outlast it")
	}
	if outlasts(&fault{Fault: history.Fault{Start: sec(1), End: sec(1)}, Lease: 1}) {
		t.Errorf("a zero-length fault outlasts a 1 ns lease")
	}
	if HasExerciseRule("earthquake") || !HasExerciseRule("pause") {
		t.Errorf("ExerciseRule")
	}
}

// nemAt adds a fault whose start op is invoked at inv and completes at t0,
// and whose end op completes at t1, in exact durations.
func nemAt(h history.History, f string, inv, t0, t1 time.Duration, v *history.Value) history.History {
	end, _ := history.EndOf(f)
	h = append(h,
		history.Op{Time: inv, Process: history.NemesisProcess, Type: history.Invoke, F: f},
		history.Op{Time: t0, Process: history.NemesisProcess, Type: history.Info, F: f, Value: v},
		history.Op{Time: t1, Process: history.NemesisProcess, Type: history.Invoke, F: end},
		history.Op{Time: t1, Process: history.NemesisProcess, Type: history.Info, F: end})
	return renumber(h)
}

// renumber sorts h by time (stably) and numbers it.
func renumber(h history.History) history.History {
	slices.SortStableFunc(h, func(a, b history.Op) int { return int(a.Time - b.Time) })
	for i := range h {
		h[i].Index = i
	}
	return h
}

func TestExerciseBoundaries(t *testing.T) {
	ctx := context.Background()
	// Process 3 is granted the lock at 1 s and holds it until 9 s.
	base := func() history.History {
		return (&builder{}).acquire(3, 0.9, 1, 0, "o3").release(3, 9, 9.001, true, "o3").build()
	}
	pause := &history.Value{Extra: &history.Extra{Targets: []int{3}}}
	t.Run("the last grant exactly one window before the fault", func(t *testing.T) {
		h := nemAt(base(), history.FPause, sec(4), sec(4), sec(7), pause)
		r := NewExercise(Options{Lease: time.Second}).Check(ctx, h)
		if r.Valid != Valid {
			t.Fatalf("%v, not exercised %q", r.Valid, r.NotExercised)
		}
		byKind, _ := r.Stats["by_nemesis"].(map[string]map[string]int)
		if byKind["pause"]["exercised"] != 1 || byKind["pause"]["faults"] != 1 || r.Stats["exercised"] != 1 {
			t.Fatalf("stats %v", r.Stats)
		}
	})
	t.Run("a fault invoked at time 0 that waited for its target", func(t *testing.T) {
		// Invoked at 0, it struck at 8 s: the service's last grant (1 s)
		// was long before it struck.
		h := nemAt(base(), history.FPause, 0, sec(8), sec(8.9), pause)
		r := NewExercise(Options{Lease: 100 * time.Millisecond}).Check(ctx, h)
		if r.Valid != Unknown || !strings.Contains(r.NotExercised, "struck with no grant in the 3 s before it") {
			t.Fatalf("%v, not exercised %q", r.Valid, r.NotExercised)
		}
	})
	t.Run("the lease of a later fault's hit", func(t *testing.T) {
		// The first pause strikes a process that holds nothing and
		// records no lease; the second records the lease.
		h := nemAt(base(), history.FPause, sec(2), sec(2), sec(2.1), &history.Value{Extra: &history.Extra{Targets: []int{5}}})
		h = nemAt(h, history.FPause, sec(3), sec(3), sec(3.1), &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: &history.Hit{Nemesis: "pause", Lease: time.Second}}})
		r := NewExercise(Options{}).Check(ctx, h)
		if r.Valid != Unknown || !strings.HasPrefix(r.NotExercised, "no pause lasted longer than the 1 s lease") {
			t.Fatalf("%v, not exercised %q", r.Valid, r.NotExercised)
		}
	})
	t.Run("a zero-length fault has no longest", func(t *testing.T) {
		h := nemAt(base(), history.FPause, sec(2), sec(2), sec(2), pause)
		r := NewExercise(Options{Lease: time.Second}).Check(ctx, h)
		if r.Valid != Unknown || !strings.Contains(r.NotExercised, "(1 pause fault: 1 lasted no longer than the 1 s lease)") {
			t.Fatalf("%v, not exercised %q", r.Valid, r.NotExercised)
		}
	})
	t.Run("a fault that failed to start", func(t *testing.T) {
		h := nemAt(base(), history.FPause, sec(2), sec(2), sec(2.1), pause)
		h = append(h, history.Op{Time: sec(5), Process: history.NemesisProcess, Type: history.Invoke, F: history.FKill},
			history.Op{Time: sec(5), Process: history.NemesisProcess, Type: history.Info, F: history.FKill, Error: "boom",
				Value: &history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}}}})
		h = renumber(h)
		r := NewExercise(Options{Lease: time.Second}).Check(ctx, h)
		if r.Stats["failed_to_start"] != 1 || r.Stats["faults"] != 1 {
			t.Fatalf("stats %v", r.Stats)
		}
		byKind, _ := r.Stats["by_nemesis"].(map[string]map[string]int)
		if byKind["kill"]["faults"] != 1 || byKind["kill"]["exercised"] != 0 {
			t.Fatalf("by nemesis %v", byKind)
		}
		if !strings.Contains(r.NotExercised, "(1 kill fault: 1 failed to start (boom))") {
			t.Fatalf("not exercised %q", r.NotExercised)
		}
	})
}

// ---- exercise_rules.go

func TestExerciseJudgesAtBoundaries(t *testing.T) {
	f := func(start, end, invoked float64, targets ...int) *fault {
		return &fault{Fault: history.Fault{Start: sec(start), End: sec(end), Targets: targets}, Invoked: sec(invoked)}
	}
	run := func(holds ...hold) *exerciseRun { return &exerciseRun{holds: holds} }
	rel := func(p int, from, to float64) hold {
		return hold{key: "k", proc: p, start: sec(from), end: sec(to), endKind: endRelease}
	}
	crash := func(p int, from, to float64) hold {
		return hold{key: "k", proc: p, start: sec(from), end: sec(to), endKind: endCrash}
	}
	const noLock = "killed a worker that held no lock and was at no failpoint"
	tests := []struct {
		name  string
		judge func(*exerciseRun, *fault) string
		x     *exerciseRun
		f     *fault
		want  string
	}{
		{"crash: granted the instant it struck", judgeCrash, run(rel(3, 2, 3)), f(2, 2.5, 1.9, 3), ""},
		{"crash: released the instant it struck", judgeCrash, run(rel(3, 1, 2)), f(2, 2.5, 1.9, 3), noLock},
		{"crash: holding when it struck", judgeCrash, run(rel(3, 1, 3)), f(2, 2.5, 1.9, 3), ""},
		{"crash: retired at the fault's invoke", judgeCrash, run(crash(3, 1, 1.9)), f(2, 2.5, 1.9, 3), ""},
		{"crash: retired after the invoke, before it struck", judgeCrash, run(crash(3, 1, 1.95)), f(2, 2.5, 1.9, 3), ""},
		{"crash: retired before the invoke", judgeCrash, run(crash(3, 1, 1.8)), f(2, 2.5, 1.9, 3), noLock},
		{"crash: another process held", judgeCrash, run(rel(4, 1, 3)), f(2, 2.5, 1.9, 3), noLock},
		{"node: the nemesis saw no holder", judgeNode, run(),
			&fault{Fault: history.Fault{Start: sec(2), End: sec(3)}, Hit: &history.Hit{Holders: 0}}, "struck while no lock was held"},
		{"node: the nemesis saw a holder", judgeNode, run(),
			&fault{Fault: history.Fault{Start: sec(2), End: sec(3)}, Hit: &history.Hit{Holders: 1}}, ""},
		{"clock: a hold granted the instant the jump ended", judgeClock, run(rel(3, 0, 0.5), rel(3, 3, 4)),
			&fault{Fault: history.Fault{Start: sec(2), End: sec(3)}}, ""},
		{"clock: a hold released the instant the jump began", judgeClock, run(rel(3, 1, 2)),
			&fault{Fault: history.Fault{Start: sec(2), End: sec(3)}}, "jumped while no lock was held"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.judge(tt.x, tt.f); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// ---- explain.go

func TestExplainHelpers(t *testing.T) {
	if got := span(sec(1), forever); got != "from 1.00 s on" {
		t.Errorf("span to forever: %q", got)
	}
	if got := procs([]int{3}); got != "process 3" {
		t.Errorf("procs: %q", got)
	}
	if got := procs([]int{3, 1}); got != "processes 3 and 1" {
		t.Errorf("procs: %q", got)
	}
	for in, want := range map[string]string{"": "", "a b": "A b", "z": "Z", "`x": "`x", "{x": "{x", "Ab": "Ab", "1 s": "1 s"} {
		if got := capitalize(in); got != want {
			t.Errorf("capitalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// ---- inventory.go

func TestInventoryEdges(t *testing.T) {
	ctx := context.Background()
	keyed := func(b *builder, key string) *builder {
		for i := range b.ops {
			if b.ops[i].Key == "k" {
				b.ops[i].Key = key
			}
		}
		return b
	}
	t.Run("a final read of a key nobody sold from", func(t *testing.T) {
		// Key a is seeded, sold from and read; key b is only read at the
		// end (no seed, no critical section): nothing is unknown.
		b := keyed((&builder{}).seed(0, 3).sale(0, 0.1, 0.2, 3, 0).soldOut(1, 0.3, 0.4).final(1, 2), "a")
		b.pair(history.NemesisProcess, history.FFinal, "b", 1.1, 1.101, history.OK, nil, &history.Value{Read: history.Int64(0)})
		r := NewInventory().Check(ctx, b.build())
		if r.Valid != Valid || r.Error != "" {
			t.Fatalf("%v %q", r.Valid, r.Error)
		}
		if r.Stats["sold_out_reads"] != int64(1) || r.Stats["final_stock"] != int64(2) || r.Stats["sales"] != int64(1) {
			t.Fatalf("stats %v", r.Stats)
		}
	})
	t.Run("a seeded key nobody sold from, not read at the end", func(t *testing.T) {
		b := (&builder{}).seed(0, 3)
		b.pair(history.NemesisProcess, history.FSeed, "b", 0.01, 0.011, history.OK, nil, &history.Value{Wrote: history.Int64(2)})
		b.sale(0, 0.1, 0.2, 3, 0).final(1, 2)
		r := NewInventory().Check(ctx, b.build())
		if r.Valid != Valid || r.Error != "" {
			t.Fatalf("%v %q", r.Valid, r.Error)
		}
		if _, ok := r.Stats["final_stock"]; ok {
			t.Fatalf("final stock of a key not read: %v", r.Stats)
		}
	})
	t.Run("a lost decrement only the final read shows", func(t *testing.T) {
		// One sale from 5, but the final stock is still 5: its write was
		// lost, and no two sales read the same stock.
		r := NewInventory().Check(ctx, (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).final(2, 5).build())
		if r.Valid != Invalid || len(r.Anomalies) != 1 || r.Anomalies[0].Kind != "lost-decrement" || r.Stats["lost_decrements"] != int64(1) {
			t.Fatalf("%v %v %v", r.Valid, r.Stats, r.Anomalies)
		}
		if an := r.Anomalies[0]; an.Start != sec(1) || an.End != sec(2.001) {
			t.Fatalf("anomaly from %v to %v, want from the first critical section to the final read", an.Start, an.End)
		}
	})
	t.Run("the stock fell by more than the sales", func(t *testing.T) {
		r := NewInventory().Check(ctx, (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).final(2, 2).build())
		if r.Valid != Invalid || len(r.Anomalies) != 1 || r.Anomalies[0].Kind != "stock-mismatch" {
			t.Fatalf("%v %v", r.Valid, r.Anomalies)
		}
		if an := r.Anomalies[0]; an.Start != sec(1) || !slices.Equal(an.Ops, []int{1, 5}) {
			t.Fatalf("anomaly %+v", an)
		}
	})
	t.Run("every item sold, none oversold", func(t *testing.T) {
		r := NewInventory().Check(ctx, (&builder{}).seed(0, 2).sale(0, 1, 1.1, 2, 0).sale(1, 1.2, 1.3, 1, 0).final(2, 0).build())
		if r.Valid != Valid || r.Stats["oversold"] != int64(0) {
			t.Fatalf("%v %v %v", r.Valid, r.Stats, r.Anomalies)
		}
	})
	t.Run("oversold with no final read", func(t *testing.T) {
		r := NewInventory().Check(ctx, (&builder{}).seed(0, 1).sale(0, 1, 1.1, 1, 0).sale(1, 1.2, 1.3, 1, 0).build())
		if r.Valid != Invalid || len(r.Anomalies) == 0 || r.Anomalies[0].Kind != "oversold" {
			t.Fatalf("%v %v", r.Valid, r.Anomalies)
		}
		if an := r.Anomalies[0]; !slices.Equal(an.Ops, []int{1, 2, 3, 4, 5}) {
			t.Fatalf("ops %v, want the seed and the two sales", an.Ops)
		}
	})
}

func TestDescribeFault(t *testing.T) {
	for _, tt := range []struct {
		f    history.Fault
		want string
	}{
		{history.Fault{F: history.FKill, Start: sec(1), End: sec(2), Nodes: []string{"zk1", "zk2", "zk3"}},
			"kill of nodes zk1, zk2 and zk3 from 1.00 s to 2.00 s"},
		{history.Fault{F: history.FClockJump, Start: sec(1), End: sec(2), Detail: "lock2 +30s"},
			"clock-jump (lock2 +30s) from 1.00 s to 2.00 s"},
		{history.Fault{F: history.FSkew, Start: sec(1), End: sec(2), Targets: []int{1, 2}},
			"client clock skew of processes 1 and 2 from 1.00 s to 2.00 s"},
		{history.Fault{F: history.FClock, Start: sec(1), End: sec(2), Targets: []int{4}, Nodes: []string{"lock0"}},
			"clock jump of process 4 and node lock0 from 1.00 s to 2.00 s"},
		{history.Fault{F: history.FFailover, Start: sec(1), End: sec(2), Nodes: []string{"redis0"}},
			"failover of master redis0 from 1.00 s to 2.00 s"},
	} {
		if got := describeFault(tt.f); got != tt.want {
			t.Errorf("describeFault\n got %q\nwant %q", got, tt.want)
		}
	}
	fs := []history.Fault{{F: history.FPause, Start: sec(1), End: sec(2)}}
	for _, tt := range []struct {
		from, to float64
		n        int
	}{{0, 1, 1}, {2, 3, 1}, {0, 0.9, 0}, {2.1, 3, 0}} {
		if got := len(faultsDuring(fs, sec(tt.from), sec(tt.to))); got != tt.n {
			t.Errorf("faultsDuring(%v, %v) = %d faults, want %d", tt.from, tt.to, got, tt.n)
		}
	}
}

func TestFaultSentencePartition(t *testing.T) {
	part := []history.Fault{{F: history.FPartition, Start: sec(1), End: sec(3), Targets: []int{3}}}
	for _, tt := range []struct {
		lost, want string
	}{
		{"", "A partition of process 3 from 1.00 s to 3.00 s was in force."},
		{"its session expired", "A partition of process 3 from 1.00 s to 3.00 s was in force: its session expired while it was cut off."},
	} {
		if got := faultSentence(part, 3, tt.lost); got != tt.want {
			t.Errorf("faultSentence(lost %q)\n got %q\nwant %q", tt.lost, got, tt.want)
		}
	}
	if got := faultSentence(part, 4, "x"); got != "A partition of process 3 from 1.00 s to 3.00 s was in force." {
		t.Errorf("partition of another process: %q", got)
	}
}

func TestInventoryFaultWindow(t *testing.T) {
	ctx := context.Background()
	kill := func(b *builder, t0, t1 float64) *builder {
		return b.nem(history.FKill, t0, t1, &history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}}})
	}
	// Two sales from the same read at 1 s, a fault at 3 s, the final read
	// at 5 s: the fault came after the story and is not named.
	b := (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).sale(1, 1.05, 1.15, 5, 0).final(5, 4)
	r := NewInventory().Check(ctx, kill(b, 3, 3.5).build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || len(r.Anomalies[0].Nemesis) != 0 {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
	// No same-read story (the final read alone shows the lost write): any
	// fault during the run is named.
	b = (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).final(5, 5)
	r = NewInventory().Check(ctx, kill(b, 3, 3.5).build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || len(r.Anomalies[0].Nemesis) != 1 {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

// ---- fencing.go

// write adds an accepted fenced write with no read, so that only the order
// of writes in time (the sweep) judges it.
func (b *builder) write(p int, t0, t1 float64, token int64) *builder {
	return b.pair(p, history.FCS, "k", t0, t1, history.OK, &history.Value{Token: token}, &history.Value{Token: token})
}

func TestFencingSweepBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		b     *builder
		stale int
		procs []int // of the first stale-write anomaly
	}{
		{"two writes, the second stale", (&builder{}).write(0, 1, 2, 5).write(1, 3, 4, 4), 1, []int{1, 0}},
		{"two writes, touching: concurrent", (&builder{}).write(0, 1, 2, 5).write(1, 2, 4, 4), 0, nil},
		{"the first of two equal highest tokens is named", (&builder{}).write(0, 1, 2, 5).write(2, 1.5, 2.5, 5).write(1, 3, 4, 4), 1, []int{1, 0}},
		{"concurrent writes that read the same value, touching", (&builder{}).cs(1, 1, 2, 10, 4).cs(0, 2, 3, 10, 5), 1, []int{1, 0}},
		{"concurrent writes that read the same value, returned together", (&builder{}).cs(1, 1, 3, 10, 4).cs(0, 2, 3, 10, 5), 1, []int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewFencing().Check(context.Background(), tt.b.build())
			if r.Stats["stale_writes_accepted"] != tt.stale {
				t.Fatalf("stats %v, anomalies %v", r.Stats, r.Anomalies)
			}
			if tt.procs != nil && !slices.Equal(r.Anomalies[0].Processes, tt.procs) {
				t.Fatalf("anomaly %+v, want processes %v", r.Anomalies[0], tt.procs)
			}
		})
	}
	// Grants: a token equal to one granted before is out of order; one
	// granted the instant the other returned is concurrent with it.
	grants := func(t1 float64) history.History {
		return (&builder{}).acquire(0, 0, 1, 5, "o0").release(0, 1.5, 1.6, true, "o0").acquire(1, t1, 3, 5, "o1").build()
	}
	if r := NewFencing().Check(context.Background(), grants(2)); r.Stats["token_order_violations"] != 1 {
		t.Fatalf("equal token granted later: %v", r.Stats)
	}
	if r := NewFencing().Check(context.Background(), grants(1)); r.Stats["token_order_violations"] != 0 || r.Stats["fenced"] != true {
		t.Fatalf("equal token granted concurrently: %v", r.Stats)
	}
}

func TestFencingMismatchListsThree(t *testing.T) {
	b := &builder{}
	for i := range 4 {
		t0 := float64(i)
		b.pair(i, history.FCS, "k", t0, t0+0.5, history.OK, &history.Value{Token: 1}, &history.Value{Token: 2})
	}
	r := NewFencing().Check(context.Background(), b.build())
	if r.Valid != Unknown || r.Stats["token_mismatches"] != 4 || strings.Count(r.Error, "contradict") != 1 || strings.Count(r.Error, "op ") != 3 {
		t.Fatalf("%v %v %q", r.Valid, r.Stats, r.Error)
	}
}

func TestInventoryStories(t *testing.T) {
	ctx := context.Background()
	// A stale write set the stock back: 5 and 4 were each sold twice, one
	// run of sales told as one story.
	b := (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).sale(0, 1.2, 1.3, 4, 0).
		sale(1, 1.05, 1.4, 5, 0).sale(1, 1.5, 1.6, 4, 0).final(2, 3)
	r := NewInventory().Check(ctx, b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "each stock from 5 down to 4 was sold from more than once (2 lost decrements)") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
	// Four separate runs (10, 8, 6 and 4 each sold twice): three stories
	// and a count, the highest stock first.
	b = (&builder{}).seed(0, 10)
	for i, s := range []int64{10, 8, 6, 4} {
		t0 := 1 + float64(i)
		b.sale(0, t0, t0+0.1, s, 0).sale(1, t0+0.05, t0+0.15, s, 0)
	}
	r = NewInventory().Check(ctx, b.final(9, 6).build())
	if r.Valid != Invalid || len(r.Anomalies) == 0 {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
	ex := r.Anomalies[0].Explanation
	if !strings.Contains(ex, "1 run of sales more like it.") || strings.Index(ex, "both read 10") > strings.Index(ex, "both read 8") ||
		strings.Contains(ex, "both read 4 ") {
		t.Fatalf("explanation %q", ex)
	}
	// No story: the fault sentence names no stale process.
	b = (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).final(5, 5)
	b.fault(history.FPause, 2, 3, 1)
	r = NewInventory().Check(ctx, b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || strings.Contains(r.Anomalies[0].Explanation, "lease ran out") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestFencingReadFrom(t *testing.T) {
	// Process 0 (token 5) reads 10 and writes 11 from 1 s to 3 s; process
	// 1 (token 4) overlaps it, reads 11 (0's write) and writes 12 with its
	// older token: only who read whose write shows it.
	base := func() *builder { return (&builder{}).cs(0, 1, 3, 10, 5).cs(1, 2, 4, 11, 4) }
	doubt := func(b *builder, t0 float64, token int64) *builder {
		return b.pair(2, history.FCS, "k", t0, t0+10, history.Info, &history.Value{Token: token}, nil)
	}
	tests := []struct {
		name  string
		b     *builder
		stale int
	}{
		{"two critical sections", base(), 1},
		{"a doubtful write invoked as the reader returned, lower token", doubt(base(), 4, 3), 0},
		{"a doubtful write invoked after the reader returned", doubt(base(), 4.5, 3), 1},
		{"a doubtful write with the same token", doubt(base(), 1.5, 5), 1},
		{"a doubtful write with a lower token", doubt(base(), 1.5, 4), 0},
		{"replies that name only what was read", (&builder{}).
			pair(0, history.FCS, "k", 1, 3, history.OK, &history.Value{Token: 5}, &history.Value{Read: history.Int64(10)}).
			pair(1, history.FCS, "k", 2, 4, history.OK, &history.Value{Token: 4}, &history.Value{Read: history.Int64(11)}), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewFencing().Check(context.Background(), tt.b.build())
			if r.Stats["stale_writes_accepted"] != tt.stale {
				t.Fatalf("stats %v, anomalies %v", r.Stats, r.Anomalies)
			}
			if tt.stale > 0 && !strings.Contains(r.Anomalies[0].Explanation, "read 11, which process 0 wrote with token 5") {
				t.Fatalf("anomaly %+v", r.Anomalies[0])
			}
		})
	}
}

func TestFencingNoTokensStats(t *testing.T) {
	r := NewFencing().Check(context.Background(), (&builder{}).cycles(3, 0, 0, 0, false).build())
	if r.Valid != Valid || len(r.Stats) != 3 || r.Stats["fenced"] != false || r.Stats["resource_fenced"] != false {
		t.Fatalf("%v %v", r.Valid, r.Stats)
	}
}

func TestInventorySaleFromZero(t *testing.T) {
	// A sale that read a stock of 0 and wrote -1: a sale needs an item.
	b := (&builder{}).seed(0, 1).sale(0, 1, 1.1, 1, 0).sale(1, 2, 2.1, 0, 0).final(3, -1)
	r := NewInventory().Check(context.Background(), b.build())
	var odd []Anomaly
	for _, an := range r.Anomalies {
		if an.Kind == "stock-mismatch" && slices.Equal(an.Processes, []int{1}) {
			odd = append(odd, an)
		}
	}
	if r.Valid != Invalid || len(odd) != 1 || !strings.Contains(odd[0].Explanation, "read a stock of 0 and left -1") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
	// Oversold by one, no decrement lost.
	if an := r.Anomalies[0]; an.Kind != "oversold" || strings.Contains(an.Explanation, "lost") {
		t.Fatalf("anomaly %+v", an)
	}
}

func TestFencingSweepOrder(t *testing.T) {
	ctx := context.Background()
	// The highest token (9) returned first, a lower one (3) after it: a
	// write with 5 is stale against the 9, not excused by the 3.
	r := NewFencing().Check(ctx, (&builder{}).write(0, 0, 1, 9).write(1, 1.5, 2, 3).write(2, 3, 4, 5).build())
	if r.Stats["stale_writes_accepted"] != 2 {
		t.Fatalf("stats %v", r.Stats)
	}
	// Two stale writes invoked at the same instant are told in history
	// order; of two earlier writes with the same token returned at the
	// same instant, the first is named.
	r = NewFencing().Check(ctx, (&builder{}).write(0, 0, 1, 9).write(3, 0.5, 1, 9).write(1, 2, 3, 5).write(2, 2, 3.5, 4).build())
	if len(r.Anomalies) != 2 || !slices.Equal(r.Anomalies[0].Processes, []int{1, 0}) || !slices.Equal(r.Anomalies[1].Processes, []int{2, 0}) {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
}

func TestInventoryOfARegisterHistory(t *testing.T) {
	r := NewInventory().Check(context.Background(), noGrants())
	if _, ok := r.Stats["final_stock"]; ok || r.Valid != Valid {
		t.Fatalf("%v %v", r.Valid, r.Stats)
	}
}

func TestStaleConcurrentWording(t *testing.T) {
	seen := tokened{proc: 0, token: 5, call: sec(2), ret: sec(3), read: 10}
	after := tokened{proc: 1, token: 4, call: sec(1), ret: sec(3), read: 10}
	an := staleConcurrent("k", seen, after, nil, NumberTokens)
	if !strings.HasPrefix(an.Explanation, "process 1's write with token 4 was accepted at 3.00 s, although process 0 held token 5") {
		t.Fatalf("%q", an.Explanation)
	}
	after.ret = sec(3.5)
	if an := staleConcurrent("k", seen, after, nil, NumberTokens); !strings.HasPrefix(an.Explanation, "process 1 wrote with token 4 at 3.50 s after process 0's write") {
		t.Fatalf("%q", an.Explanation)
	}
}

func TestFencingReadFromStock(t *testing.T) {
	// A fenced inventory: process 0 (token 5) sells from 10 to 9; process
	// 1 (token 4), concurrent, reads 9 (0's write) and sells to 8 with
	// its older token. Stock values go down: the writes are ordered by
	// the values read from the highest.
	b := (&builder{}).seed(0, 10).sale(0, 1, 3, 10, 5).sale(1, 2, 4, 9, 4)
	r := NewFencing().Check(context.Background(), b.build())
	if r.Stats["stale_writes_accepted"] != 1 || !strings.Contains(r.Anomalies[0].Explanation, "read 9, which process 0 wrote with token 5") {
		t.Fatalf("%v %v", r.Stats, r.Anomalies)
	}
}

func TestHeldAtZeroLengthHold(t *testing.T) {
	x := &exerciseRun{holds: []hold{{proc: 0, start: sec(1), end: sec(1)}, {proc: 1, start: sec(1), end: sec(2)}}}
	if h := x.heldAt(sec(1)); h == nil || h.proc != 1 {
		t.Fatalf("heldAt(1 s) = %v, want 1's hold", h)
	}
}

func TestFencingReadFromTwoWriters(t *testing.T) {
	// A lost update: processes 0 (token 3) and 1 (token 6) both read 10
	// and wrote 11; process 2 (token 5) read 11 while 1 was still running.
	// Either may have written the 11 it read: only token 3 is proved, and
	// 2's write is not stale (0's is: it lost to 1).
	b := (&builder{}).cs(0, 1, 2, 10, 3).cs(1, 1, 5, 10, 6).cs(2, 3, 6, 11, 5)
	r := NewFencing().Check(context.Background(), b.build())
	if r.Stats["stale_writes_accepted"] != 1 || !slices.Equal(r.Anomalies[0].Processes, []int{0, 1}) {
		t.Fatalf("%v %+v", r.Stats, r.Anomalies)
	}
}

func TestInventorySameReadOrder(t *testing.T) {
	// Processes 1 and 0 invoke their sales at the same instant (1 first in
	// the history) and both read 5: the story keeps the history's order.
	b := (&builder{}).seed(0, 5).sale(1, 1, 1.2, 5, 0).sale(0, 1, 1.1, 5, 0).final(2, 4)
	r := NewInventory().Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !slices.Equal(r.Anomalies[0].Processes, []int{1, 0}) {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestFencingReadFromStories(t *testing.T) {
	ctx := context.Background()
	// A lost update: 0 (token 3) and 1 (token 6) both read 10 and wrote
	// 11; 2 (token 2) read 11: the story names the writer whose token
	// proves the staleness (0's 3, the least of the two).
	b := (&builder{}).cs(0, 1, 3, 10, 3).cs(1, 1, 5, 10, 6).cs(2, 2, 6, 11, 2)
	r := NewFencing().Check(ctx, b.build())
	var found bool
	for _, an := range r.Anomalies {
		if slices.Equal(an.Processes[:1], []int{2}) {
			found = strings.Contains(an.Explanation, "read 11, which process 0 wrote with token 3")
		}
	}
	if !found {
		t.Fatalf("%+v", r.Anomalies)
	}
	// A chain: 1 read 0's write with the same token, 2 read 1's with an
	// older one: 1's own write is what 2's story names.
	b = (&builder{}).cs(0, 1, 2, 10, 5).cs(1, 1.2, 4, 11, 5).cs(2, 1.5, 5, 12, 4)
	r = NewFencing().Check(ctx, b.build())
	if r.Stats["stale_writes_accepted"] != 1 || strings.Contains(r.Anomalies[0].Explanation, "after the resource had accepted") ||
		!strings.Contains(r.Anomalies[0].Explanation, "read 12, which process 1 wrote with token 5") {
		t.Fatalf("%v %+v", r.Stats, r.Anomalies)
	}
}

func TestInventoryNoStoryForSingleSales(t *testing.T) {
	// Two sales from different stocks, and a final stock one too high: a
	// lost decrement with no same-read story to tell.
	b := (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).sale(1, 2, 2.1, 4, 0).final(3, 4)
	r := NewInventory().Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || strings.Contains(r.Anomalies[0].Explanation, " read 4") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

// ---- linearize.go

func TestSearchedKeyIsOneChunk(t *testing.T) {
	// A key left to the search (process 2 goes on after a release in
	// doubt), short of chunkTarget ops: one chunk, so the story counts
	// every op of the key; 1 and then 0 are granted the lock while 2 holds
	// it (2's release in doubt can free it once).
	b := &builder{}
	b.acquire(0, 0, 1, 0, "o0").release(0, 2, 3, true, "o0")
	b.pair(2, history.FRelease, "k", 4, 5, history.Info, &history.Value{Owner: "o2"}, nil)
	b.acquire(2, 6, 7, 0, "o2").acquire(1, 8, 9, 0, "o1").acquire(0, 10, 11, 0, "o0")
	r := NewMutex(Options{}).Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "no order of the 6 acquires, releases and crashes on lock k between 0.00 s and 11.00 s") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestInventoryStaleSellerPaused(t *testing.T) {
	// Two runs of same-read sales (5, then 2), each started by process 0,
	// then 1; 0 was paused meanwhile: the fault sentence says why 0's
	// sale was stale.
	b := (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).sale(1, 1.05, 1.2, 5, 0).
		sale(2, 2, 2.1, 4, 0).sale(2, 2.2, 2.3, 3, 0).sale(1, 3, 3.1, 2, 0).sale(0, 3.05, 3.2, 2, 0).final(4, 0)
	b.fault(history.FPause, 1.5, 3.5, 0)
	r := NewInventory().Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "its lease ran out while it was stopped") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestSearchChunksOfTarget(t *testing.T) {
	// A key left to the search (process 2 goes on after a release in
	// doubt, at the end), searched in chunks of at least two ops: 0 and 1
	// take turns, then 1 is granted the lock while 0 holds it.
	b := &builder{}
	b.acquire(0, 0, 1, 0, "o0").release(0, 2, 3, true, "o0").acquire(1, 4, 5, 0, "o1").release(1, 6, 7, true, "o1")
	b.acquire(0, 8, 9, 0, "o0").acquire(1, 10, 11, 0, "o1")
	b.pair(2, history.FRelease, "k", 20, 21, history.Info, &history.Value{Owner: "o2"}, nil)
	b.acquire(2, 22, 23, 0, "o2")
	c := &mutex{opts: Options{}, target: 2}
	r := c.Check(context.Background(), b.build())
	// (and 2 while 1 still holds it).
	if r.Valid != Invalid || len(r.Anomalies) != 2 || !strings.Contains(r.Anomalies[0].Explanation, "no order of the 2 acquires, releases and crashes on lock k between 8.00 s and 11.00 s") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

// ---- regorder.go (the resource checker's direct decision)

func TestRegisterDirect(t *testing.T) {
	tests := []struct {
		name string
		b    *builder
		want Validity
		why  string // in the first anomaly's explanation
	}{
		{"a read of a write invoked after the reader returned", (&builder{}).cs(1, 1, 3, 1, 0).cs(0, 5, 6, 0, 0), Invalid,
			"which could not have taken effect before 5.00 s, after 1's returned"},
		{"one increment in doubt explains one missing value", (&builder{}).cs(0, 0, 1, 0, 0).csInfo(2, 2, 2.5).cs(1, 3, 4, 2, 0), Valid, ""},
		{"one increment in doubt cannot explain two", (&builder{}).cs(0, 0, 1, 0, 0).csInfo(2, 2, 2.5).cs(1, 3, 4, 2, 0).cs(3, 6, 7, 4, 0), Invalid,
			"only 0 critical sections left in doubt by 7.00 s could have added the missing 1"},
		{"the increment in doubt invoked after the reader returned", (&builder{}).cs(0, 0, 1, 0, 0).cs(1, 3, 4, 2, 0).csInfo(2, 5, 5.5), Invalid,
			"the last of the increments left in doubt that could have brought it to 2 was invoked only at 5.00 s, after 1's returned"},
		{"the increment in doubt invoked as the reader returned", (&builder{}).cs(0, 0, 1, 0, 0).cs(1, 3, 4, 2, 0).csInfo(2, 4, 5.5), Valid, ""},
		{"the increment in doubt invoked as the previous took effect", (&builder{}).cs(1, 1, 3, 2, 0).cs(0, 5, 6, 0, 0).csInfo(2, 5, 5.5), Invalid,
			"which could not have taken effect before 5.00 s, after 1's returned"},
		{"increments in doubt invoked up to the reader's return are counted", (&builder{}).cs(0, 0, 1, 0, 0).csInfo(2, 2, 2.5).csInfo(3, 4, 4.5).cs(1, 3, 4, 4, 0), Invalid,
			"only 2 critical sections left in doubt by 4.00 s could have added the missing 3"},
		{"increments in doubt already drawn are not counted", (&builder{}).cs(0, 0, 1, 0, 0).csInfo(2, 1.5, 1.7).cs(1, 2, 2.5, 2, 0).
			csInfo(3, 3, 3.2).csInfo(4, 3.5, 3.7).cs(5, 4, 5, 6, 0), Invalid,
			"only 2 critical sections left in doubt by 5.00 s could have added the missing 3"},
		{"a read of what the previous wrote, invoked together", (&builder{}).cs(0, 1, 2, 0, 0).cs(1, 1, 3, 1, 0), Valid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewResource(Options{}).Check(context.Background(), tt.b.build())
			if r.Valid != tt.want || r.Stats["keys_decided_directly"] != 1 {
				t.Fatalf("%v %v %+v", r.Valid, r.Stats, r.Anomalies)
			}
			if tt.why != "" && (len(r.Anomalies) == 0 || !strings.Contains(r.Anomalies[0].Explanation, tt.why)) {
				t.Fatalf("anomalies %+v, want %q", r.Anomalies, tt.why)
			}
		})
	}
}

// ---- liveness.go

func TestLivenessStats(t *testing.T) {
	b := (&builder{}).acquire(0, 0, 1, 0, "o0").acquireFail(1, 0.5, 0.6).acquireInfo(2, 0.7, 5).crash(2, 5.1).release(0, 2, 2.1, true, "o0")
	r := NewLiveness(Options{}).Check(context.Background(), b.build())
	want := map[string]int{"grants": 1, "acquire_attempts": 3, "acquires_failed": 1, "acquires_indeterminate": 1}
	for k, v := range want {
		if r.Stats[k] != v {
			t.Errorf("%s = %v, want %d", k, r.Stats[k], v)
		}
	}
}

func TestStuckBoundFailEdges(t *testing.T) {
	// The lock is free from 1 s (0's release) until 5 s (1's grant), far
	// longer than the bound; the only failed acquire completes at 1 s or
	// at 5 s exactly. At the start it failed against 0's hold; at the end,
	// as the lock was granted, within the stretch.
	for _, tt := range []struct {
		fail float64
		want Validity
	}{{1, Valid}, {5, Invalid}, {3, Invalid}} {
		b := (&builder{}).acquire(0, 0, 0.5, 0, "o0").release(0, 1, 1.001, true, "o0").
			acquireFail(2, tt.fail-0.1, tt.fail).acquire(1, 4.9, 5, 0, "o1").release(1, 6, 6.001, true, "o1")
		r := NewLiveness(Options{StuckBound: time.Second}).Check(context.Background(), b.build())
		if r.Valid != tt.want {
			t.Errorf("failed acquire at %v s: %v, want %v", tt.fail, r.Valid, tt.want)
		}
	}
}

// ---- resource.go

func TestRegisterModel(t *testing.T) {
	if got := (regState{5, 0}).String(); got != "5" {
		t.Errorf("String: %q", got)
	}
	if got := (regState{5, 2}).String(); got != "5 (+2 pending)" {
		t.Errorf("String: %q", got)
	}
	for _, tt := range []struct {
		s    regState
		r    int64
		want regState
		ok   bool
	}{
		{regState{1, 3}, 3, regState{3, 1}, true},
		{regState{1, 3}, 4, regState{4, 0}, true},
		{regState{1, 3}, 5, regState{1, 3}, false},
		{regState{1, 3}, 0, regState{1, 3}, false},
		{regState{1, 0}, 1, regState{1, 0}, true},
	} {
		if got, ok := tt.s.reach(tt.r); got != tt.want || ok != tt.ok {
			t.Errorf("%v.reach(%d) = %v %v, want %v %v", tt.s, tt.r, got, ok, tt.want, tt.ok)
		}
	}
	m := registerModel()
	step := func(s regState, in *csOp) (bool, regState) {
		ok, out := m.Step(s, in, nil)
		return ok, out.(regState)
	}
	if ok, s := step(regState{3, 1}, &csOp{kind: rIncr}); !ok || s != (regState{4, 1}) {
		t.Errorf("incr: %v %v", ok, s)
	}
	if ok, s := step(regState{3, 1}, &csOp{kind: rCredit}); !ok || s != (regState{3, 2}) {
		t.Errorf("credit: %v %v", ok, s)
	}
	if ok, s := step(regState{3, 1}, &csOp{kind: rMaybe, read: 4, wrote: 5}); !ok || s != (regState{5, 0}) {
		t.Errorf("maybe applied: %v %v", ok, s)
	}
	if ok, s := step(regState{3, 1}, &csOp{kind: rMaybe, read: 7, wrote: 8}); !ok || s != (regState{3, 1}) {
		t.Errorf("maybe not applied: %v %v", ok, s)
	}
	if ok, _ := step(regState{3, 1}, &csOp{kind: rRMW, read: 7, wrote: 8}); ok {
		t.Errorf("rmw out of reach applied")
	}
	if ok, s := step(regState{3, 1}, &csOp{kind: rStart, start: regState{9, 2}}); !ok || s != (regState{9, 2}) {
		t.Errorf("start: %v %v", ok, s)
	}
	if !m.Equal(regState{1, 2}, regState{1, 2}) || m.Equal(regState{1, 2}, regState{2, 1}) {
		t.Errorf("Equal")
	}
	if m.Hash(regState{1, 2}) == m.Hash(regState{2, 1}) {
		t.Errorf("Hash does not tell {1 2} from {2 1}")
	}
	for _, tt := range []struct {
		in   *csOp
		want string
	}{
		{&csOp{kind: rStart, start: regState{3, 1}}, "start: 3 (+1 pending)"},
		{&csOp{kind: rRMW, proc: 2, read: 3, wrote: 4, token: 7}, "2 cs 3→4 (token 7)"},
		{&csOp{kind: rIncr, proc: 2}, "2 cs +1"},
		{&csOp{kind: rMaybe, proc: 2, read: 3, wrote: 4}, "2 cs 3→4 (info)"},
		{&csOp{kind: rCredit, proc: 2, token: 5}, "2 cs +1 (info) (token 5)"},
	} {
		if got := m.DescribeOperation(tt.in, nil); got != tt.want {
			t.Errorf("DescribeOperation = %q, want %q", got, tt.want)
		}
	}
	if got := m.DescribeState(regState{3, 0}); got != "3" {
		t.Errorf("DescribeState = %q", got)
	}
}

func TestStuckStoryNamesTheFirstToLetGo(t *testing.T) {
	// Processes 0 and 1 both hold the lock and both invoke their release
	// at 1 s; the lock then stays free with a failed acquire until 5 s.
	b := (&builder{}).acquire(0, 0, 0.1, 0, "o0").acquire(1, 0.2, 0.3, 0, "o1").
		release(0, 1, 1.1, true, "o0").release(1, 1, 1.1, true, "o1").acquireFail(2, 2, 2.1).acquire(2, 4.9, 5, 0, "o2")
	r := NewLiveness(Options{StuckBound: time.Second}).Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "when process 0 (granted") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestRegisterCutCarriesPendingIncrements(t *testing.T) {
	// 0 writes 1; 1's critical section is left in doubt (one pending
	// increment); 2 reads 2 (using it); 3 reads 3; 4 reads 5, which nobody
	// wrote: nonlinearizable. 5's blind write at the end leaves the key to
	// the search, cut after every op: the pending increment is spent at
	// the cuts and must not come back.
	b := (&builder{}).cs(0, 0, 1, 0, 0).csInfo(1, 1.5, 1.6).cs(2, 2, 3, 2, 0).cs(3, 4, 5, 3, 0).cs(4, 6, 7, 5, 0)
	b.pair(5, history.FCS, "k", 8, 9, history.OK, nil, &history.Value{})
	c := &resource{opts: Options{}, target: 1}
	r := c.Check(context.Background(), b.build())
	if r.Valid != Invalid || r.Stats["keys_decided_directly"] != 0 {
		t.Fatalf("%v %v %+v", r.Valid, r.Stats, r.Anomalies)
	}
}

func TestRegisterCutKeepsUnspentIncrements(t *testing.T) {
	// Two critical sections left in doubt (two pending increments); 2
	// reads 2 (spending one), 3 reads 4 (spending the other): valid,
	// across a cut between 2 and 3.
	b := (&builder{}).cs(0, 0, 1, 0, 0).csInfo(1, 1.2, 1.3).csInfo(6, 1.4, 1.5).cs(2, 2, 3, 2, 0).cs(3, 4, 5, 4, 0)
	b.pair(5, history.FCS, "k", 8, 9, history.OK, nil, &history.Value{})
	c := &resource{opts: Options{}, target: 1}
	if r := c.Check(context.Background(), b.build()); r.Valid != Valid || r.Stats["keys_decided_directly"] != 0 {
		t.Fatalf("%v %v %+v", r.Valid, r.Stats, r.Anomalies)
	}
}

func TestStuckLockExplanation(t *testing.T) {
	// Free from 1 s to 5 s with a failed acquire, while process 1 was
	// paused: the fault is named, but no holder's lease is blamed.
	b := (&builder{}).acquire(0, 0, 0.5, 0, "o0").release(0, 1, 1.001, true, "o0").
		acquireFail(2, 2, 2.1).acquire(1, 4.9, 5, 0, "o1")
	b.fault(history.FPause, 2, 3, 1)
	r := NewLiveness(Options{StuckBound: time.Second}).Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
	ex := r.Anomalies[0].Explanation
	if !strings.HasPrefix(ex, "lock k had no granted holder for 4.00 s, longer than the 1.00 s bound, from 1.00 s, when process 0 (granted it at 0.50 s) started its release, until process 1 was granted it at 5.00 s, while 1 acquire failed.") ||
		!strings.Contains(ex, "A pause of process 1 from 2.00 s to 3.00 s was in force.") {
		t.Fatalf("%q", ex)
	}
}

func TestCrashAtFailpointFirstOp(t *testing.T) {
	// The stopped acquire is the history's first op.
	b := &builder{}
	b.add(0, 3, history.Invoke, history.FAcquire, "k", nil)
	b.add(0.01, 3, history.Info, history.FEvent, "", &history.Value{Extra: &history.Extra{Detail: "failpoint setnx-expire: between SETNX and PEXPIRE of k"}})
	b.fault(history.FKillWorker, 0.50, 1.00, 3)
	b.add(0.51, 3, history.Info, history.FAcquire, "k", nil)
	b.crash(3, 0.52)
	for i := range 10 {
		t0 := 1.0 + float64(i)*0.5
		b.acquireFail(1+i%2, t0, t0+0.1)
	}
	b.acquire(1, 6, 6.1, 0, "o1")
	r := NewLiveness(Options{StuckBound: time.Second}).Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "while stopped at a failpoint in its acquire of k") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestResourceStats(t *testing.T) {
	b := (&builder{}).cs(0, 0, 1, 0, 0).cs(1, 2, 3, 1, 0).csInfo(2, 4, 4.5)
	b.pair(3, history.FCS, "k", 5, 6, history.OK, nil, &history.Value{})                                                    // blind: +1
	b.pair(4, history.FCS, "k", 7, 8, history.Info, nil, &history.Value{Read: history.Int64(3), Wrote: history.Int64(4)})   // in doubt, read known
	b.pair(5, history.FCS, "k", 9, 10, history.Info, nil, &history.Value{Read: history.Int64(9), Wrote: history.Int64(10)}) // in doubt, read known
	r := NewResource(Options{}).Check(context.Background(), b.build())
	if r.Stats["cs_ok"] != 3 || r.Stats["cs_indeterminate"] != 3 || r.Stats["keys"] != 1 {
		t.Fatalf("stats %v", r.Stats)
	}
}

func TestLateWriteNeverCompleted(t *testing.T) {
	// 0 writes 5; 6's critical section, invoked before that, never
	// completes (the history ends first); 1 and then 2 read 5: 6's write
	// landed late. It has no completion to name.
	b := (&builder{}).cs(0, 0, 0.5, 4, 0)
	b.add(0.2, 6, history.Invoke, history.FCS, "k", nil)
	b.cs(1, 1, 1.5, 5, 0).cs(2, 2, 2.5, 5, 0)
	r := NewResource(Options{}).Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) == 0 || !strings.Contains(r.Anomalies[0].Explanation, "invoked at 0.20 s and left in doubt: it read 4") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestGrantsStoppedAtZero(t *testing.T) {
	// The only grant completes at time 0; acquires then fail until the
	// history ends one nanosecond past stallMin: grants stopped.
	b := (&builder{}).acquire(0, 0, 0, 0, "o0")
	for i := range 4 {
		b.acquireFail(1, float64(i+1), float64(i+1)+0.1)
	}
	h := b.build()
	h[len(h)-1].Time = stallMin + 1
	r := NewLiveness(Options{}).Check(context.Background(), h)
	if r.Valid != Unknown || !strings.HasPrefix(r.Error, "grants stopped at 0.00 s, 5.00 s before the end of the history, while 4 acquires failed") {
		t.Fatalf("%v %q", r.Valid, r.Error)
	}
}

func TestStuckLockFailsAtOneInstant(t *testing.T) {
	// Processes 2 and 1 fail to acquire at the same instant (2 first in
	// the history): the story keeps that order.
	b := (&builder{}).acquire(0, 0, 0.5, 0, "o0").release(0, 1, 1.001, true, "o0").
		acquireFail(2, 2, 2.1).acquireFail(1, 2.05, 2.1).acquire(1, 4.9, 5, 0, "o1")
	r := NewLiveness(Options{StuckBound: time.Second}).Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !slices.Equal(r.Anomalies[0].Processes, []int{2, 1}) {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
}

func TestLostUpdateStories(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, b *builder, procs []int, has, lacks string) {
		t.Helper()
		r := NewResource(Options{}).Check(ctx, b.build())
		if r.Valid != Invalid || len(r.Anomalies) == 0 {
			t.Fatalf("%v %+v", r.Valid, r.Anomalies)
		}
		an := r.Anomalies[0]
		if procs != nil && !slices.Equal(an.Processes, procs) {
			t.Fatalf("processes %v, want %v: %+v", an.Processes, procs, an)
		}
		if !strings.Contains(an.Explanation, has) || (lacks != "" && strings.Contains(an.Explanation, lacks)) {
			t.Fatalf("explanation %q, want %q and not %q", an.Explanation, has, lacks)
		}
		if want := len(an.Processes) - 1; an.Kind == "lost-update" && an.Lost != want && !strings.Contains(an.Explanation, "set back") {
			t.Fatalf("lost %d, want %d: %+v", an.Lost, want, an)
		}
	}
	t.Run("in order of invocation", func(t *testing.T) {
		// 1 invoked first but returned last.
		check(t, (&builder{}).cs(0, 0, 0.5, 4, 0).cs(1, 1, 3, 5, 0).cs(2, 1.5, 2, 5, 0), []int{1, 2}, "processes 1 and 2 both read 5", "")
	})
	t.Run("invoked at the same instant", func(t *testing.T) {
		check(t, (&builder{}).cs(0, 0, 0.5, 4, 0).cs(2, 1, 3, 5, 0).cs(1, 1, 2, 5, 0), []int{2, 1}, "processes 2 and 1 both read 5", "")
	})
	t.Run("three read one value", func(t *testing.T) {
		check(t, (&builder{}).cs(0, 0, 0.5, 4, 0).cs(1, 1, 3, 5, 0).cs(2, 1.1, 2, 5, 0).cs(3, 1.2, 2.5, 5, 0), nil,
			"processes 1, 2 and 3 all read 5 from the resource for lock k and all wrote 6: 2 updates were lost", "")
	})
	t.Run("touching: a race, no late write", func(t *testing.T) {
		b := (&builder{}).cs(0, 0, 0.5, 4, 0).csInfo(6, 0.2, 0.4).cs(1, 1, 2, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, nil, "one update was lost", "set back")
	})
	t.Run("a late write in doubt", func(t *testing.T) {
		b := (&builder{}).cs(0, 0, 0.5, 4, 0).csInfo(6, 0.2, 0.4).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, []int{6, 1, 2}, "most likely by process 6's critical section, invoked at 0.20 s and left in doubt (info at 0.40 s, op 2): it read 4 before 5 was first written", "could have done the same")
	})
	t.Run("the latest of two late writes in doubt", func(t *testing.T) {
		b := (&builder{}).cs(0, 0, 0.5, 4, 0).csInfo(6, 0.2, 0.4).csInfo(7, 0.3, 0.45).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, []int{7, 1, 2}, "by process 7's critical section, invoked at 0.30 s", "")
		check(t, b, nil, "(1 other critical section left in doubt could have done the same)", "")
	})
	t.Run("two late writes invoked together: the first", func(t *testing.T) {
		b := (&builder{}).cs(0, 0, 0.5, 4, 0).csInfo(6, 0.2, 0.4).csInfo(7, 0.2, 0.45).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, []int{6, 1, 2}, "by process 6's critical section", "")
	})
	// With no accepted writer of 5, only the second reader's return bounds
	// when the late write was invoked.
	t.Run("in doubt, invoked after the second reader returned", func(t *testing.T) {
		b := (&builder{}).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0).csInfo(6, 3.5, 4)
		check(t, b, nil, "one update was lost", "set back")
	})
	t.Run("in doubt, invoked as the second reader returned", func(t *testing.T) {
		b := (&builder{}).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0).csInfo(6, 3, 4)
		check(t, b, nil, "process 6's critical section, invoked at 3.00 s", "")
	})
	t.Run("in doubt, invoked after 5 was written", func(t *testing.T) {
		// 0 wrote 5 by 0.5 s; 6's critical section began at 0.7 s, when
		// the register no longer held 4.
		b := (&builder{}).cs(0, 0, 0.5, 4, 0).csInfo(6, 0.7, 0.8).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, nil, "one update was lost", "set back")
	})
	t.Run("in doubt, invoked as 5 was written", func(t *testing.T) {
		b := (&builder{}).cs(0, 0, 0.5, 4, 0).csInfo(6, 0.5, 0.8).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, nil, "process 6's critical section, invoked at 0.50 s", "")
	})
	t.Run("a writer of 5 still running when the first reader began", func(t *testing.T) {
		b := (&builder{}).cs(0, 0, 1, 4, 0).csInfo(6, 0.2, 0.4).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, nil, "process 6's critical section", "")
		b = (&builder{}).cs(0, 0, 1.2, 4, 0).csInfo(6, 0.2, 0.4).cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, nil, "one update was lost", "set back")
	})
	t.Run("in doubt with a known read of another value", func(t *testing.T) {
		b := (&builder{}).cs(0, 0, 0.5, 4, 0)
		b.pair(6, history.FCS, "k", 0.2, 0.4, history.Info, nil, &history.Value{Read: history.Int64(2), Wrote: history.Int64(3)})
		b.cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, nil, "one update was lost", "set back")
		b = (&builder{}).cs(0, 0, 0.5, 4, 0)
		b.pair(6, history.FCS, "k", 0.2, 0.4, history.Info, nil, &history.Value{Read: history.Int64(4), Wrote: history.Int64(5)})
		b.cs(1, 1, 1.5, 5, 0).cs(2, 2, 3, 5, 0)
		check(t, b, nil, "process 6's critical section", "")
	})
}

func TestExplainRegister(t *testing.T) {
	a := &csOp{kind: rRMW, proc: 1, read: 3, wrote: 4, inv: 10, done: 11, call: sec(1), ret: sec(2)}
	b := &csOp{kind: rRMW, proc: 2, read: 3, wrote: 4, inv: 12, done: 13, call: sec(3), ret: sec(4)}
	open := &csOp{kind: rMaybe, proc: 3, read: 9, wrote: 10, inv: 14, done: -1, call: sec(5), ret: forever}
	start := &csOp{kind: rStart, start: regState{3, 0}, inv: -1, done: -1, call: sec(0.5), ret: sec(0.5)}
	ch := chunk{key: "k", ops: []linInput{a, b, open}, from: sec(1), to: sec(4)}
	op := func(in *csOp) porcupine.Operation { return in.operation() }
	ops := func(ins ...*csOp) []porcupine.Operation {
		var out []porcupine.Operation
		for _, in := range ins {
			out = append(out, op(in))
		}
		return out
	}
	stuckAt := func(prefix []porcupine.Operation, st regState, in *csOp) *stuck {
		o := op(in)
		return &stuck{prefix: prefix, state: st, op: &o}
	}
	for _, tt := range []struct {
		name  string
		s     *stuck
		procs []int
		ops   []int
		start time.Duration
		end   time.Duration
		has   string
	}{
		{"no search detail", nil, nil, nil, sec(1), sec(4),
			"No order of the 3 critical sections on lock k between 1.00 s and 4.00 s fits a register that each one read and then wrote."},
		{"stuck with no op", &stuck{state: regState{}}, nil, nil, sec(1), sec(4), "No order of the 3 critical sections"},
		{"stuck after another's", stuckAt(ops(start, a), regState{4, 0}, b), []int{1, 2}, []int{10, 12, 13}, sec(1), sec(4),
			"Process 2's critical section on lock k (3.00 s–4.00 s) read 3 and wrote 4, but no order of the 3 critical sections on lock k between 1.00 s and 4.00 s fits a register that each one read and then wrote: in the longest order that fits, the register holds 4 when it would have to run."},
		{"stuck right after the start", stuckAt(ops(start), regState{3, 0}, b), []int{2}, []int{12, 13}, sec(1), sec(4), "the register holds 3"},
		{"stuck with no prefix, never returned", stuckAt(nil, regState{3, 1}, open), []int{3}, []int{14}, sec(1), sec(4), "the register holds 3 (+1 pending)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			an := explainRegister(ch, tt.s, nil)
			if !slices.Equal(an.Processes, tt.procs) || !slices.Equal(an.Ops, tt.ops) || an.Start != tt.start || an.End != tt.end ||
				!strings.Contains(an.Explanation, tt.has) {
				t.Fatalf("%+v", an)
			}
		})
	}
}

// ---- stats.go

func TestStatsExact(t *testing.T) {
	b := &builder{}
	b.pair(0, history.FAcquire, "a", 0, 0.001, history.OK, nil, &history.Value{Owner: "o"})
	b.pair(0, history.FCS, "a", 0.002, 0.005, history.Fail, &history.Value{Token: 1}, &history.Value{Extra: &history.Extra{Rejected: "write"}})
	b.pair(0, history.FCS, "a", 0.006, 0.007, history.Fail, nil, &history.Value{})
	b.pair(2, history.FCS, "a", 0.006, 0.007, history.Fail, nil, &history.Value{})
	b.pair(0, history.FRelease, "a", 0.008, 0.010, history.OK, nil, &history.Value{Released: history.Bool(false)})
	b.pair(1, history.FAcquire, "b", 0.011, 0.0125, history.OK, nil, nil)
	b.pair(1, history.FRelease, "b", 0.013, 0.014, history.OK, nil, &history.Value{Released: history.Bool(true)})
	b.pair(1, history.FRelease, "", 0.015, 0.016, history.Fail, nil, nil)
	b.fault(history.FPause, 0.02, 1.2345, 1)
	r := NewStats().Check(context.Background(), b.build())
	want := map[string]any{"ops": 20, "duration_s": 1.235, "grants": 2, "releases": 2, "released_lost": 1,
		"stale_writes_rejected": 1, "keys": 2, "processes": 3, "faults": 1}
	for k, v := range want {
		if r.Stats[k] != v {
			t.Errorf("%s = %v, want %v", k, r.Stats[k], v)
		}
	}
	counts := r.Stats["counts"].(map[string]map[string]int)
	if counts["cs"]["fail"] != 3 || counts["release"]["ok"] != 2 || counts["release"]["fail"] != 1 || counts["acquire"]["ok"] != 2 {
		t.Errorf("counts %v", counts)
	}
	lat := r.Stats["latency_ms"].(map[string]map[string]float64)
	if got := lat["acquire"]; got["p50"] != 1 || got["p95"] != 1.5 || got["max"] != 1.5 {
		t.Errorf("acquire latency %v", got)
	}
	if got := lat["release"]; got["p50"] != 1 || got["p99"] != 2 || got["max"] != 2 {
		t.Errorf("release latency %v", got)
	}
	for _, tt := range []struct {
		n    int
		q    float64
		want time.Duration
	}{{4, 0.5, 2}, {4, 0.95, 4}, {4, 0.25, 1}, {1, 0.5, 1}, {10, 0.99, 10}, {10, 0.0, 1}} {
		ds := make([]time.Duration, tt.n)
		for i := range ds {
			ds[i] = time.Duration(i + 1)
		}
		if got := quantile(ds, tt.q); got != tt.want {
			t.Errorf("quantile(1..%d, %v) = %v, want %v", tt.n, tt.q, got, tt.want)
		}
	}
	if got := ms(1500 * time.Microsecond); got != 1.5 {
		t.Errorf("ms = %v", got)
	}
}

// ---- mutex.go (the story of a chunk the search could not linearize)

func TestMutexExplainStuck(t *testing.T) {
	c := &mutex{opts: Options{}}
	start := &mutexOp{kind: mStart, holder: 0, proc: 1, inv: -1, done: -1, call: sec(0.5), ret: sec(0.5)}
	startHeld := &mutexOp{kind: mStart, holder: 2, proc: 1, inv: -1, done: -1, call: sec(0.5), ret: sec(0.5)}
	a := &mutexOp{kind: mAcquire, key: "k", proc: 1, token: 7, inv: 10, done: 11, call: sec(1), ret: sec(2)}
	b := &mutexOp{kind: mAcquire, key: "k", proc: 2, inv: 12, done: 13, call: sec(3), ret: sec(4)}
	rel := &mutexOp{kind: mRelease, key: "k", proc: 2, inv: 14, done: 15, call: sec(5), ret: sec(6)}
	crash := &mutexOp{kind: mCrash, key: "k", proc: 2, inv: 16, done: -1, call: sec(7), ret: forever, info: true}
	a0 := &mutexOp{kind: mAcquire, key: "k", proc: 0, inv: 20, done: 21, call: sec(0.8), ret: sec(0.9)}
	doubt := &mutexOp{kind: mAcquire, key: "k", proc: 3, inv: 22, done: 23, call: sec(2.5), ret: forever, info: true}
	ch := chunk{key: "k", ops: []linInput{a, b, rel}, from: sec(1), to: sec(6)}
	op := func(in *mutexOp) porcupine.Operation { return in.operation() }
	stuckAt := func(state int, in *mutexOp, prefix ...*mutexOp) *stuck {
		var p []porcupine.Operation
		for _, x := range prefix {
			p = append(p, op(x))
		}
		o := op(in)
		return &stuck{prefix: p, state: state, op: &o}
	}
	for _, tt := range []struct {
		name       string
		s          *stuck
		procs, ops []int
		start, end time.Duration
		want       string
	}{
		{"no search detail", nil, nil, nil, sec(1), sec(6),
			"No order of the 3 acquires, releases and crashes on lock k between 1.00 s and 6.00 s fits a lock with at most one holder at a time; the overlap checker names the double holders."},
		{"an acquire while another holds", stuckAt(2, b, start, a), []int{1, 2}, []int{11, 12, 13}, sec(2), sec(4),
			"Process 2's acquire of lock k cannot be placed: no order of the 3 acquires, releases and crashes on lock k between 1.00 s and 6.00 s fits a lock with at most one holder at a time. In the longest order that fits, process 1 holds the lock (its acquire ran 1.00 s–2.00 s, token 7) when 2's acquire (3.00 s–4.00 s) returns. The overlap checker names the double holders."},
		{"process 0 holds it", stuckAt(1, b, startHeld), []int{0, 2}, []int{12, 13}, sec(1), sec(4),
			"In the longest order that fits, process 0 holds the lock when 2's acquire (3.00 s–4.00 s) returns."},
		{"process 0 holds it, granted in the prefix", stuckAt(1, b, start, a0), []int{0, 2}, []int{21, 12, 13}, sec(0.9), sec(4),
			"process 0 holds the lock (its acquire ran 0.80 s–0.90 s) when 2's acquire"},
		{"an acquire in doubt by another after the grant", stuckAt(2, b, start, a, doubt), []int{1, 2}, []int{11, 12, 13}, sec(2), sec(4),
			"process 1 holds the lock (its acquire ran 1.00 s–2.00 s, token 7) when 2's acquire"},
		{"a release of a free lock", stuckAt(0, rel, start), []int{2}, []int{14, 15}, sec(1), sec(6),
			"In the longest order that fits, the lock is free, not 2, when 2's release (5.00 s–6.00 s) returns."},
		{"held from the chunk's start", stuckAt(3, b, startHeld), []int{2}, []int{12, 13}, sec(1), sec(4),
			"In the longest order that fits, process 2 holds the lock when 2's acquire (3.00 s–4.00 s) returns."},
		{"a crash", stuckAt(2, crash, start, a), []int{1, 2}, []int{11, 16}, sec(2), sec(6),
			"In the longest order that fits, process 1 holds the lock (its acquire ran 1.00 s–2.00 s, token 7) when 2's crash at 7.00 s happens."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			an := c.explain(ch, tt.s, nil)
			if !slices.Equal(an.Processes, tt.procs) || !slices.Equal(an.Ops, tt.ops) || an.Start != tt.start || an.End != tt.end ||
				!strings.Contains(an.Explanation, tt.want) {
				t.Fatalf("%+v", an)
			}
		})
	}
}

// ---- overlap.go (the double-holder story)

func TestDoubleHolderStory(t *testing.T) {
	ctx := context.Background()
	// 0 holds the lock (token 5) from 1 s until it sends its release at 10
	// s; 1 (token 7), then 2 (token 6) and 3 (token 9) are granted it
	// meanwhile. 0's accesses at 2 s (as 1 was granted) and at 10 s (as
	// it let go) are refused, one at 0.5 s is not 0's stale access.
	b := (&builder{}).acquire(0, 0.9, 1, 5, "o0")
	b.acquire(1, 1.9, 2, 7, "o1").release(1, 3, 3.1, true, "o1")
	b.acquire(2, 3.9, 4, 6, "o2").release(2, 5, 5.1, true, "o2")
	b.acquire(3, 5.9, 6, 9, "o3").release(3, 7, 7.1, true, "o3")
	b.csRejected(0, 1.5, 2, 0, 5, 7).csRejected(0, 9.5, 10, 0, 5, 9)
	b.release(0, 10, 10.1, false, "o0")
	b.csRejected(4, 0.1, 0.5, 0, 4, 5)
	r := NewOverlap(Options{Fenced: true}).Check(ctx, b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
	for _, want := range []string{
		"processes 0 and 1 both held lock k from 2.00 s to 3.00 s: 0 was granted it at 1.00 s (token 5) and did not start its release until 10.00 s; 1 was granted it at 2.00 s (token 7) and did not start its release until 3.00 s.",
		"While 0 still held it, the lock was granted 2 times more (to processes 2 and 3; tokens 6 to 9).",
		"The lock is fenced: the resource refused 2 stale accesses from process 0 after 1 was granted the lock.",
	} {
		if !strings.Contains(r.Anomalies[0].Explanation, want) {
			t.Errorf("explanation lacks %q:\n%s", want, r.Anomalies[0].Explanation)
		}
	}
	// The later holder lets go with the earlier one, and is the only one.
	b = (&builder{}).acquire(0, 0.9, 1, 0, "o0").acquire(1, 1.9, 2, 0, "o1").release(0, 5, 5.1, true, "o0").release(1, 5, 5.1, true, "o1")
	r = NewOverlap(Options{}).Check(ctx, b.build())
	if len(r.Anomalies) != 1 || !strings.HasSuffix(r.Anomalies[0].Explanation,
		"processes 0 and 1 both held lock k from 2.00 s to 5.00 s: 0 was granted it at 1.00 s and did not start its release until 5.00 s; 1 was granted it at 2.00 s.") {
		t.Fatalf("%+v", r.Anomalies)
	}
	// One more grant to the same process twice: "process 2", one token.
	b = (&builder{}).acquire(0, 0.9, 1, 5, "o0")
	b.acquire(1, 1.9, 2, 7, "o1").release(1, 3, 3.1, true, "o1")
	b.acquire(2, 3.9, 4, 8, "o2").release(2, 5, 5.1, true, "o2").acquire(2, 5.9, 6, 8, "o2").release(2, 7, 7.1, true, "o2")
	b.release(0, 10, 10.1, false, "o0")
	r = NewOverlap(Options{}).Check(ctx, b.build())
	if len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "granted 2 times more (to process 2; token 8).") {
		t.Fatalf("%+v", r.Anomalies)
	}
}

func TestForeignReleaseOwners(t *testing.T) {
	ctx := context.Background()
	// The release names no owner; the acquire did: 0's DEL deleted 1's key.
	b := (&builder{}).acquire(0, 0, 0.1, 0, "o0")
	b.pair(0, history.FRelease, "k", 1, 1.5, history.OK, nil, &history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "o1"}})
	b.acquire(1, 1.1, 1.2, 0, "o1").release(1, 2, 2.1, false, "o1")
	r := NewOverlap(Options{}).Check(ctx, b.build())
	if r.Stats["foreign_releases"] != 1 {
		t.Fatalf("stats %v", r.Stats)
	}
	// Only the release names an owner (the acquire's reply did not): it
	// deleted another's.
	b = (&builder{}).acquire(0, 0, 0.1, 0, "")
	b.pair(0, history.FRelease, "k", 1, 1.5, history.OK, &history.Value{Owner: "o0"}, &history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "o1"}})
	if r := NewOverlap(Options{}).Check(ctx, b.build()); r.Stats["foreign_releases"] != 1 {
		t.Fatalf("stats %v", r.Stats)
	}
	// Neither names an owner: nothing to compare.
	b = (&builder{}).acquire(0, 0, 0.1, 0, "")
	b.pair(0, history.FRelease, "k", 1, 1.5, history.OK, nil, &history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "o1"}})
	if r := NewOverlap(Options{}).Check(ctx, b.build()); r.Stats["foreign_releases"] != 0 {
		t.Fatalf("stats %v", r.Stats)
	}
	// The release names its own owner, which it deleted: not foreign.
	b = (&builder{}).acquire(0, 0, 0.1, 0, "o0")
	b.pair(0, history.FRelease, "k", 1, 1.5, history.OK, &history.Value{Owner: "o0"}, &history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "o0"}})
	if r := NewOverlap(Options{}).Check(ctx, b.build()); r.Stats["foreign_releases"] != 0 {
		t.Fatalf("stats %v", r.Stats)
	}
}

// ---- watch.go

func TestWatchFencedEdges(t *testing.T) {
	first := func(h history.History, opts Options) (Anomaly, bool) {
		w := NewWatch(opts)
		for _, op := range h {
			if a, ok := w.Observe(op); ok {
				return a, true
			}
		}
		return Anomaly{}, false
	}
	fenced := Options{Fenced: true}
	readOnly := func(b *builder, p int, t0, t1 float64, read, tok int64) *builder {
		return b.pair(p, history.FCS, "k", t0, t1, history.OK, &history.Value{Token: tok}, &history.Value{Read: history.Int64(read)})
	}
	tests := []struct {
		name  string
		h     history.History
		opts  Options
		stale bool
		procs []int
		key   string
	}{
		{"touching writes: concurrent", (&builder{}).write(0, 1, 2, 5).write(1, 2, 3, 4).build(), fenced, false, nil, ""},
		{"one holder's two writes with one token", (&builder{}).write(0, 1, 2, 5).write(0, 3, 4, 5).build(), fenced, false, nil, ""},
		{"the first write whose token the stale one is below is named", (&builder{}).write(0, 1, 2, 4).write(1, 3, 4, 6).write(2, 5, 6, 4).build(),
			fenced, true, []int{1, 2}, ""},
		{"replies with the read only, one value read twice", readOnly(readOnly(&builder{}, 0, 1, 3, 10, 5), 1, 2, 4, 10, 4).build(), fenced, true, nil, ""},
		{"the token sent, not echoed", (&builder{}).write(0, 1, 2, 5).
			pair(1, history.FCS, "k", 3, 4, history.OK, &history.Value{Token: 4}, &history.Value{}).build(), fenced, true, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := first(tt.h, tt.opts)
			if ok != tt.stale || (ok && a.Kind != "stale-write") {
				t.Fatalf("anomaly %v %+v, want stale %v", ok, a, tt.stale)
			}
			if tt.procs != nil && !slices.Equal(a.Processes, tt.procs) {
				t.Fatalf("processes %v, want %v", a.Processes, tt.procs)
			}
		})
	}
	// Two keys stuck at once: the first by name.
	b := &builder{}
	for _, k := range []string{"b", "a"} {
		b.pair(0, history.FAcquire, k, 0, 0.1, history.OK, nil, &history.Value{Owner: "o"})
		b.pair(0, history.FRelease, k, 0.2, 0.3, history.OK, nil, &history.Value{Released: history.Bool(true)})
		b.pair(1, history.FAcquire, k, 0.4, 0.5, history.Fail, nil, nil)
	}
	b.pair(2, history.FAcquire, "c", 5, 5.1, history.Fail, nil, nil)
	a, ok := first(b.build(), Options{StuckBound: time.Second})
	if !ok || a.Kind != "stuck-lock" || a.Key != "a" {
		t.Fatalf("%v %+v", ok, a)
	}
}

// ---- lockorder.go

func TestDirectConflictStory(t *testing.T) {
	ctx := context.Background()
	// 1 is granted the lock at 2 s while 0 holds it until 5 s.
	b := (&builder{}).acquire(0, 0.9, 1, 0, "o0").acquire(1, 1.9, 2, 0, "o1").release(1, 3, 3.1, true, "o1").release(0, 5, 5.1, true, "o0")
	r := NewMutex(Options{}).Check(ctx, b.build())
	if r.Stats["keys_decided_directly"] != 1 || len(r.Anomalies) != 1 {
		t.Fatalf("%v %+v", r.Stats, r.Anomalies)
	}
	an := r.Anomalies[0]
	if an.Start != sec(2) || an.End != sec(3) || strings.Contains(an.Explanation, "Before process 0 gave it up") {
		t.Fatalf("%+v", an)
	}
	// Neither lets go: the window is the later grant's instant.
	b = (&builder{}).acquire(0, 0.9, 1, 0, "o0").acquire(1, 1.9, 2, 0, "o1")
	r = NewMutex(Options{}).Check(ctx, b.build())
	if len(r.Anomalies) != 1 || r.Anomalies[0].Start != sec(2) || r.Anomalies[0].End != sec(2) {
		t.Fatalf("%+v", r.Anomalies)
	}
	// A hold of zero length and an acquire that returned at its invoke
	// are still decided directly.
	for _, h := range []history.History{zeroLength(true), (&builder{}).acquire(0, 1, 1, 0, "o0").release(0, 2, 2.1, true, "o0").build()} {
		if r := NewMutex(Options{}).Check(ctx, h); r.Stats["keys_decided_directly"] != 1 {
			t.Fatalf("stats %v", r.Stats)
		}
	}
}

func TestMutexModelDescriptions(t *testing.T) {
	m := mutexModel()
	for s, want := range map[int]string{0: "free", 1: "held by 0", 3: "held by 2"} {
		if got := m.DescribeState(s); got != want {
			t.Errorf("DescribeState(%d) = %q, want %q", s, got, want)
		}
	}
	for _, tt := range []struct {
		in   *mutexOp
		want string
	}{
		{&mutexOp{kind: mStart, holder: 2}, "start: held by 1"},
		{&mutexOp{kind: mAcquire, proc: 3, token: 9}, "3 acquire (token 9)"},
		{&mutexOp{kind: mAcquire, proc: 3, token: 1<<32 | 797, zxid: true}, "3 acquire (zxid 1:797)"},
		{&mutexOp{kind: mAcquire, proc: 3, info: true}, "3 acquire (info)"},
		{&mutexOp{kind: mRelease, proc: 3}, "3 release"},
		{&mutexOp{kind: mCrash, proc: 3, info: true}, "3 crash"},
	} {
		if got := m.DescribeOperation(tt.in, nil); got != tt.want {
			t.Errorf("DescribeOperation = %q, want %q", got, tt.want)
		}
	}
}

func TestDirectConflictsInOrder(t *testing.T) {
	b := &builder{}
	for i := range 3 {
		t0 := 10 * float64(i)
		b.acquire(0, t0, t0+1, 0, "o0").acquire(1, t0+2, t0+3, 0, "o1").release(1, t0+4, t0+5, true, "o1").release(0, t0+6, t0+7, true, "o0")
	}
	r := NewMutex(Options{}).Check(context.Background(), b.build())
	if len(r.Anomalies) != 3 || r.Anomalies[0].Start != sec(3) || r.Anomalies[2].Start != sec(23) {
		t.Fatalf("%+v", r.Anomalies)
	}
}

func TestExplainEventsAndClocks(t *testing.T) {
	if got := faultWhy(history.Fault{F: history.FClock, Detail: "wall clock jumped 3 s forward"}); !strings.HasPrefix(got, "the lock server's wall clock jumped 3 s forward") {
		t.Errorf("clockWhy: %q", got)
	}
	if got := faultWhy(history.Fault{F: history.FClockJump}); !strings.HasPrefix(got, "the shared node's wall clock jumped forward") {
		t.Errorf("clockWhy: %q", got)
	}
	ev := func(at float64, detail string) *history.Op {
		return &history.Op{Time: sec(at), Process: 3, Type: history.Info, F: history.FEvent, Value: &history.Value{Extra: &history.Extra{Detail: detail}}}
	}
	events := []*history.Op{ev(0.5, "early"), ev(1, "at the start"), {Time: sec(1.5), Process: 3, F: history.FEvent},
		ev(2, "session 0x1 expired"), ev(3, "at the end"), ev(3.5, "late")}
	s, expired := eventSentence(events, 3, sec(1), sec(3))
	if !expired || s != `Process 3's lock client reported "at the start" at 1.00 s, "session 0x1 expired" at 2.00 s and "at the end" at 3.00 s.` {
		t.Errorf("eventSentence: %q %v", s, expired)
	}
	s, _ = eventSentence(append([]*history.Op{ev(1.2, "one more")}, events...), 3, sec(1), sec(3))
	if strings.Count(s, " at ") != maxEvents {
		t.Errorf("eventSentence quotes more than %d: %q", maxEvents, s)
	}
	if s, expired := eventSentence(events, 3, sec(4), sec(5)); s != "" || expired {
		t.Errorf("eventSentence of nothing: %q %v", s, expired)
	}
	st := &SessionTimeout{Server: "PostgreSQL", Settings: "idle_session_timeout", Timeout: time.Second}
	pause := func(d time.Duration) []history.Fault {
		return []history.Fault{{F: history.FPause, Start: sec(1), End: sec(1) + d, Targets: []int{3}}}
	}
	if got := sessionEnded(st, pause(time.Second), 3); got != "" {
		t.Errorf("a pause as long as the session timeout: %q", got)
	}
	if got := sessionEnded(st, pause(time.Second+1), 3); got == "" {
		t.Errorf("a pause longer than the session timeout ends nothing")
	}
}

func TestInventoryStoriesAcrossInterleavedSales(t *testing.T) {
	// 0 and 1 both sell from 5, with 2's sale from 4 invoked between them.
	b := (&builder{}).seed(0, 5).sale(0, 1, 1.2, 5, 0).sale(2, 1.05, 1.3, 4, 0).sale(1, 1.1, 1.4, 5, 0).final(2, 3)
	r := NewInventory().Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "Processes 0 and 1 both read 5") {
		t.Fatalf("%v %+v", r.Valid, r.Anomalies)
	}
	r = NewInventory().Check(context.Background(), (&builder{}).seed(0, 5).sale(0, 1, 1.1, 5, 0).final(2, 2).build())
	if len(r.Anomalies) != 1 || !strings.Contains(r.Anomalies[0].Explanation, "the stock fell by 2 more than the recorded sales") {
		t.Fatalf("%+v", r.Anomalies)
	}
}

func TestGrantsStoppedNeedsLaterAttempts(t *testing.T) {
	// The last grant completes at 1 s; the only acquire after it is
	// invoked at that very instant and fails; the history ends at 20 s.
	// Nothing was tried after the grants stopped (0 holds the lock to the
	// end and runs its critical section last).
	b := (&builder{}).acquire(0, 0.5, 1, 0, "o0").acquireFail(1, 1, 19.9).cs(0, 19.95, 20, 0, 0)
	r := NewLiveness(Options{}).Check(context.Background(), b.build())
	if r.Valid != Valid || r.Error != "" {
		t.Fatalf("%v %q", r.Valid, r.Error)
	}
}

func TestDoubleHolderPauseStory(t *testing.T) {
	ctx := context.Background()
	// 0 holds the lock from 1 s and is paused from 2 s to 5 s, three
	// leases; 1 is granted it at 4 s. 0's client reports nothing of a
	// session, then (0.5 s after it lets go, within the grace) an error.
	b := (&builder{}).acquire(0, 0.9, 1, 0, "o0").acquire(1, 3.9, 4, 0, "o1").release(1, 4.5, 4.6, true, "o1").release(0, 6, 6.1, false, "o0")
	b.fault(history.FPause, 2, 5, 0)
	b.add(6.5, 0, history.Info, history.FEvent, "", &history.Value{Extra: &history.Extra{Detail: "lock lost"}})
	r := NewOverlap(Options{Lease: time.Second}).Check(ctx, b.build())
	if len(r.Anomalies) != 1 {
		t.Fatalf("%+v", r.Anomalies)
	}
	ex := r.Anomalies[0].Explanation
	for _, want := range []string{"was in force: its lease ran out while it was stopped.", `Process 0's lock client reported "lock lost" at 6.50 s.`} {
		if !strings.Contains(ex, want) {
			t.Errorf("explanation lacks %q:\n%s", want, ex)
		}
	}
}

func TestExerciseJudgesWithHistories(t *testing.T) {
	ctx := context.Background()
	judge := func(b *builder, f *fault, j func(*exerciseRun, *fault) string) string {
		a := newAnalysis(b.build())
		return j(&exerciseRun{a: a, holds: a.getHolds()}, f)
	}
	skew := func(from, to float64) *fault {
		return &fault{Fault: history.Fault{F: history.FSkew, Start: sec(from), End: sec(to), Targets: []int{1}}}
	}
	// 0 holds the lock from 2 s to 3 s; skewed 1 tries.
	held := func() *builder { return (&builder{}).acquire(0, 1.9, 2, 0, "o0").release(0, 3, 3.1, true, "o0") }
	const noTry = "saw no skewed worker try to take a lock another held"
	type judged struct {
		name string
		b    *builder
		f    *fault
		want string
	}
	judgeAll := func(prefix string, j func(*exerciseRun, *fault) string, tests []judged) {
		t.Helper()
		for _, tt := range tests {
			t.Run(prefix+tt.name, func(t *testing.T) {
				if got := judge(tt.b, tt.f, j); got != tt.want {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			})
		}
	}
	judgeAll("clock-client: ", judgeClockClient, []judged{
		{"the hold begins as the skew ends", held().acquireFail(1, 1.5, 2.5), skew(1, 2), ""},
		{"the hold ends as the skew begins", held().acquireFail(1, 2.5, 3.5), skew(3, 4), noTry},
		{"a skewed holder is no rival", (&builder{}).acquire(1, 1.9, 2, 0, "o1").release(1, 3, 3.1, true, "o1").acquireFail(1, 2.5, 2.8), skew(1, 4), noTry},
		{"the try ends as the hold begins", held().acquireFail(1, 1.5, 2), skew(1, 4), noTry},
		{"the try begins as the hold ends", held().acquireFail(1, 3, 3.5), skew(1, 4), noTry},
	})
	failover := func(start, done, end float64) *fault {
		return &fault{Fault: history.Fault{F: history.FFailover, Start: sec(start), End: sec(end), Targets: []int{0}},
			Done: sec(done), Hit: &history.Hit{Promoted: true}}
	}
	const noGrant = "promoted while no lock was held and the old master granted none"
	judgeAll("failover: ", judgeFailover, []judged{
		{"granted by the old master after the cut", (&builder{}).acquire(0, 1.9, 2, 0, "o0").release(0, 2.1, 2.2, true, "o0"), failover(1, 5, 6), ""},
		{"granted as the cut began", (&builder{}).acquire(0, 0.9, 1, 0, "o0").release(0, 1.1, 1.2, true, "o0"), failover(1, 5, 6), noGrant},
		{"granted as the failover ended", (&builder{}).acquire(0, 5.9, 6, 0, "o0").release(0, 6.1, 6.2, true, "o0"), failover(1, 5, 6), noGrant},
	})
	jump := &fault{Fault: history.Fault{F: history.FClockJump, Start: sec(2), End: sec(3)}}
	for _, tt := range []struct {
		name string
		b    *builder
		want string
	}{
		{"a rival tries during the jump", held().acquireFail(1, 2.2, 2.5), ""},
		{"the holder's own try is no rival", held().acquireFail(0, 2.5, 2.8).acquireFail(1, 3, 3.5), "saw no worker but process 0 try to take the lock"},
		{"a try that ended as the jump began", held().acquireFail(1, 1.5, 2), "saw no worker but process 0 try to take the lock"},
	} {
		t.Run("redlock jump: "+tt.name, func(t *testing.T) {
			if got := judge(tt.b, jump, judgeRedlockJump); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	sk := func(hit *history.Hit, targets ...int) *fault {
		return &fault{Fault: history.Fault{F: history.FSessionKill, Start: sec(2.5), End: sec(2.6), Targets: targets}, Invoked: sec(2.4), Hit: hit}
	}
	for _, tt := range []struct {
		name string
		f    *fault
		want string
	}{
		{"the nemesis saw a holder", sk(&history.Hit{Holder: true}), ""},
		{"the nemesis saw none", sk(&history.Hit{}), "ended the session of a worker that held no lock"},
		{"no target", sk(nil), "ended no worker's session"},
		{"the holder", sk(nil, 0), ""},
		{"another worker", sk(nil, 1), "ended the session of a worker that held no lock"},
	} {
		t.Run("session-kill: "+tt.name, func(t *testing.T) {
			if got := judge(held(), tt.f, judgeSessionKill); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	_ = ctx
}

func TestSessionKillAtTheLastWrite(t *testing.T) {
	f := []history.Fault{{F: history.FSessionKill, Start: sec(3), End: sec(3.1), Targets: []int{2}}}
	if s := aftermath(f, 2, sec(3)); !strings.HasPrefix(s, "Process 2's database session was terminated at 3.00 s") {
		t.Fatalf("%q", s)
	}
	if s := aftermath(f, 2, sec(2.9)); s != "" {
		t.Fatalf("%q", s)
	}
}
