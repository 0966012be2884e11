package nemesis

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/services/sqldb"
)

// redisSet sets key to value on the redis-server at addr.
func redisSet(t *testing.T, addr, key, value string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("SET " + key + " " + value + "\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "+OK") {
		t.Fatalf("SET %s on %s: %q %v", key, addr, line, err)
	}
}

// holdingEnv is an Env whose holders are hs.
type holdingEnv struct {
	c  clusters.Cluster
	hs []Target
}

func (e holdingEnv) Holders() []Target         { return e.hs }
func (e holdingEnv) Workers() []Target         { return e.hs }
func (e holdingEnv) Cluster() clusters.Cluster { return e.c }
func (e holdingEnv) Lease() time.Duration      { return time.Second }

// nodeAddrs returns the lock nodes' real addresses by name.
func nodeAddrs(c clusters.Cluster) map[string]string {
	out := make(map[string]string)
	for _, n := range c.Nodes() {
		out[n.Name] = n.Addr
	}
	return out
}

// TestRestartLoseEmptiesRedisNode runs restart-lose against three real
// redis-servers (append-only file, fsync always, as every Redis lock node
// runs): process 1 holds k0 on lock0 and lock1, a bare majority; lock2
// holds another owner's k0. The nemesis must restart lock0 or lock1, and
// that node must come back serving with an empty keyspace, while `kill`
// (Kill and Restart) of a node keeps its keys.
func TestRestartLoseEmptiesRedisNode(t *testing.T) {
	if _, err := redisnode.LookRedis(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 3, Workers: 1, LogDir: t.TempDir(), Persist: true})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Teardown(context.Background())
	addrs := nodeAddrs(r)
	redisSet(t, addrs["lock0"], "k0", "p1-a")
	redisSet(t, addrs["lock1"], "k0", "p1-a")
	redisSet(t, addrs["lock1"], "other", "x")
	redisSet(t, addrs["lock2"], "k0", "p2-b")

	// kill keeps the keys: the append-only file is fsynced.
	if err := r.Kill(ctx, "lock2"); err != nil {
		t.Fatal(err)
	}
	if err := r.Restart(ctx, "lock2"); err != nil {
		t.Fatal(err)
	}
	if ks, err := r.NodeKeys(ctx, "lock2"); err != nil || ks["k0"] != "p2-b" {
		t.Fatalf("after kill and restart lock2 holds %v (%v): want k0 still there", ks, err)
	}

	env := holdingEnv{c: r, hs: []Target{{Process: 1, Key: "k0"}}}
	nm, err := newRestartLose(env, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	op := nm.Invoke(ctx, history.Op{F: fRestartLose})
	if op.Error != "" {
		t.Fatalf("restart-lose: %s", op.Error)
	}
	hit := history.HitOf(&op)
	if hit == nil || (hit.Node != "lock0" && hit.Node != "lock1") {
		t.Fatalf("restart-lose hit %+v: want lock0 or lock1, the nodes of process 1's bare majority", hit)
	}
	if !slices.Equal(hit.HeldOn, []string{"lock0", "lock1"}) || hit.Key != "k0" || !hit.Holder || !slices.Contains(hit.Lost, "k0") {
		t.Errorf("hit %+v: want k0 held on lock0 and lock1, and lost", hit)
	}
	if !slices.Equal(op.Value.Ext().Nodes, []string{hit.Node}) {
		t.Errorf("op nodes %v, want [%s]", op.Value.Ext().Nodes, hit.Node)
	}
	if err := redisnode.Ping(addrs[hit.Node]); err != nil {
		t.Fatalf("%s does not serve after restart-lose: %v", hit.Node, err)
	}
	if ks, err := r.NodeKeys(ctx, hit.Node); err != nil || len(ks) != 0 {
		t.Fatalf("after restart-lose %s holds %v (%v): want an empty keyspace", hit.Node, ks, err)
	}
	// The node serves through the workers' proxies again.
	if err := redisnode.Ping(r.LockAddrs(0)[slices.Index([]string{"lock0", "lock1", "lock2"}, hit.Node)]); err != nil {
		t.Errorf("%s's proxy does not serve: %v", hit.Node, err)
	}
	other := map[string]string{"lock0": "lock1", "lock1": "lock0"}[hit.Node]
	if ks, _ := r.NodeKeys(ctx, other); ks["k0"] != "p1-a" {
		t.Errorf("%s holds %v: the other node must keep its keys", other, ks)
	}
	end := nm.Invoke(ctx, history.Op{F: fRestartLoseEnd})
	if end.Error != "" {
		t.Errorf("restart-lose-end: %s", end.Error)
	}

	// Fired by a lock event (an Aim), it strikes under the aimed holder's
	// key, process 2's k1 on lock2 and the node just restarted, though
	// process 1, listed first, still has k0 on a node.
	redisSet(t, addrs["lock2"], "k1", "p2-c")
	redisSet(t, addrs[hit.Node], "k1", "p2-c")
	p2 := Target{Process: 2, Key: "k1"}
	env.hs = append(env.hs, p2)
	nm.(*RestartLose).env = env
	aimed := WithAim(ctx, func() (Target, error) { return p2, nil })
	op = nm.Invoke(aimed, history.Op{F: fRestartLose})
	if op.Error != "" {
		t.Fatalf("aimed restart-lose: %s", op.Error)
	}
	if h := history.HitOf(&op); h == nil || h.Key != "k1" || !slices.Contains(h.Lost, "k1") || len(h.HeldOn) != 2 {
		t.Errorf("aimed restart-lose hit %+v: want a node under process 2's k1 (held on two nodes) restarted", h)
	}
	if err := nm.Heal(ctx); err != nil {
		t.Errorf("heal: %v", err)
	}
}

