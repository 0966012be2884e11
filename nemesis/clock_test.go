package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// offsetLog records every offset each clock (a node, a clock file) is set
// to. The zero value is ready.
type offsetLog struct {
	mu  sync.Mutex
	set map[string][]time.Duration
}

func (l *offsetLog) add(clock string, off time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil {
		l.set = make(map[string][]time.Duration)
	}
	l.set[clock] = append(l.set[clock], off)
}

func (l *offsetLog) seen(clock string) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.set[clock]...)
}

// clockCluster is a Clocker that records every offset it is set to.
type clockCluster struct {
	offsetLog
	nodes []clusters.Node
}

func (c *clockCluster) Setup(context.Context) error    { return nil }
func (c *clockCluster) Teardown(context.Context) error { return nil }
func (c *clockCluster) Nodes() []clusters.Node         { return c.nodes }
func (c *clockCluster) SetClockOffset(_ context.Context, node string, off time.Duration) error {
	c.add(node, off)
	return nil
}

// clockEnv is an Env with a cluster and a lease.
type clockEnv struct {
	c     clusters.Cluster
	lease time.Duration
}

func (e clockEnv) Holders() []Target         { return []Target{{Process: 1, Key: "k"}} }
func (e clockEnv) Workers() []Target         { return nil }
func (e clockEnv) Cluster() clusters.Cluster { return e.c }
func (e clockEnv) Lease() time.Duration      { return e.lease }
func testLockNodes(names ...string) (out []clusters.Node) {
	for _, n := range names {
		out = append(out, clusters.Node{Name: n, Role: "lock"})
	}
	return append(out, clusters.Node{Name: "storage", Role: "storage"})
}

func TestClockJumpsAndPutsBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		back  bool
		nodes []string
		want  func(k int) time.Duration // offset after jump k
	}{
		{"forward steps", false, []string{"lock0"}, func(k int) time.Duration { return time.Duration(k+1) * 300 * time.Millisecond }},
		{"back and forth", true, []string{"lock0"}, func(k int) time.Duration {
			if k%2 == 0 {
				return -300 * time.Millisecond
			}
			return 0
		}},
		{"many nodes", false, []string{"lock0", "lock1", "lock2", "lock3", "lock4"}, func(k int) time.Duration { return time.Duration(k+1) * 300 * time.Millisecond }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clockCluster{nodes: testLockNodes(tc.nodes...)}
			n, err := newClock(clockEnv{c: c, lease: 100 * time.Millisecond}, rand.New(rand.NewPCG(1, 1)), tc.back)
			if err != nil {
				t.Fatal(err)
			}
			start, end := n.Fs()
			op := n.Invoke(context.Background(), history.Op{F: start})
			if op.Error != "" || op.Value == nil || len(op.Value.Ext().Nodes) != 1 {
				t.Fatalf("start op %s: want one node, no error", op)
			}
			node := op.Value.Ext().Nodes[0]
			if !strings.Contains(op.Value.Ext().Detail, "wall clock of "+node+" jumped 300 ms") {
				t.Errorf("detail %q", op.Value.Ext().Detail)
			}
			time.Sleep(180 * time.Millisecond) // 3 more jumps at 50 ms
			done := n.Invoke(context.Background(), history.Op{F: end})
			if done.Error != "" || done.Value == nil || len(done.Value.Ext().Nodes) != 1 || done.Value.Ext().Nodes[0] != node {
				t.Fatalf("end op %s: want node %s back", done, node)
			}
			got := c.seen(node)
			if len(got) < 3 || got[len(got)-1] != 0 {
				t.Fatalf("offsets of %s: %v: want at least two jumps, then 0", node, got)
			}
			for k, off := range got[:len(got)-1] {
				if off != tc.want(k) {
					t.Errorf("jump %d set %s, want %s (all: %v)", k, off, tc.want(k), got)
				}
			}
			if err := n.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
			time.Sleep(60 * time.Millisecond)
			if again := c.seen(node); len(again) != len(got) {
				t.Errorf("the clock kept jumping after the reset: %v", again)
			}
		})
	}
}

func TestClockNeedsClocker(t *testing.T) {
	_, err := newClockForward(clockEnv{c: &noClock{}}, rand.New(rand.NewPCG(1, 1)))
	if !errors.Is(err, clusters.ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported", err)
	}
}

type noClock struct{}

func (noClock) Setup(context.Context) error    { return nil }
func (noClock) Teardown(context.Context) error { return nil }
func (noClock) Nodes() []clusters.Node         { return nil }

// clientEnv is an Env with workers and client clocks it records.
type clientEnv struct {
	clockEnv
	workers []Target
	mu      sync.Mutex
	clocks  map[string]time.Duration
}

func (e *clientEnv) Workers() []Target { return e.workers }
func (e *clientEnv) SetClientClock(file string, off time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clocks[file] = off
	return nil
}

