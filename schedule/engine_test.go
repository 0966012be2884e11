package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
)

// These tests drive the engine with hand-made ops on a real recorder, and a
// nemesis that strikes nothing: it notes whom each firing was aimed at.
// The engine on real servers is tested in runner (TestTriggeredPause).

// workers is an Env of three live workers, processes 0 to 2.
type workers struct{}

func (workers) Holders() []nemesis.Target { return nil }
func (workers) Workers() []nemesis.Target {
	return []nemesis.Target{{Process: 0, Slot: 0}, {Process: 1, Slot: 1}, {Process: 2, Slot: 2}}
}
func (workers) Cluster() clusters.Cluster { return fiveLockNodes{} }

// fiveLockNodes is a cluster of five lock nodes, as RedLock runs: only its
// node list is read.
type fiveLockNodes struct{ clusters.Cluster }

func (fiveLockNodes) Nodes() []clusters.Node {
	var ns []clusters.Node
	for i := range 5 {
		ns = append(ns, clusters.Node{Name: fmt.Sprintf("lock%d", i), Role: "lock"})
	}
	return append(ns, clusters.Node{Name: "sentinel0", Role: "sentinel"})
}

// noting is a nemesis that strikes nothing and notes its aims.
type noting struct {
	mu     sync.Mutex
	aims   []nemesis.Target // the aimed target of each start, Process -1 for none
	healed int
	struck chan struct{}
}

func (n *noting) Fs() (string, string) { return "note", "unnote" }
func (n *noting) Invoke(ctx context.Context, op history.Op) history.Op {
	op.Type = history.Info
	if op.F != "note" {
		return op
	}
	t := nemesis.Target{Process: -1}
	if aim, ok := nemesis.AimOf(ctx); ok {
		var err error
		if t, err = aim(); err != nil {
			op.Error = err.Error()
		}
	}
	n.mu.Lock()
	n.aims = append(n.aims, t)
	n.mu.Unlock()
	op.Value = &history.Value{Extra: &history.Extra{Hit: &history.Hit{Nemesis: "note", Key: t.Key}}}
	select {
	case n.struck <- struct{}{}:
	default:
	}
	return op
}
func (n *noting) Heal(context.Context) error { n.mu.Lock(); n.healed++; n.mu.Unlock(); return nil }

// engineRun is one engine on a fresh recorder with one noting nemesis per
// fault.
type engineRun struct {
	rec  *history.Recorder
	e    *Engine
	nems []*noting
	done chan error
}

func startEngine(t *testing.T, deadline time.Duration, specs ...string) *engineRun {
	t.Helper()
	var faults []Fault
	for _, s := range specs {
		f, err := parseFault(strings.Replace(s, "note@", "pause@", 1))
		if err != nil {
			t.Fatal(err)
		}
		f.Kind = "note"
		faults = append(faults, f)
	}
	er := &engineRun{rec: history.NewRecorder(nil), done: make(chan error, 1)}
	kinds := map[string]nemesis.Kind{"note": {Name: "note", New: func(nemesis.Env, *rand.Rand) (nemesis.Nemesis, error) {
		n := &noting{struck: make(chan struct{}, 16)}
		er.nems = append(er.nems, n)
		return n, nil
	}}}
	e, err := New(Config{Env: workers{}, Rec: er.rec, Kinds: kinds, Seed: 1, Lease: time.Second, Duration: 10 * time.Millisecond}, faults)
	if err != nil {
		t.Fatal(err)
	}
	er.e = e
	er.rec.Subscribe(e.Observe)
	start := er.rec.Now()
	go func() { er.done <- e.Run(context.Background(), start, time.Now().Add(deadline)) }()
	return er
}

// op records one op of process p.
func (er *engineRun) op(p int, typ history.Type, f, key string) history.Op {
	return er.rec.Record(history.Op{Process: p, Type: typ, F: f, Key: key})
}

// grant records p's acquire of key, invoked and granted.
func (er *engineRun) grant(p int, key string) history.Op {
	er.op(p, history.Invoke, history.FAcquire, key)
	return er.op(p, history.OK, history.FAcquire, key)
}

