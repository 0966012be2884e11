package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// fakeRedlock is five lock nodes and a storage node that record every
// partition, heal and clock change, in order.
type fakeRedlock struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeRedlock) Setup(context.Context) error    { return nil }
func (f *fakeRedlock) Teardown(context.Context) error { return nil }
func (f *fakeRedlock) Nodes() []clusters.Node {
	var ns []clusters.Node
	for i := 0; i < 5; i++ {
		ns = append(ns, clusters.Node{Name: fmt.Sprintf("lock%d", i), Role: "lock"})
	}
	return append(ns, clusters.Node{Name: "storage", Role: "storage"})
}

func (f *fakeRedlock) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeRedlock) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeRedlock) PartitionNodes(_ context.Context, slot int, nodes []string) error {
	f.record(fmt.Sprintf("cut %d %s", slot, strings.Join(nodes, ",")))
	return nil
}

func (f *fakeRedlock) Heal(_ context.Context, slot int) error {
	f.record(fmt.Sprintf("heal %d", slot))
	return nil
}

func (f *fakeRedlock) SetClockOffset(_ context.Context, node string, off time.Duration) error {
	f.record(fmt.Sprintf("clock %s %s", node, off))
	return nil
}

// noClocker is the same cluster without the Clocker capability, as the
// Redis cluster was before the clock shim.
type noClocker struct{ clusters.Cluster }

// fakeEnv has four live workers; holders is what Holders returns once the
// cluster has cut someone off.
type fakeEnv struct {
	c       clusters.Cluster
	f       *fakeRedlock
	holders func(cut []string) []Target
}

func (e *fakeEnv) Cluster() clusters.Cluster { return e.c }
func (e *fakeEnv) Workers() []Target {
	var ts []Target
	for s := 0; s < 4; s++ {
		ts = append(ts, Target{Process: 10 + s, Slot: s})
	}
	return ts
}
func (e *fakeEnv) Holders() []Target { return e.holders(e.f.log()) }

// cutSlots returns the slots a call log cut off from lock3 and lock4
// (client 1's side).
func cutSlots(calls []string) map[int]bool {
	out := make(map[int]bool)
	for _, c := range calls {
		var s int
		var nodes string
		if _, err := fmt.Sscanf(c, "cut %d %s", &s, &nodes); err == nil && nodes == "lock3,lock4" {
			out[s] = true
		}
	}
	return out
}

