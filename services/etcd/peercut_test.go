package etcd_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/services/etcd"
)

func pairKey(a, b string) [2]string { return [2]string{min(a, b), max(a, b)} }

func within(d time.Duration) (context.Context, func()) {
	return context.WithTimeout(context.Background(), d)
}

// peerTalks sends one HTTP request over the peer link that carries from's
// connections to to (etcd's peer port answers /version): nil when an
// answer came back, the error when the link refused or hung.
func peerTalks(t *testing.T, c clusters.Cluster, from, to string) error {
	t.Helper()
	addrs, err := clustertest.PeerLinkAddrs(c, from, to)
	if err != nil {
		t.Error(err)
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get("http://" + addrs[0] + "/version")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// cutNow returns the pairs of servers whose peer link (from the first of
// the pair, in nodes' order, to the second) carries no traffic, trying
// them all at once: a poll must fit between two steps of a swizzle.
func cutNow(t *testing.T, c clusters.Cluster, nodes []string) map[[2]string]bool {
	var mu sync.Mutex
	var wg sync.WaitGroup
	cut := make(map[[2]string]bool)
	for i, a := range nodes {
		for _, b := range nodes[i+1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if peerTalks(t, c, a, b) != nil {
					mu.Lock()
					cut[pairKey(a, b)] = true
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return cut
}

// checkMatrix checks every peer link, both ways, against reach: a link
// carries traffic exactly when its far end is in the near end's reach.
func checkMatrix(t *testing.T, c clusters.Cluster, nodes []string, reach map[string][]string) {
	t.Helper()
	for _, a := range nodes {
		for _, b := range nodes {
			if a == b {
				continue
			}
			want := reach == nil || slices.Contains(reach[a], b)
			if err := peerTalks(t, c, a, b); (err == nil) != want {
				t.Errorf("link %s -> %s: talks %v (%v), want %v", a, b, err == nil, err, want)
			}
		}
	}
}

// etcdAt returns a client of the etcd members named, through worker slot
// 0's proxies.
func etcdAt(t *testing.T, e *etcd.Cluster, nodes, names []string) *clientv3.Client {
	t.Helper()
	var eps []string
	addrs := e.LockAddrs(0)
	for i, n := range nodes {
		if slices.Contains(names, n) {
			eps = append(eps, addrs[i])
		}
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writes waits up to wait until a put through c succeeds.
func writes(c *clientv3.Client, wait time.Duration) error {
	return clusters.Poll(context.Background(), wait, func() error {
		ctx, cancel := within(3 * time.Second)
		defer cancel()
		_, err := c.Put(ctx, "/shape-probe", time.Now().String())
		return err
	}, "a put")
}

// refuses waits up to wait until a linearizable read through c fails.
func refuses(c *clientv3.Client, wait time.Duration) error {
	return clusters.Poll(context.Background(), wait, func() error {
		ctx, cancel := within(2 * time.Second)
		defer cancel()
		if _, err := c.Get(ctx, "/shape-probe"); err == nil {
			return fmt.Errorf("a linearizable read still answered")
		}
		return nil
	}, "the minority's refusal")
}

// TestPartitionShapesEtcd runs each partition shape between servers on a
// five-member etcd cluster and checks, with real traffic over every peer
// link both ways, that the links talk exactly as the shape says (its start
// op's Reach); that under partition-majority the links stay so when
// another fault isolates a server of the minority and lets go, the
// majority side still takes writes and the minority side no longer serves
// a linearizable read; that the end op restores every link and the former minority
// writes again; and that a swizzle's links go one at a time, in the order
// its start op records, and come back in the other order it records.
func TestPartitionShapesEtcd(t *testing.T) {
	e := clustertest.Started(t, etcd.Look, etcd.New(etcd.Config{Members: 5, Workers: 1, LogDir: clustertest.LogDir(t)}))
	ctx := context.Background()
	nodes := e.PeerNodes()
	all := etcdAt(t, e, nodes, nodes)
	defer all.Close()
	if err := writes(all, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, e, nodes, nil)

	for i, kind := range []string{"partition-majority", "partition-bridge", "partition-ring"} {
		t.Run(kind, func(t *testing.T) {
			n, hit := clustertest.Strike(t, kind, clustertest.Env{C: e}, uint64(i+1))
			if len(hit.Reach) != len(nodes) || len(hit.Cuts) == 0 {
				t.Fatalf("hit %+v", hit)
			}
			checkMatrix(t, e, nodes, hit.Reach)
			if kind == "partition-majority" {
				var minority, majority []string
				for _, a := range nodes {
					if 2*(len(hit.Reach[a])+1) > len(nodes) {
						majority = append(majority, a)
					} else {
						minority = append(minority, a)
					}
				}
				// Another fault that cuts the same links (partition-leader's
				// Isolate) and lets go of them leaves them cut: they come
				// back only when the last fault that cut them ends.
				if err := e.Isolate(ctx, minority[0]); err != nil {
					t.Fatal(err)
				}
				if err := e.Rejoin(ctx, minority[0]); err != nil {
					t.Fatal(err)
				}
				checkMatrix(t, e, nodes, hit.Reach)
				maj, minor := etcdAt(t, e, nodes, majority), etcdAt(t, e, nodes, minority)
				defer maj.Close()
				defer minor.Close()
				if err := writes(maj, 30*time.Second); err != nil {
					t.Errorf("majority %v: %v", majority, err)
				}
				if err := refuses(minor, 20*time.Second); err != nil {
					t.Errorf("minority %v: %v", minority, err)
				}
				end := n.Invoke(ctx, clustertest.NemOp(nemesis.FHealServers))
				if end.Error != "" {
					t.Fatalf("end op %+v", end)
				}
				if err := writes(minor, 30*time.Second); err != nil {
					t.Errorf("minority %v after the heal: %v", minority, err)
				}
			} else {
				// Raft keeps no promise of progress under a bridge or a
				// ring: the servers that lose the leader call elections.
				// Say what happened.
				err := writes(all, 5*time.Second)
				t.Logf("a put under the %s: %v", hit.Shape, err)
				if end := n.Invoke(ctx, clustertest.NemOp(nemesis.FHealServers)); end.Error != "" {
					t.Fatalf("end op %+v", end)
				}
			}
			checkMatrix(t, e, nodes, nil)
			if err := n.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if err := writes(all, 30*time.Second); err != nil {
				t.Fatalf("after the heal: %v", err)
			}
		})
	}

	t.Run("swizzle", func(t *testing.T) {
		n, hit := clustertest.Strike(t, "swizzle", clustertest.Env{C: e, Span: 12 * time.Second}, 4)
		if len(hit.Cuts) != 10 || len(hit.Restores) != 10 {
			t.Fatalf("hit %+v", hit)
		}
		// states[k] is what is cut after step k: the first k cuts, then
		// all but the first restores.
		var states []map[[2]string]bool
		for k := 0; k <= 2*len(hit.Cuts); k++ {
			s := make(map[[2]string]bool)
			for i, p := range hit.Cuts {
				if i < k {
					s[pairKey(p[0], p[1])] = true
				}
			}
			for r, p := range hit.Restores {
				if r < k-len(hit.Cuts) {
					delete(s, pairKey(p[0], p[1]))
				}
			}
			states = append(states, s)
		}
		// A poll that falls across a step may see neither state; the
		// states it sees must come in order, and some must be part way
		// through the cuts and part way through the restores.
		at, between := 0, 0
		var seq []int
		deadline := time.Now().Add(40 * time.Second)
		for at < len(states)-1 && time.Now().Before(deadline) {
			now := cutNow(t, e, nodes)
			same := func(s map[[2]string]bool) bool { return maps.Equal(s, now) }
			if k := slices.IndexFunc(states[at:], same); k >= 0 {
				at += k
				seq = append(seq, at)
			} else if k := slices.IndexFunc(states[:at], same); k >= 0 {
				t.Fatalf("went back from step %d to step %d: cut %v", at, k, now)
			} else {
				between++
			}
		}
		cutting := slices.ContainsFunc(seq, func(k int) bool { return k > 0 && k < len(hit.Cuts) })
		restoring := slices.ContainsFunc(seq, func(k int) bool { return k > len(hit.Cuts) && k < len(states)-1 })
		if at != len(states)-1 || !cutting || !restoring {
			t.Fatalf("steps seen %v of 0..%d: want the last, and some part way through the cuts and the restores", seq, len(states)-1)
		}
		t.Logf("swizzle: steps seen %v; %d polls fell across a step", slices.Compact(seq), between)
		if end := n.Invoke(ctx, clustertest.NemOp(nemesis.FHealServers)); end.Error != "" {
			t.Fatalf("end op %+v", end)
		}
		checkMatrix(t, e, nodes, nil)
		if err := writes(all, 30*time.Second); err != nil {
			t.Fatalf("after the swizzle: %v", err)
		}
	})
}