// release records p's release of key, invoked and done.
func (er *engineRun) release(p int, key string) history.Op {
	inv := er.op(p, history.Invoke, history.FRelease, key)
	er.op(p, history.OK, history.FRelease, key)
	return inv
}

// wait waits for nemesis i's next strike.
// event records process p's lone event (a worker's report) with detail.
func (er *engineRun) event(p int, detail string) history.Op {
	return er.rec.Record(history.Op{Process: p, Type: history.Info, F: history.FEvent,
		Value: &history.Value{Extra: &history.Extra{Detail: detail}}})
}

func (er *engineRun) wait(t *testing.T, i int) {
	t.Helper()
	select {
	case <-er.nems[i].struck:
	case <-time.After(10 * time.Second):
		t.Fatalf("fault %d did not fire", i)
	}
}

// finish waits for Run and returns what was applied.
func (er *engineRun) finish(t *testing.T) []Applied {
	t.Helper()
	select {
	case err := <-er.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	for i, n := range er.nems {
		if n.healed != 1 {
			t.Errorf("nemesis %d healed %d times, want 1", i, n.healed)
		}
	}
	return er.e.Applied()
}

func TestEngineGrantFiresAtItsHolder(t *testing.T) {
	er := startEngine(t, 5*time.Second, "note@grant+5ms:10ms")
	g := er.grant(1, "k")
	er.wait(t, 0)
	ap := er.finish(t)
	if len(ap) != 1 || len(ap[0].Fired) != 1 {
		t.Fatalf("applied %+v", ap)
	}
	f := ap[0].Fired[0]
	if f.Event != g.Index || f.EventF != EventGrant || f.Process != 1 || f.Key != "k" || f.Due != g.Time+5*time.Millisecond {
		t.Errorf("fired %+v; want event %d (grant of process 1 on k), due %s", f, g.Index, g.Time+5*time.Millisecond)
	}
	if f.InForce < f.Due || f.Late != f.InForce-f.Due-f.Waited || f.End <= f.Start || f.Ended < f.InForce {
		t.Errorf("fired %+v: in force before due, or its end before its start", f)
	}
	if a := er.nems[0].aims[0]; a.Process != 1 || a.Key != "k" {
		t.Errorf("aimed at %+v, want process 1 holding k", a)
	}
	h := er.rec.History()
	start := h[f.Start]
	hit := history.HitOf(&start)
	if hit == nil || hit.Trigger != "note@grant+5ms:10ms" && hit.Trigger != "pause@grant+5ms:10ms" || hit.Event != g.Index || hit.Due != f.Due || hit.Late != f.Late {
		t.Errorf("start op's hit %+v does not say what fired it", hit)
	}
	if ap[0].Unfired != "" {
		t.Errorf("unfired %q", ap[0].Unfired)
	}
	if d := start.Value.Ext().Detail; !strings.HasSuffix(d, fmt.Sprintf("(trigger note@grant+5ms:10ms: process 1's grant of k at op %d)", g.Index)) {
		t.Errorf("start op's detail %q does not say what fired it", d)
	}
}

func TestEngineCountsNthOfAProcess(t *testing.T) {
	er := startEngine(t, 5*time.Second, "note@grant/p2#2:10ms")
	er.grant(2, "k")
	er.release(2, "k")
	er.grant(1, "k") // another process's grant does not count
	er.release(1, "k")
	g := er.grant(2, "k")
	er.wait(t, 0)
	ap := er.finish(t)
	if f := ap[0].Fired; len(f) != 1 || f[0].Event != g.Index || f[0].Process != 2 {
		t.Errorf("fired %+v, want process 2's second grant (op %d)", f, g.Index)
	}
}

func TestEngineEvents(t *testing.T) {
	cases := []struct {
		name   string
		spec   string
		drive  func(er *engineRun) history.Op // returns the op that must fire it
		target int
		key    string
		due    func(ev history.Op, er *engineRun) time.Duration
	}{
		{name: "cs", spec: "note@cs:10ms", target: 0, key: "k", drive: func(er *engineRun) history.Op {
			er.grant(0, "k")
			return er.op(0, history.Invoke, history.FCS, "k")
		}},
		{name: "release", spec: "note@release:10ms", target: 0, key: "k", drive: func(er *engineRun) history.Op {
			er.grant(0, "k")
			er.op(0, history.Invoke, history.FCS, "k")
			er.op(0, history.OK, history.FCS, "k")
			return er.op(0, history.Invoke, history.FRelease, "k")
		}},
		{name: "acquire aims at the asker", spec: "note@acquire#3:10ms", target: 2, key: "", drive: func(er *engineRun) history.Op {
			er.grant(1, "k")                                // the first
			er.op(0, history.Invoke, history.FAcquire, "k") // the second: a rival's
			return er.op(2, history.Invoke, history.FAcquire, "j")
		}},
		{name: "rival aims at the holder", spec: "note@rival:10ms", target: 1, key: "k", drive: func(er *engineRun) history.Op {
			er.grant(1, "k")
			er.op(2, history.Invoke, history.FAcquire, "j") // another lock: no rival
			return er.op(0, history.Invoke, history.FAcquire, "k")
		}},
		{name: "queued aims at the waiter", spec: "note@queued:10ms", target: 0, key: "", drive: func(er *engineRun) history.Op {
			er.grant(1, "k")
			er.op(2, history.Invoke, history.FAcquire, "j") // another lock: nobody waits
			return er.op(0, history.Invoke, history.FAcquire, "k")
		}},
		{name: "queued behind a released lock is none", spec: "note@queued:10ms", target: 1, key: "", drive: func(er *engineRun) history.Op {
			er.grant(1, "k")
			er.release(1, "k")
			er.op(0, history.Invoke, history.FAcquire, "k") // k is free: nobody waits
			er.grant(2, "k")
			return er.op(1, history.Invoke, history.FAcquire, "k")
		}},
		{name: "rival of a released lock is none", spec: "note@rival:10ms", target: 2, key: "k", drive: func(er *engineRun) history.Op {
			er.grant(1, "k")
			er.release(1, "k")
			er.op(0, history.Invoke, history.FAcquire, "k") // k is free: no rival
			er.grant(2, "k")
			return er.op(1, history.Invoke, history.FAcquire, "k")
		}},
		{name: "server release aims at who held it", spec: "note@server-release:10ms", target: 1, key: "k", drive: func(er *engineRun) history.Op {
			serverRelease := func() history.Op {
				return er.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: history.FServerRelease, Key: "k"})
			}
			er.grant(2, "k")
			er.op(2, history.Invoke, history.FRelease, "k")
			serverRelease() // the holder's own release: no event
			er.op(2, history.OK, history.FRelease, "k")
			serverRelease() // no holder: no event
			er.grant(1, "k")
			return serverRelease()
		}},
		{name: "majority-grant is a grant on just a majority of the lock nodes", spec: "note@majority-grant:10ms", target: 2, key: "k", drive: func(er *engineRun) history.Op {
			granted := func(p int, nodes ...string) history.Op {
				er.op(p, history.Invoke, history.FAcquire, "k")
				return er.rec.Record(history.Op{Process: p, Type: history.OK, F: history.FAcquire, Key: "k",
					Value: &history.Value{Extra: &history.Extra{Nodes: nodes}}})
			}
			er.grant(0, "k") // no nodes named: none
			er.release(0, "k")
			granted(1, "lock0", "lock1", "lock2", "lock3") // four of five: one to spare
			er.release(1, "k")
			granted(0, "lock0", "lock1") // two of five cannot be a grant, nor is it a majority
			er.release(0, "k")
			return granted(2, "lock0", "lock2", "lock4")
		}},
		{name: "failpoint is a worker's report of one", spec: "note@failpoint:10ms", target: 2, key: "", drive: func(er *engineRun) history.Op {
			er.event(1, "session expired") // another event: none
			er.op(2, history.Invoke, history.FAcquire, "k")
			return er.event(2, "failpoint setnx-expire: between SETNX and PEXPIRE of k (the key has no TTL yet)")
		}},
		{name: "write is a holder's report of its write sent", spec: "note@write:10ms", target: 1, key: "k", drive: func(er *engineRun) history.Op {
			er.grant(0, "j")
			er.event(0, "renewal sent: j (owner a)") // a renewal: not a write
			er.grant(1, "k")
			er.op(1, history.Invoke, history.FCS, "k")
			return er.event(1, "write sent: k (token 3)")
		}},
		{name: "renewal is a worker's report of a renewal", spec: "note@renewal/p2:10ms", target: 2, key: "k", drive: func(er *engineRun) history.Op {
			er.grant(1, "j")
			er.event(1, "renewal sent: j (owner a)")                              // another process's
			er.event(2, "write sent: k (token 3)")                                // a write: not a renewal
			er.event(2, "renewal of k refused: the key no longer has revision 3") // NATS's refusal: no renewal
			er.event(2, "renewal sent: lease 0x1f kept alive (TTL 2 s)")          // holding nothing: none
			er.grant(2, "k")
			return er.event(2, "renewal sent: lease 0x1f kept alive (TTL 2 s)")
		}},
		{name: "promotion aims at a holder left with the old master", spec: "note@promotion:10ms", target: 2, key: "j", drive: func(er *engineRun) history.Op {
			failover := func(promoted bool) history.Op {
				er.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: "failover"})
				return er.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: "failover",
					Value: &history.Value{Extra: &history.Extra{Targets: []int{0, 2}, Hit: &history.Hit{Promoted: promoted}}}})
			}
			er.grant(1, "k")
			er.grant(2, "j")
			failover(false) // no promotion: none
			return failover(true)
		}},
		{name: "lease-left counts from the acquire's invocation", spec: "note@lease-left<200ms:10ms", target: 1, key: "k", drive: func(er *engineRun) history.Op {
			return er.grant(1, "k")
		}, due: func(ev history.Op, er *engineRun) time.Duration {
			return er.rec.History()[ev.Index-1].Time + 800*time.Millisecond
		}},
		{name: "a crash ends the hold", spec: "note@rival:10ms", target: 2, key: "k", drive: func(er *engineRun) history.Op {
			er.grant(1, "k")
			er.op(1, history.Invoke, history.FCrash, "k")
			er.op(1, history.Info, history.FCrash, "k")
			er.op(0, history.Invoke, history.FAcquire, "k") // k's holder is gone: no rival
			er.grant(2, "k")
			return er.op(0, history.Invoke, history.FAcquire, "k")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			er := startEngine(t, 5*time.Second, c.spec)
			ev := c.drive(er)
			er.wait(t, 0)
			ap := er.finish(t)
			f := ap[0].Fired
			if len(f) != 1 || f[0].Event != ev.Index || f[0].Process != c.target || f[0].Key != ev.Key {
				t.Fatalf("fired %+v, want op %d aimed at process %d", f, ev.Index, c.target)
			}
			want := ev.Time
			if c.due != nil {
				want = c.due(ev, er)
			}
			if f[0].Due != want {
				t.Errorf("due %s, want %s", f[0].Due, want)
			}
			if a := er.nems[0].aims[0]; a.Process != c.target || a.Key != c.key {
				t.Errorf("aimed at %+v, want process %d holding %q", a, c.target, c.key)
			}
		})
	}
}