func TestRedlockClockJumpTimeline(t *testing.T) {
	f := &fakeRedlock{}
	env := &fakeEnv{c: f, f: f}
	// A worker of client 1's side holds the lock from the third poll on;
	// healedAt is the poll count when client 2 was first healed.
	polls, healedAt := 0, 0
	env.holders = func(calls []string) []Target {
		polls++
		for _, c := range calls {
			if strings.HasPrefix(c, "heal ") && healedAt == 0 {
				healedAt = polls
			}
		}
		if polls < 3 {
			return nil
		}
		cut := cutSlots(calls)
		for s := 0; s < 4; s++ {
			if cut[s] {
				return []Target{{Process: 10 + s, Slot: s, Key: "k0"}}
			}
		}
		return nil
	}
	n, err := newRedlockClockJump(env, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	op := n.Invoke(ctx, history.Op{F: history.FClockJump})
	if op.Error != "" || op.Type != history.Info {
		t.Fatalf("clock-jump: %+v", op)
	}
	calls := f.log()
	if len(calls) != 7 || calls[6] != "clock lock2 1m0s" {
		t.Fatalf("calls %q: want the four slots cut, client 2 given lock2 back, then lock2's clock jumped", calls)
	}
	for _, c := range calls[:3] {
		if !strings.HasPrefix(c, "cut ") || !strings.HasSuffix(c, " lock3,lock4") {
			t.Errorf("%q: client 1's side must be cut off from exactly lock3 and lock4", c)
		}
	}
	var other int
	if _, err := fmt.Sscanf(calls[3], "cut %d lock0,lock1,lock2", &other); err != nil {
		t.Fatalf("%q: client 2 must be cut off from exactly lock0..lock2 until client 1 holds the lock", calls[3])
	}
	if calls[4] != fmt.Sprintf("heal %d", other) || calls[5] != fmt.Sprintf("cut %d lock0,lock1", other) {
		t.Errorf("calls %q: client 2 (slot %d) must be given lock2 back, then cut off from exactly lock0 and lock1", calls[4:6], other)
	}
	if healedAt < 3 {
		t.Errorf("client 2 reached lock2 again after %d polls, before a cut-off worker held the lock", healedAt)
	}
	if strings.Join(op.Value.Ext().Nodes, ",") != "lock2" || !strings.Contains(op.Value.Ext().Detail, "lock2's wall clock jumped 1m0s forward") ||
		!strings.Contains(op.Value.Ext().Detail, "cut off from lock3 and lock4") || !strings.Contains(op.Value.Ext().Detail, "reached lock2 again") {
		t.Errorf("value %+v", op.Value)
	}

	end := n.Invoke(ctx, history.Op{F: history.FClockReset})
	calls = f.log()[7:]
	if end.Error != "" || len(calls) != 5 || calls[0] != "clock lock2 0s" || !strings.HasPrefix(calls[1], "heal ") {
		t.Fatalf("clock-reset: %+v, calls %q: want the clock back, then the four slots healed", end, calls)
	}
	if err := n.Heal(ctx); err != nil || len(f.log()) != 12 {
		t.Errorf("heal after reset: %v, calls %q: want nothing left to undo", err, f.log())
	}
	if _, ok := history.EndOf(history.FClockJump); !ok {
		t.Error("clock-jump does not start a fault in the history")
	}
}

// A slot that already held a lock when it was cut may hold it on all five
// nodes: it counts only after it has been seen without it. Slots 0 and 1
// hold two keys; the nemesis makes one of them client 2 and puts the other
// on client 1's side, where its grant is stale.
func TestRedlockClockJumpIgnoresEarlierGrant(t *testing.T) {
	f := &fakeRedlock{}
	polls := 0
	env := &fakeEnv{c: f, f: f, holders: func([]string) []Target {
		polls++
		if polls <= 4 || polls >= 7 { // both hold, let go at poll 5, hold again
			return []Target{{Process: 10, Slot: 0, Key: "k0"}, {Process: 11, Slot: 1, Key: "k1"}}
		}
		return nil
	}}
	n, err := newRedlockClockJump(env, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	n.(*RedlockClockJump).wait = 200 * time.Millisecond
	op := n.Invoke(context.Background(), history.Op{F: history.FClockJump})
	cut := cutSlots(f.log())
	if !cut[0] == !cut[1] {
		t.Fatalf("calls %q: want exactly one of the holders on client 1's side", f.log())
	}
	if op.Error != "" || polls < 7 {
		t.Fatalf("op %+v after %d polls: want the jump only once the holder was granted again (poll 7)", op, polls)
	}
}

func TestRedlockClockJumpNoHolder(t *testing.T) {
	f := &fakeRedlock{}
	env := &fakeEnv{c: f, f: f, holders: func([]string) []Target { return nil }}
	n, err := newRedlockClockJump(env, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	n.(*RedlockClockJump).wait = 20 * time.Millisecond
	op := n.Invoke(context.Background(), history.Op{F: history.FClockJump})
	if !strings.Contains(op.Error, "no cut-off worker held a lock") {
		t.Fatalf("error %q", op.Error)
	}
	calls := f.log()
	for _, c := range calls {
		if strings.HasPrefix(c, "clock lock2 1m") {
			t.Fatalf("jumped the clock with no holder: %q", calls)
		}
	}
	if heals := strings.Count(strings.Join(calls, ";"), "heal "); heals != 4 {
		t.Errorf("calls %q: a failed start must heal the four slots it cut", calls)
	}
	if h := (history.History{
		{Index: 0, Process: -1, Type: history.Invoke, F: history.FClockJump},
		{Index: 1, Process: -1, Type: history.Info, F: history.FClockJump, Error: op.Error},
	}).Faults(); len(h) != 0 {
		t.Errorf("a failed start is a fault: %+v", h)
	}
}

func TestRedlockClockJumpNeedsClocker(t *testing.T) {
	f := &fakeRedlock{}
	env := &fakeEnv{c: noClocker{f}, f: f}
	_, err := newRedlockClockJump(env, rand.New(rand.NewPCG(1, 2)))
	if !errors.Is(err, clusters.ErrUnsupported) || !strings.Contains(err.Error(), "Clocker") {
		t.Fatalf("error %v: want a clear unsupported error naming clusters.Clocker", err)
	}
}
