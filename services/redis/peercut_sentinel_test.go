package redis_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockcheck/lockcheck/internal/clustertest"
	"github.com/lockcheck/lockcheck/nemesis"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

// TestPartitionRingSentinel puts the six servers of the Sentinel topology
// (three redis nodes, three sentinels) on a ring with partition-ring, so
// that each loses only the server opposite it, and reads what each server
// then says of the others, asked directly: a sentinel comes to flag s_down
// exactly the server it was cut from, and a replica cut from its master
// reports its link down, while every other pair still talks; no two
// sentinels lose the master, so no failover starts. After the end op no
// sentinel flags anything and every replica's link is up.
func TestPartitionRingSentinel(t *testing.T) {
	ctx := context.Background()
	s := clustertest.Started(t, redisnode.LookSentinel, redisnode.NewSentinel(redisnode.SentinelConfig{Workers: 1, LogDir: clustertest.LogDir(t)}))
	nodes := s.PeerNodes()
	direct, byAddr := make(map[string]string), make(map[string]string)
	for _, n := range s.Nodes() {
		direct[n.Name] = n.Addr
	}
	// Every address a sentinel hands out maps to slot 0's proxy of a
	// server: name them by it.
	links := s.SentinelLinks(0)
	proxyOf := make(map[string]string)
	for j, a := range s.LockAddrs(0) {
		proxyOf[a] = nodes[j]
	}
	for k, a := range links.Addrs {
		proxyOf[a] = nodes[len(s.LockAddrs(0))+k]
	}
	for announced, proxy := range links.AddrMap {
		byAddr[announced] = proxyOf[proxy]
	}
	// views says whom each server no longer reaches: a sentinel the
	// servers it flags s_down, a replica its master when its link is down.
	// view says whom server n no longer reaches: a sentinel the servers it
	// flags s_down, a replica its master when its link is down.
	view := func(n string) ([]string, error) {
		if strings.HasPrefix(n, "sentinel") {
			return sentinelSees(ctx, direct[n], links.MasterName, byAddr)
		}
		c := redis.NewClient(&redis.Options{Addr: direct[n], Protocol: 2, DisableIdentity: true, MaxRetries: -1})
		defer c.Close()
		info, err := c.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:down") {
			return nil, err
		}
		return []string{byAddr[net.JoinHostPort(field(info, "master_host"), field(info, "master_port"))]}, nil
	}
	if got, err := clustertest.AwaitViews(ctx, time.Minute, nodes, view, clustertest.AllReach(nodes)); err != nil {
		t.Fatalf("before the ring: %v (last %v)", err, got)
	}
	master, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}

	n, hit := clustertest.Strike(t, "partition-ring", clustertest.Env{C: s}, 2)
	if len(hit.Cuts) != 3 {
		t.Fatalf("hit %+v: want the three opposite pairs of a ring of six cut", hit)
	}
	want := make(map[string][]string)
	for _, a := range nodes {
		want[a] = nil
		for _, b := range nodes {
			if a == b || slices.Contains(hit.Reach[a], b) {
				continue
			}
			// A sentinel sees any server go; a redis node sees only its
			// master go (a master does not watch its replicas, replicas
			// do not talk).
			if strings.HasPrefix(a, "sentinel") || (a != master && b == master) {
				want[a] = append(want[a], b)
			}
		}
	}
	if got, err := clustertest.AwaitViews(ctx, time.Minute, nodes, view, want); err != nil {
		t.Fatalf("under the ring: %v (last %v)", err, got)
	}
	if now, err := s.Leader(ctx); err != nil || now != master {
		t.Errorf("master %q (%v) under the ring, want %s still", now, err, master)
	}
	if end := n.Invoke(ctx, clustertest.NemOp(nemesis.FHealServers)); end.Error != "" {
		t.Fatalf("end op %+v", end)
	}
	if got, err := clustertest.AwaitViews(ctx, time.Minute, nodes, view, clustertest.AllReach(nodes)); err != nil {
		t.Fatalf("after the heal: %v (last %v)", err, got)
	}
}

// sentinelSees returns the servers the sentinel at addr flags s_down (the
// master, its replicas, the other sentinels), named by byAddr, sorted.
func sentinelSees(ctx context.Context, addr, master string, byAddr map[string]string) ([]string, error) {
	c := redis.NewSentinelClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	m, err := c.Master(ctx, master).Result()
	if err != nil {
		return nil, err
	}
	reps, err := c.Replicas(ctx, master).Result()
	if err != nil {
		return nil, err
	}
	sents, err := c.Sentinels(ctx, master).Result()
	if err != nil {
		return nil, err
	}
	var down []string
	for _, x := range append(append([]map[string]string{m}, reps...), sents...) {
		if strings.Contains(x["flags"], "s_down") {
			down = append(down, byAddr[net.JoinHostPort(x["ip"], x["port"])])
		}
	}
	slices.Sort(down)
	return down, nil
}

// field returns the value of name in an INFO reply.
func field(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}