func TestEngineRepeatsAndCountsBusy(t *testing.T) {
	er := startEngine(t, 10*time.Second, "note@grant:300ms*2")
	er.grant(0, "k")
	er.wait(t, 0)
	er.release(0, "k")
	er.grant(1, "k") // while the first firing is in force: busy, fires nothing
	er.release(1, "k")
	// Wait for the first firing to end before the next grant.
	for deadline := time.Now().Add(10 * time.Second); len(er.e.Applied()[0].Fired) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("first firing did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	g := er.grant(2, "k")
	er.wait(t, 0)
	ap := er.finish(t)
	f := ap[0].Fired
	if len(f) != 2 || f[1].Event != g.Index || f[1].Process != 2 || ap[0].Busy != 1 {
		t.Errorf("applied %+v: want two firings, the second at op %d, and one busy event", ap[0], g.Index)
	}
}

func TestEngineTimeTrigger(t *testing.T) {
	er := startEngine(t, 5*time.Second, "note@at+20ms:10ms*2")
	ap := er.finish(t)
	f := ap[0].Fired
	if len(f) != 2 {
		t.Fatalf("fired %+v, want two", f)
	}
	for i, x := range f {
		if x.Event != -1 || x.Process != -1 || x.EventF != EventAt {
			t.Errorf("firing %d: %+v, want a time trigger aimed at no one", i, x)
		}
	}
	if f[0].Due < 20*time.Millisecond {
		t.Errorf("first due %s, want 20ms from the start", f[0].Due)
	}
	if f[1].Due < f[0].Ended+20*time.Millisecond {
		t.Errorf("second due %s, want 20ms after the first ended (%s)", f[1].Due, f[0].Ended)
	}
	if a := er.nems[0].aims; a[0].Process != -1 {
		t.Errorf("a time trigger was aimed: %+v", a)
	}
}

func TestEngineUnfired(t *testing.T) {
	cases := []struct{ spec, says string }{
		{"note@grant:10ms", "did not come"},
		{"note@at+10ms:1h", "too late"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			er := startEngine(t, 200*time.Millisecond, c.spec)
			ap := er.finish(t)
			if len(ap[0].Fired) != 0 || !strings.Contains(ap[0].Unfired, c.says) {
				t.Errorf("applied %+v, want none fired and unfired saying %q", ap[0], c.says)
			}
		})
	}
}

