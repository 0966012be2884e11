package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/services/sqldb"
)

// peerFake is a cluster of named servers whose pair cuts it only records:
// the links cut now and every cut and heal in order.
type peerFake struct {
	nodes []string
	mu    sync.Mutex
	cut   map[[2]string]bool
	log   []string // "cut a-b", "heal a-b"
}

func (f *peerFake) Setup(context.Context) error    { return nil }
func (f *peerFake) Teardown(context.Context) error { return nil }
func (f *peerFake) Nodes() []clusters.Node {
	var ns []clusters.Node
	for _, n := range f.nodes {
		ns = append(ns, clusters.Node{Name: n, Role: "lock"})
	}
	return ns
}
func (f *peerFake) PeerNodes() []string { return f.nodes }

func (f *peerFake) CutPeers(_ context.Context, _ string, pairs [][2]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range pairs {
		f.cut[p] = true
		f.log = append(f.log, "cut "+p[0]+"-"+p[1])
	}
	return nil
}

func (f *peerFake) HealPeers(_ context.Context, _ string, pairs [][2]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pairs == nil {
		for p := range f.cut {
			pairs = append(pairs, p)
		}
	}
	for _, p := range pairs {
		if f.cut[p] {
			delete(f.cut, p)
			f.log = append(f.log, "heal "+p[0]+"-"+p[1])
		}
	}
	return nil
}

func (f *peerFake) snapshot() (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.cut), slices.Clone(f.log)
}

func newPeerFake(n int) *peerFake {
	f := &peerFake{cut: make(map[[2]string]bool)}
	for i := 1; i <= n; i++ {
		f.nodes = append(f.nodes, fmt.Sprintf("s%d", i))
	}
	return f
}

// peerEnv is an Env over a cluster, with a lock held, a lease and a fault
// duration.
type peerEnv struct {
	c    clusters.Cluster
	span time.Duration
}

func (e peerEnv) Holders() []Target             { return []Target{{Process: 1, Key: "k0"}} }
func (e peerEnv) Workers() []Target             { return e.Holders() }
func (e peerEnv) Cluster() clusters.Cluster     { return e.c }
func (e peerEnv) Lease() time.Duration          { return 100 * time.Millisecond }
func (e peerEnv) FaultDuration() time.Duration  { return e.span }
func reachSet(self string, r []string) []string { return append([]string{self}, r...) }

// cliques returns the sets of nodes that reach exactly each other (each
// with itself), if reach splits nodes into cliques, else nil.
func cliques(nodes []string, r map[string][]string) [][]string {
	var out [][]string
	seen := make(map[string]bool)
	for _, a := range nodes {
		if seen[a] {
			continue
		}
		g := reachSet(a, r[a])
		for _, b := range r[a] {
			bg := reachSet(b, r[b])
			slices.Sort(bg)
			ag := slices.Clone(g)
			slices.Sort(ag)
			if !slices.Equal(ag, bg) {
				return nil
			}
		}
		for _, b := range g {
			seen[b] = true
		}
		out = append(out, g)
	}
	return out
}

// TestPeerShapes checks, for several cluster sizes and seeds, that each
// shape's plan has the reachability its name promises, and that a seed
// gives the same plan twice.
func TestPeerShapes(t *testing.T) {
	shapes := []struct {
		name  string
		least int
		shape peerShape
		check func(nodes []string, p peerPlan) error
	}{
		{"partition-majority", 3, majorityShape, func(nodes []string, p peerPlan) error {
			g := cliques(nodes, reach(nodes, p.Cuts))
			if len(g) != 2 {
				return fmt.Errorf("want two sides that reach only themselves, got %v", g)
			}
			small := min(len(g[0]), len(g[1]))
			if small < 1 || 2*small >= len(nodes) {
				return fmt.Errorf("sides %v: want a minority of 1 to (n-1)/2", g)
			}
			return nil
		}},
		{"partition-bridge", 3, bridgeShape, func(nodes []string, p peerPlan) error {
			r := reach(nodes, p.Cuts)
			var bridges, rest []string
			for _, a := range nodes {
				if len(r[a]) == len(nodes)-1 {
					bridges = append(bridges, a)
				} else {
					rest = append(rest, a)
				}
			}
			if len(bridges) != 1 {
				return fmt.Errorf("want one server that reaches all, got %v (%v)", bridges, r)
			}
			sub := make(map[string][]string)
			for _, a := range rest {
				sub[a] = slices.DeleteFunc(slices.Clone(r[a]), func(b string) bool { return b == bridges[0] })
			}
			g := cliques(rest, sub)
			if len(g) != 2 || len(g[0])-len(g[1]) > 1 || len(g[1])-len(g[0]) > 1 {
				return fmt.Errorf("want two halves that cannot reach each other, got %v", g)
			}
			return nil
		}},
		{"partition-ring", 4, ringShape, func(nodes []string, p peerPlan) error {
			r := reach(nodes, p.Cuts)
			if len(p.Cuts) == 0 {
				return errors.New("cuts nothing")
			}
			seen := make(map[string]string)
			for _, a := range nodes {
				m := reachSet(a, r[a])
				if 2*len(m) <= len(nodes) {
					return fmt.Errorf("%s sees %v, no majority", a, m)
				}
				slices.Sort(m)
				key := fmt.Sprint(m)
				if b, ok := seen[key]; ok {
					return fmt.Errorf("%s and %s see the same majority %v", a, b, m)
				}
				seen[key] = a
			}
			return nil
		}},
		{"swizzle", 2, swizzleShape, func(nodes []string, p peerPlan) error {
			want := min(len(nodes)*(len(nodes)-1)/2, maxSwizzleLinks)
			if len(p.Cuts) != want || len(p.Restores) != want {
				return fmt.Errorf("cuts %d, restores %d links, want %d", len(p.Cuts), len(p.Restores), want)
			}
			a, b := slices.Clone(p.Cuts), slices.Clone(p.Restores)
			cmp := func(x, y [2]string) int { return slices.Compare(x[:], y[:]) }
			slices.SortFunc(a, cmp)
			slices.SortFunc(b, cmp)
			if !slices.Equal(a, b) || len(slices.Compact(a)) != want {
				return fmt.Errorf("restores %v are not the distinct cuts %v", p.Restores, p.Cuts)
			}
			if want > 1 && slices.Equal(p.Cuts, p.Restores) {
				return errors.New("restores in the order it cut")
			}
			return nil
		}},
	}
	for _, s := range shapes {
		for _, n := range []int{2, 3, 4, 5, 6, 7, 9} {
			if n < s.least {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", s.name, n), func(t *testing.T) {
				nodes := newPeerFake(n).nodes
				for seed := uint64(1); seed <= 30; seed++ {
					plan := func() peerPlan {
						rng := rand.New(rand.NewPCG(seed, 1))
						return s.shape(rng, shuffled(rng, nodes))
					}
					p := plan()
					if err := s.check(nodes, p); err != nil {
						t.Fatalf("seed %d: %v (plan %+v)", seed, err, p)
					}
					if again := plan(); !slices.Equal(again.Cuts, p.Cuts) || !slices.Equal(again.Restores, p.Restores) {
						t.Fatalf("seed %d gave two plans: %v, %v", seed, p.Cuts, again.Cuts)
					}
				}
			})
		}
	}
}