func TestClockClientSkewsNonHolders(t *testing.T) {
	ws := []Target{{Process: 0, Slot: 0, ClockFile: "w0"}, {Process: 11, Slot: 1, ClockFile: "w1", Key: "k0"}, {Process: 2, Slot: 2, ClockFile: "w2"}}
	for _, tc := range []struct {
		name     string
		workers  []Target
		skewed   int
		realOnes int
	}{
		{"holder keeps the real clock", ws, 2, 1},
		{"no holder: one keeps it", []Target{ws[0], ws[2], {Process: 3, Slot: 3, ClockFile: "w3"}}, 2, 1},
		// A design that takes no lock: every worker is inside its critical
		// section nearly all the time.
		{"every one holds: one keeps it", []Target{ws[1], {Process: 4, Slot: 4, ClockFile: "w4", Key: "k0"}, {Process: 5, Slot: 5, ClockFile: "w5", Key: "k0"}}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &clientEnv{clockEnv: clockEnv{lease: time.Second}, workers: tc.workers, clocks: map[string]time.Duration{}}
			n, err := newClockClient(env, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			op := n.Invoke(context.Background(), history.Op{F: history.FSkew})
			if op.Error != "" || len(op.Value.Ext().Targets) != tc.skewed {
				t.Fatalf("skew op %s: want %d targets", op, tc.skewed)
			}
			ahead := 0
			for _, w := range tc.workers {
				if off := env.clocks[w.ClockFile]; off == 3*time.Second {
					ahead++
					if w.Key != "" && !allHold(tc.workers) {
						t.Errorf("holder %d skewed", w.Process)
					}
				}
			}
			if ahead != tc.skewed || len(tc.workers)-ahead != tc.realOnes {
				t.Errorf("clocks %v: want %d 3 s ahead", env.clocks, tc.skewed)
			}
			op = n.Invoke(context.Background(), history.Op{F: history.FUnskew})
			if op.Error != "" || len(op.Value.Ext().Targets) != tc.skewed {
				t.Fatalf("unskew op %s", op)
			}
			for f, off := range env.clocks {
				if off != 0 {
					t.Errorf("clock %s left at %s", f, off)
				}
			}
		})
	}
	if _, err := newClockClient(clockEnv{}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, clusters.ErrUnsupported) {
		t.Errorf("an env without client clocks: %v", err)
	}
}

// allHold reports whether every worker of ws holds a lock.
func allHold(ws []Target) bool {
	for _, w := range ws {
		if w.Key == "" {
			return false
		}
	}
	return true
}

// TestSkewTargets: the non-holders are skewed; with no holder or all of
// them, all but one, whichever the random draw picks.
func TestSkewTargets(t *testing.T) {
	w := func(slot int, key string) Target { return Target{Process: slot, Slot: slot, Key: key} }
	for _, tc := range []struct {
		name        string
		ws          []Target
		wantSkew    int
		wantHolders int
		holderSkew  bool // a holder may be skewed
	}{
		{"one holder of three", []Target{w(0, ""), w(1, "k0"), w(2, "")}, 2, 1, false},
		{"two holders of four", []Target{w(0, "k0"), w(1, ""), w(2, "k1"), w(3, "")}, 2, 2, false},
		{"no holder", []Target{w(0, ""), w(1, ""), w(2, "")}, 2, 0, false},
		{"every one holds", []Target{w(0, "k0"), w(1, "k0"), w(2, "k0")}, 2, 3, true},
		{"two, both hold", []Target{w(0, "k0"), w(1, "k1")}, 1, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 20; seed++ {
				skew, holders := skewTargets(tc.ws, rand.New(rand.NewPCG(seed, 1)))
				if len(skew) != tc.wantSkew || holders != tc.wantHolders {
					t.Fatalf("seed %d: skewed %v, %d holders; want %d skewed, %d holders", seed, skew, holders, tc.wantSkew, tc.wantHolders)
				}
				for _, s := range skew {
					if s.Key != "" && !tc.holderSkew {
						t.Fatalf("seed %d: holder %d skewed while a worker holds none", seed, s.Process)
					}
				}
			}
		})
	}
}

// keyClockCluster is a clockCluster whose nodes' keys can be read.
type keyClockCluster struct {
	clockCluster
	keys map[string]map[string]string // node -> key -> value
}

func (c *keyClockCluster) NodeKeys(_ context.Context, node string) (map[string]string, error) {
	return c.keys[node], nil
}

// TestClockAimsAtTheHoldersNodes: a clock jump fired by a lock event on
// RedLock's five masters strikes a master that holds the aimed holder's
// key (with the value most of them hold, not a rival's leftover), and
// falls back to any master when there is no aim or the key is on none.
func TestClockAimsAtTheHoldersNodes(t *testing.T) {
	keys := map[string]map[string]string{
		"lock0": {"k": "a"}, "lock1": {}, "lock2": {"k": "b"}, "lock3": {"k": "a"}, "lock4": {"k": "a"},
	}
	aimAt := func(key string) context.Context {
		return WithAim(context.Background(), func() (Target, error) { return Target{Process: 1, Key: key}, nil })
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want map[string]bool // every pick must be one of these
		any  bool            // and over the seeds, a pick outside {lock0, lock3, lock4} is seen
	}{
		{"aimed at the holder of k", aimAt("k"), map[string]bool{"lock0": true, "lock3": true, "lock4": true}, false},
		{"no aim", context.Background(), nil, true},
		{"aimed at a key on no node", aimAt("none"), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outside := false
			for seed := uint64(1); seed <= 40; seed++ {
				c := &keyClockCluster{clockCluster: clockCluster{nodes: testLockNodes("lock0", "lock1", "lock2", "lock3", "lock4")}, keys: keys}
				n, err := newClock(clockEnv{c: c, lease: time.Second}, rand.New(rand.NewPCG(seed, seed)), false)
				if err != nil {
					t.Fatal(err)
				}
				node, err := n.(*Clock).pick(tc.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if tc.want != nil && !tc.want[node] {
					t.Fatalf("seed %d: jumped %s, want one of the holder's nodes %v", seed, node, tc.want)
				}
				if node != "lock0" && node != "lock3" && node != "lock4" {
					outside = true
				}
			}
			if tc.any && !outside {
				t.Errorf("40 seeds never picked lock1 or lock2: the pick is not random")
			}
		})
	}
}