func TestEngineAimAtARetiredProcess(t *testing.T) {
	er := startEngine(t, 5*time.Second, "note@grant+1ms:10ms")
	er.grant(7, "k") // process 7 has no live worker
	er.wait(t, 0)
	ap := er.finish(t)
	if f := ap[0].Fired; len(f) != 1 || !strings.Contains(f[0].Error, "process 7") {
		t.Errorf("fired %+v, want an error naming process 7", f)
	}
	if Lates(ap) != nil {
		t.Errorf("a firing that failed counts in Lates: %v", Lates(ap))
	}
}

func TestQuantile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	cases := []struct {
		ds   []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ms(3), 0.99, 3 * time.Millisecond},
		{ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		{ms(4, 1, 3, 2), 1, 4 * time.Millisecond},
		{ms(4, 1, 3, 2), 0, time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.99, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9 * time.Millisecond},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := Quantile(c.ds, c.q); got != c.want {
				t.Errorf("Quantile(%v, %v) = %s, want %s", c.ds, c.q, got, c.want)
			}
		})
	}
}

// TestEngineStrikesBeforeTheRequestLeaves: a fault due at a worker's
// invocation (no offset) is in force before Observe returns, that is before
// the controller sends the request: its start op comes right after the
// invocation, before anything else the worker's goroutine records.
func TestEngineStrikesBeforeTheRequestLeaves(t *testing.T) {
	er := startEngine(t, 5*time.Second, "note@release:10ms")
	for deadline := time.Now().Add(5 * time.Second); ; {
		er.e.mu.Lock()
		running := er.e.ctx != nil
		er.e.mu.Unlock()
		if running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
	er.grant(0, "k")
	rel := er.op(0, history.Invoke, history.FRelease, "k")
	h := er.rec.History()
	if len(h) < rel.Index+3 || h[rel.Index+1].F != "note" || h[rel.Index+1].Type != history.Invoke || h[rel.Index+2].F != "note" || h[rel.Index+2].Type != history.Info {
		t.Fatalf("after the release's invocation (op %d): %+v; want the fault's start at once", rel.Index, h[rel.Index+1:])
	}
	er.wait(t, 0)
	ap := er.finish(t)
	if f := ap[0].Fired; len(f) != 1 || f[0].Event != rel.Index || f[0].Start != rel.Index+2 || f[0].Process != 0 {
		t.Errorf("release fault fired %+v", f)
	}
}

// BenchmarkObserve is the trigger engine's cost on the record path: four
// faults armed on every kind of worker event, none of which fires, and a
// stream of ten processes' acquire, critical section and release ops. One
// op is one Observe call.
func BenchmarkObserve(b *testing.B) {
	var faults []Fault
	for _, s := range []string{"pause@grant#1000000", "partition@cs#1000000", "pause@release#1000000", "pause@rival#1000000"} {
		f, err := ParseFault(s)
		if err != nil {
			b.Fatal(err)
		}
		faults = append(faults, f)
	}
	kinds := map[string]nemesis.Kind{}
	for _, k := range []string{"pause", "partition"} {
		kinds[k] = nemesis.Kind{Name: k, New: func(nemesis.Env, *rand.Rand) (nemesis.Nemesis, error) { return &noting{}, nil }}
	}
	e, err := New(Config{Env: workers{}, Rec: history.NewRecorder(nil), Kinds: kinds, Seed: 1, Lease: time.Second}, faults)
	if err != nil {
		b.Fatal(err)
	}
	cycle := []struct {
		typ history.Type
		f   string
	}{{history.Invoke, history.FAcquire}, {history.OK, history.FAcquire}, {history.Invoke, history.FCS}, {history.OK, history.FCS},
		{history.Invoke, history.FRelease}, {history.OK, history.FRelease}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := cycle[i%len(cycle)]
		e.Observe(history.Op{Index: i, Time: time.Duration(i), Process: (i / len(cycle)) % 10, Type: c.typ, F: c.f, Key: "k0"})
	}
}

// preparing is a noting nemesis that must be prepared before each firing.
type preparing struct {
	*noting
	prepared chan struct{} // one value per Prepare call
	release  chan struct{} // Prepare returns once it gets one
}

func (p *preparing) Prepare(ctx context.Context) error {
	p.prepared <- struct{}{}
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestEnginePreparesBeforeItFires: a nemesis.Preparer is prepared before
// its event may fire it, and again before each repeat; an event that comes
// while it is being prepared fires nothing.
func TestEnginePreparesBeforeItFires(t *testing.T) {
	f, err := parseFault("pause@grant:10ms*2")
	if err != nil {
		t.Fatal(err)
	}
	rec := history.NewRecorder(nil)
	p := &preparing{noting: &noting{struck: make(chan struct{}, 4)}, prepared: make(chan struct{}, 4), release: make(chan struct{})}
	kinds := map[string]nemesis.Kind{"pause": {Name: "pause", New: func(nemesis.Env, *rand.Rand) (nemesis.Nemesis, error) { return p, nil }}}
	e, err := New(Config{Env: workers{}, Rec: rec, Kinds: kinds, Seed: 1, Lease: time.Second, Duration: 10 * time.Millisecond}, []Fault{f})
	if err != nil {
		t.Fatal(err)
	}
	rec.Subscribe(e.Observe)
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background(), 0, time.Now().Add(10*time.Second)) }()
	grant := func(proc int) history.Op {
		rec.Record(history.Op{Process: proc, Type: history.Invoke, F: history.FAcquire, Key: "k"})
		g := rec.Record(history.Op{Process: proc, Type: history.OK, F: history.FAcquire, Key: "k"})
		rec.Record(history.Op{Process: proc, Type: history.Invoke, F: history.FRelease, Key: "k"})
		rec.Record(history.Op{Process: proc, Type: history.OK, F: history.FRelease, Key: "k"})
		return g
	}
	wait := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not come", what)
		}
	}
	wait(p.prepared, "the first Prepare")
	grant(0) // while it is being prepared: fires nothing
	p.release <- struct{}{}
	var first history.Op
	for deadline := time.Now().Add(10 * time.Second); ; {
		e.mu.Lock()
		ready := e.faults[0].ready
		e.mu.Unlock()
		if ready {
			first = grant(1)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready after Prepare returned")
		}
		time.Sleep(time.Millisecond)
	}
	wait(p.struck, "the first firing")
	wait(p.prepared, "the second Prepare")
	p.release <- struct{}{}
	for deadline := time.Now().Add(10 * time.Second); len(p.aims) < 2; {
		e.mu.Lock()
		ready := e.faults[0].ready
		e.mu.Unlock()
		if ready {
			grant(2)
			wait(p.struck, "the second firing")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready again")
		}
		time.Sleep(time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ap := e.Applied()
	if fs := ap[0].Fired; len(fs) != 2 || fs[0].Event != first.Index || fs[0].Process != 1 || fs[1].Process != 2 {
		t.Errorf("fired %+v: want process 1's grant (op %d), then process 2's; not process 0's", fs, first.Index)
	}
}
