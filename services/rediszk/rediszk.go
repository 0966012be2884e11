package rediszk

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/services/zookeeper"
)

// Config describes the combined topology of the redis-zk lock.
type Config struct {
	// Nodes is the ZooKeeper ensemble size: 3 by default, 1 standalone.
	Nodes int
	// Workers is the number of worker slots; each slot gets its own proxy
	// to every node of both parts.
	Workers int
	// LogDir receives the Redis part's logs (lock0, storage, its proxies),
	// and LogDir/zookeeper the ZooKeeper part's.
	LogDir string
	// ClockShim starts the Redis lock node and the ZooKeeper servers under
	// the clock shim.
	ClockShim bool
}

// Part names of the combined topology (clusters.Parted): the Redis lock
// node and the ZooKeeper ensemble. Its observers' reports name the part
// they came from.
const (
	PartRedis     = "redis"
	PartZooKeeper = "zookeeper"
)

// Cluster is the topology of the seed article's combined lock: one Redis
// lock node (a Redis topology with its storage node, which keeps the
// protected resource) and a ZooKeeper ensemble (a ZooKeeper topology with
// no storage node of its own), side by side. It writes no server code: it
// starts both parts and sends each capability to the part that owns the
// named node. Every worker link of both parts has its own proxy, as in the
// parts.
type Cluster struct {
	redis *redisnode.Redis
	zk    *zookeeper.Cluster
}

var (
	_ clusters.Topology    = (*Cluster)(nil)
	_ clusters.Killer      = (*Cluster)(nil)
	_ clusters.Partitioner = (*Cluster)(nil)
	_ clusters.Primary     = (*Cluster)(nil)
	_ clusters.Isolator    = (*Cluster)(nil)
	_ clusters.Pauser      = (*Cluster)(nil)
	_ clusters.Clocker     = (*Cluster)(nil)
	_ clusters.Parted      = (*Cluster)(nil)
)

// Cluster offers the toxics of both parts' links and the cut of links
// between ZooKeeper servers.
var (
	_ clusters.LinkToxicker = (*Cluster)(nil)
	_ clusters.PeerCutter   = (*Cluster)(nil)
)

// New returns an unstarted combined topology.
func New(cfg Config) *Cluster {
	return &Cluster{
		redis: redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 1, Workers: cfg.Workers, LogDir: cfg.LogDir,
			Persist: true, ClockShim: cfg.ClockShim}),
		zk: zookeeper.New(zookeeper.Config{Nodes: cfg.Nodes, Workers: cfg.Workers, LogDir: filepath.Join(cfg.LogDir, PartZooKeeper),
			ClockShim: cfg.ClockShim, NoStorage: true}),
	}
}

// Setup starts the Redis part, then the ZooKeeper part. Each part stops
// what it started when its own start fails; a failed ZooKeeper start also
// tears the running Redis part down.
func (c *Cluster) Setup(ctx context.Context) error {
	if err := c.redis.Setup(ctx); err != nil {
		return fmt.Errorf("redis part: %w", err)
	}
	if err := c.zk.Setup(ctx); err != nil {
		return errors.Join(fmt.Errorf("zookeeper part: %w", err), c.redis.Teardown(context.WithoutCancel(ctx)))
	}
	return nil
}

// Teardown stops both parts. It is idempotent.
func (c *Cluster) Teardown(ctx context.Context) error {
	return errors.Join(c.zk.Teardown(ctx), c.redis.Teardown(ctx))
}

// Nodes lists the Redis lock node, the ZooKeeper servers, then the storage
// node.
func (c *Cluster) Nodes() []clusters.Node {
	var lock, storage []clusters.Node
	for _, n := range append(c.redis.Nodes(), c.zk.Nodes()...) {
		if n.Role == "lock" {
			lock = append(lock, n)
		} else {
			storage = append(storage, n)
		}
	}
	return append(lock, storage...)
}

// LockAddrs returns worker slot's proxy addresses in this order: the Redis
// lock node first, then the ZooKeeper servers (the redis-zk design relies
// on it).
func (c *Cluster) LockAddrs(slot int) []string {
	return append(c.redis.LockAddrs(slot), c.zk.LockAddrs(slot)...)
}

// StorageAddr returns the Redis part's storage node.
func (c *Cluster) StorageAddr() string { return c.redis.StorageAddr() }

// PartNodes implements Parted: the lock nodes of part "redis" or
// "zookeeper".
func (c *Cluster) PartNodes(part string) []string {
	var nodes []clusters.Node
	switch part {
	case PartRedis:
		nodes = c.redis.Nodes()
	case PartZooKeeper:
		nodes = c.zk.Nodes()
	}
	var names []string
	for _, n := range nodes {
		if n.Role == "lock" {
			names = append(names, n.Name)
		}
	}
	return names
}

// isZK reports whether node is a ZooKeeper server (zk1, zk2, ...); every
// other name belongs to the Redis part.
func isZK(node string) bool { return strings.HasPrefix(node, "zk") }

// part returns the part that owns node.
func (c *Cluster) part(node string) interface {
	clusters.Killer
	clusters.Clocker
} {
	if isZK(node) {
		return c.zk
	}
	return c.redis
}

// zkOnly applies f, a fault only the ZooKeeper part has, to node; for a
// Redis node it is ErrUnsupported, what saying what was asked.
func zkOnly(ctx context.Context, node, what string, f func(context.Context, string) error) error {
	if !isZK(node) {
		return fmt.Errorf("%s: %w", what, clusters.ErrUnsupported)
	}
	return f(ctx, node)
}

// Kill crashes the named node in its part.
func (c *Cluster) Kill(ctx context.Context, node string) error { return c.part(node).Kill(ctx, node) }

// Restart starts a killed node of either part again.
func (c *Cluster) Restart(ctx context.Context, node string) error {
	return c.part(node).Restart(ctx, node)
}

// Partition cuts every link of worker slot, to Redis and to ZooKeeper.
func (c *Cluster) Partition(ctx context.Context, slot int) error {
	return errors.Join(c.redis.Partition(ctx, slot), c.zk.Partition(ctx, slot))
}

// Heal restores every link of worker slot in both parts.
func (c *Cluster) Heal(ctx context.Context, slot int) error {
	return errors.Join(c.redis.Heal(ctx, slot), c.zk.Heal(ctx, slot))
}

// Leader returns the ZooKeeper leader: the Redis part has none.
func (c *Cluster) Leader(ctx context.Context) (string, error) { return c.zk.Leader(ctx) }

// Isolate cuts a ZooKeeper server off from its peers; the Redis node has
// no peers.
func (c *Cluster) Isolate(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "isolate "+node+": a single redis-server has no peers", c.zk.Isolate)
}

// Rejoin restores what Isolate cut.
func (c *Cluster) Rejoin(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "rejoin "+node, c.zk.Rejoin)
}

// PauseNode stops a ZooKeeper server's JVM (pause-leader); the Redis part
// cannot pause its node.
func (c *Cluster) PauseNode(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "pause "+node, c.zk.PauseNode)
}

// ResumeNode continues a paused ZooKeeper server.
func (c *Cluster) ResumeNode(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "resume "+node, c.zk.ResumeNode)
}

// SetClockOffset moves the wall clock of a node of either part (under the
// clock shim).
func (c *Cluster) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	return c.part(node).SetClockOffset(ctx, node, offset)
}

// Pids returns the pids of both parts' running servers, by node name.
func (c *Cluster) Pids() map[string]int {
	pids := c.redis.Pids()
	for n, pid := range c.zk.Pids() {
		pids[n] = pid
	}
	return pids
}
