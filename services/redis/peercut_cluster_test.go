package redis_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
	"github.com/lockcheck/lockcheck/nemesis"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

// clusterView is what one Redis clusters.Cluster node says of the others: their
// names by node id, and whom it suspects (fail? or fail).
type clusterView struct {
	self     string
	suspects []string
	master   map[string]string // replica name -> master name
	slots    [][2]int          // the node's own slot ranges
}

// viewOf asks the node at addr (directly) for CLUSTER NODES, naming nodes
// by names (node id -> name).
func viewOf(ctx context.Context, addr string, names map[string]string) (clusterView, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	txt, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return clusterView{}, err
	}
	v := clusterView{master: make(map[string]string)}
	for _, line := range strings.Split(strings.TrimSpace(txt), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		name := names[f[0]]
		switch {
		case strings.Contains(f[2], "myself"):
			v.self = name
			for _, s := range f[8:] {
				lo, hi, _ := strings.Cut(s, "-")
				a, _ := strconv.Atoi(lo)
				b, _ := strconv.Atoi(hi)
				v.slots = append(v.slots, [2]int{a, b})
			}
		case strings.Contains(f[2], "fail"):
			v.suspects = append(v.suspects, name)
		}
		if f[3] != "-" {
			v.master[name] = names[f[3]]
		}
	}
	slices.Sort(v.suspects)
	return v, nil
}

// TestPartitionShapesRedisCluster cuts the links between Redis clusters.Cluster
// nodes pair by pair. On a ring of the six nodes (partition-ring: each
// node loses only the node opposite it) every node, and only it, comes to
// suspect its opposite (CLUSTER NODES flags fail? once cluster-node-timeout
// passes with no pong), which shows that nothing either sends over the bus
// reaches the other while the bus links to everyone else still carry
// traffic; after the heal no node suspects any. Cutting a master from its
// replica also stops the replication stream: a write to the master no
// longer reaches the replica.
// viewPatience bounds the wait for the cluster nodes' views to settle: the
// wait returns as soon as they do, and a loaded machine (make test runs
// packages side by side) can make the gossip that clears a suspicion slow.
const viewPatience = 2 * time.Minute

func TestPartitionShapesRedisCluster(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Started(t, redisnode.LookRedis, redisnode.NewRedisCluster(redisnode.RedisClusterConfig{Workers: 1, LogDir: clustertest.LogDir(t), NodeTimeout: time.Second}))
	nodes := c.PeerNodes()
	addr, names := make(map[string]string), make(map[string]string)
	for _, n := range c.Nodes() {
		if n.Role == "lock" {
			addr[n.Name] = n.Addr
			cl := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, DisableIdentity: true})
			id, err := cl.ClusterMyID(ctx).Result()
			cl.Close()
			if err != nil {
				t.Fatal(err)
			}
			names[id] = n.Name
		}
	}
	// suspects says whom node n suspects (fail? or fail).
	suspects := func(n string) ([]string, error) {
		v, err := viewOf(ctx, addr[n], names)
		return v.suspects, err
	}
	if got, err := clustertest.AwaitViews(ctx, viewPatience, nodes, suspects, clustertest.AllReach(nodes)); err != nil {
		t.Fatalf("before the ring: %v (last %v)", err, got)
	}

	t.Run("partition-ring", func(t *testing.T) {
		n, hit := clustertest.Strike(t, "partition-ring", clustertest.Env{C: c}, 1)
		if len(hit.Cuts) != 3 {
			t.Fatalf("hit %+v: want the three opposite pairs of a ring of six cut", hit)
		}
		want := make(map[string][]string)
		for _, a := range nodes {
			for _, b := range nodes {
				if a != b && !slices.Contains(hit.Reach[a], b) {
					want[a] = append(want[a], b)
				}
			}
		}
		if got, err := clustertest.AwaitViews(ctx, viewPatience, nodes, suspects, want); err != nil {
			t.Fatalf("under the ring: %v (last %v)", err, got)
		}
		if end := n.Invoke(ctx, clustertest.NemOp(nemesis.FHealServers)); end.Error != "" {
			t.Fatalf("end op %+v", end)
		}
		if got, err := clustertest.AwaitViews(ctx, viewPatience, nodes, suspects, clustertest.AllReach(nodes)); err != nil {
			t.Fatalf("after the heal: %v (last %v)", err, got)
		}
	})

	t.Run("master and replica", func(t *testing.T) {
		v, err := viewOf(ctx, addr[nodes[0]], names)
		if err != nil {
			t.Fatal(err)
		}
		var master, replica string
		for r, m := range v.master {
			if m != "" {
				master, replica = m, r
				break
			}
		}
		mv, err := viewOf(ctx, addr[master], names)
		if err != nil || master == "" {
			t.Fatalf("no master with a replica in %+v (%v)", v, err)
		}
		mc := redis.NewClient(&redis.Options{Addr: addr[master], Protocol: 2, DisableIdentity: true})
		defer mc.Close()
		rc := redis.NewClient(&redis.Options{Addr: addr[replica], Protocol: 2, DisableIdentity: true,
			OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
		defer rc.Close()
		key := ""
		for i := 0; i < 1000 && key == ""; i++ {
			k := fmt.Sprintf("shape%d", i)
			slot, err := mc.ClusterKeySlot(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(mv.slots, func(r [2]int) bool { return int(slot) >= r[0] && int(slot) <= r[1] }) {
				key = k
			}
		}
		replicated := func(val string, wait time.Duration) error {
			if err := mc.Set(ctx, key, val, 0).Err(); err != nil {
				return err
			}
			return clusters.Poll(ctx, wait, func() error {
				if got, _ := rc.Get(ctx, key).Result(); got != val {
					return fmt.Errorf("%s reads %s = %q, want %q", replica, key, got, val)
				}
				return nil
			}, "replication")
		}
		if err := replicated("before", 10*time.Second); err != nil {
			t.Fatalf("before the cut: %v", err)
		}
		if err := c.CutPeers(ctx, "test", [][2]string{{replica, master}}); err != nil {
			t.Fatal(err)
		}
		if err := replicated("during", 2*time.Second); err == nil {
			t.Fatalf("%s still replicates from %s with their link cut", replica, master)
		}
		if err := c.HealPeers(ctx, "test", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.HealPeers(ctx, "test", nil); err != nil {
			t.Fatalf("a second heal: %v", err)
		}
	})
}