// TestRestartLoseRefusedWithoutWiper: a cluster that cannot restart a node
// empty (the database servers, a fake) is refused up front.
func TestRestartLoseRefusedWithoutWiper(t *testing.T) {
	for _, c := range []clusters.Cluster{
		&fakeRedlock{},
		sqldb.NewPostgres(sqldb.Config{}),
		sqldb.NewMariaDB(sqldb.Config{}),
	} {
		if _, err := newRestartLose(holdingEnv{c: c}, rand.New(rand.NewPCG(1, 2))); !errors.Is(err, clusters.ErrUnsupported) {
			t.Errorf("%T: err %v, want ErrUnsupported", c, err)
		}
	}
}

// turnoverEnv is an Env whose one holder lets go when the cluster's leader
// is looked up (a lookup on a loaded machine outlasting a critical
// section) and whose next grant comes two Holders calls later.
type turnoverEnv struct {
	c     clusters.Cluster
	mu    sync.Mutex
	held  bool
	polls int
}

func (e *turnoverEnv) Holders() []Target {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.held {
		if e.polls++; e.polls >= 2 {
			e.held = true
		}
		return nil
	}
	return []Target{{Process: 3, Key: "k0"}}
}
func (e *turnoverEnv) Workers() []Target         { return nil }
func (e *turnoverEnv) Cluster() clusters.Cluster { return e.c }
func (e *turnoverEnv) Lease() time.Duration      { return time.Second }

// letGo ends the current grant.
func (e *turnoverEnv) letGo() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.held, e.polls = false, 0
}

// slowLeader is a three-node cluster with a leader whose lookup ends the
// env's grant; it records the nodes it restarts empty.
type slowLeader struct {
	env       *turnoverEnv
	restarted []string
}

func (c *slowLeader) Setup(context.Context) error    { return nil }
func (c *slowLeader) Teardown(context.Context) error { return nil }
func (c *slowLeader) Nodes() []clusters.Node {
	return []clusters.Node{{Name: "zk1", Role: "lock"}, {Name: "zk2", Role: "lock"}, {Name: "zk3", Role: "lock"}}
}
func (c *slowLeader) Leader(context.Context) (string, error) {
	c.env.letGo()
	return "zk2", nil
}
func (c *slowLeader) Kill(context.Context, string) error    { return nil }
func (c *slowLeader) Restart(context.Context, string) error { return nil }
func (c *slowLeader) RestartEmpty(_ context.Context, node string) error {
	c.restarted = append(c.restarted, node)
	return nil
}

// TestRestartLoseStrikesUnderAHolder: on a cluster with a leader the
// leader is found first and the holder awaited after, so the hit counts
// the holder there is when the node is struck, not one that let go while
// the leader was looked up (on a loaded machine that left the fault struck
// "while no lock was held", and the run not exercised).
func TestRestartLoseStrikesUnderAHolder(t *testing.T) {
	env := &turnoverEnv{held: true}
	c := &slowLeader{env: env}
	env.c = c
	nm, err := newRestartLose(env, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	op := nm.Invoke(context.Background(), history.Op{F: fRestartLose})
	if op.Error != "" {
		t.Fatalf("restart-lose: %s", op.Error)
	}
	hit := history.HitOf(&op)
	if hit == nil || hit.Node != "zk2" || !slices.Equal(c.restarted, []string{"zk2"}) {
		t.Fatalf("hit %+v, restarted %v: want the leader zk2 restarted", hit, c.restarted)
	}
	if hit.Holders != 1 || !hit.Holder || hit.Key != "k0" {
		t.Errorf("hit %+v: want the holder of the moment of the strike (process 3's k0) counted", hit)
	}
}