// TestPeerShapesRefused: a cluster whose servers' links cannot be cut pair
// by pair (one Redis node, a database), and a ring of three (every server
// is every other's neighbour), are refused with ErrUnsupported.
func TestPeerShapesRefused(t *testing.T) {
	for _, tt := range []struct {
		kind string
		c    clusters.Cluster
	}{
		{"partition-majority", &redisnode.Redis{}},
		{"swizzle", &sqldb.DB{}},
		{"partition-ring", newPeerFake(3)},
		{"partition-bridge", newPeerFake(2)},
	} {
		k, err := findKind(tt.kind)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.New(peerEnv{c: tt.c}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, clusters.ErrUnsupported) {
			t.Errorf("%s on %T: got %v, want ErrUnsupported", tt.kind, tt.c, err)
		}
	}
}

// TestSwizzleSteps runs a swizzle over a fake cluster: its links go one at
// a time, in the order its start op records, then come back in the other
// order it records, all before the fault's span ends; the end op and Heal
// after it find nothing left to restore.
func TestSwizzleSteps(t *testing.T) {
	f := newPeerFake(5)
	k, _ := findKind("swizzle")
	n, err := k.New(peerEnv{c: f, span: 300 * time.Millisecond}, rand.New(rand.NewPCG(7, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: FPartitionServers})
	hit := history.HitOf(&start)
	if start.Error != "" || hit == nil || hit.Shape != "swizzle" || len(hit.Cuts) != 10 || len(hit.Restores) != 10 || hit.Holders != 1 || hit.Reach != nil {
		t.Fatalf("start op %+v, hit %+v", start, hit)
	}
	var want []string
	for _, p := range hit.Cuts {
		want = append(want, "cut "+p[0]+"-"+p[1])
	}
	for _, p := range hit.Restores {
		want = append(want, "heal "+p[0]+"-"+p[1])
	}
	deadline := time.Now().Add(10 * time.Second)
	var log []string
	for {
		_, log = f.snapshot()
		if len(log) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !slices.Equal(log, want) {
		t.Fatalf("steps\n%v\nwant\n%v", log, want)
	}
	end := n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: FHealServers})
	if eh := history.HitOf(&end); end.Error != "" || eh == nil || eh.Lasted <= 0 {
		t.Fatalf("end op %+v", end)
	}
	if err := n.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if cut, log := f.snapshot(); cut != 0 || len(log) != len(want) {
		t.Fatalf("after the end op: %d links cut, steps %v", cut, log)
	}
}

// TestServerPartitionHeals: a static shape cuts all its links on the start
// op, records them and who reaches whom, and the end op restores them all;
// Heal is idempotent.
func TestServerPartitionHeals(t *testing.T) {
	f := newPeerFake(5)
	k, _ := findKind("partition-bridge")
	n, err := k.New(peerEnv{c: f}, rand.New(rand.NewPCG(3, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: FPartitionServers})
	hit := history.HitOf(&start)
	if cut, _ := f.snapshot(); start.Error != "" || hit.Shape != "bridge" || cut != len(hit.Cuts) || cut != 4 || len(hit.Reach) != 5 || len(start.Value.Ext().Nodes) != 5 {
		t.Fatalf("start op %+v, hit %+v, %d links cut", start, hit, cut)
	}
	n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: FHealServers})
	for i := 0; i < 2; i++ {
		if err := n.Heal(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if cut, log := f.snapshot(); cut != 0 || len(log) != 8 {
		t.Fatalf("after heal: %d links cut, log %v", cut, log)
	}
}
