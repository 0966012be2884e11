package clusters

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Part names of the combined Redis + ZooKeeper topology (Parted).
const (
	PartRedis     = "redis"
	PartZooKeeper = "zookeeper"
)

// RedisZKConfig describes the combined topology of the redis-zk lock.
type RedisZKConfig struct {
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

// RedisZK is the topology of the seed article's combined lock: one Redis
// lock node (a Redis topology with its storage node, which keeps the
// protected resource) and a ZooKeeper ensemble (a ZooKeeper topology with
// no storage node of its own), side by side. It writes no server code: it
// starts both parts and sends each capability to the part that owns the
// named node. Every worker link of both parts has its own proxy, as in the
// parts.
type RedisZK struct {
	redis *Redis
	zk    *ZooKeeper
}

var (
	_ Topology    = (*RedisZK)(nil)
	_ Killer      = (*RedisZK)(nil)
	_ Partitioner = (*RedisZK)(nil)
	_ Primary     = (*RedisZK)(nil)
	_ Isolator    = (*RedisZK)(nil)
	_ Pauser      = (*RedisZK)(nil)
	_ Clocker     = (*RedisZK)(nil)
	_ Parted      = (*RedisZK)(nil)
)

// NewRedisZK returns an unstarted combined topology.
func NewRedisZK(cfg RedisZKConfig) *RedisZK {
	return &RedisZK{
		redis: NewRedis(RedisConfig{LockNodes: 1, Workers: cfg.Workers, LogDir: cfg.LogDir,
			Persist: true, ClockShim: cfg.ClockShim}),
		zk: NewZooKeeper(ZooKeeperConfig{Nodes: cfg.Nodes, Workers: cfg.Workers, LogDir: filepath.Join(cfg.LogDir, PartZooKeeper),
			ClockShim: cfg.ClockShim, NoStorage: true}),
	}
}

// Setup starts the Redis part, then the ZooKeeper part. Each part stops
// what it started when its own start fails; a failed ZooKeeper start also
// tears the running Redis part down.
func (c *RedisZK) Setup(ctx context.Context) error {
	if err := c.redis.Setup(ctx); err != nil {
		return fmt.Errorf("redis part: %w", err)
	}
	if err := c.zk.Setup(ctx); err != nil {
		return errors.Join(fmt.Errorf("zookeeper part: %w", err), c.redis.Teardown(context.WithoutCancel(ctx)))
	}
	return nil
}

// Teardown stops both parts. It is idempotent.
func (c *RedisZK) Teardown(ctx context.Context) error {
	return errors.Join(c.zk.Teardown(ctx), c.redis.Teardown(ctx))
}

// Nodes lists the Redis lock node, the ZooKeeper servers, then the storage
// node.
func (c *RedisZK) Nodes() []Node {
	var lock, storage []Node
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
func (c *RedisZK) LockAddrs(slot int) []string {
	return append(c.redis.LockAddrs(slot), c.zk.LockAddrs(slot)...)
}

// StorageAddr returns the Redis part's storage node.
func (c *RedisZK) StorageAddr() string { return c.redis.StorageAddr() }

// PartNodes implements Parted: the lock nodes of part "redis" or
// "zookeeper".
func (c *RedisZK) PartNodes(part string) []string {
	var nodes []Node
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
func (c *RedisZK) part(node string) interface {
	Killer
	Clocker
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
		return fmt.Errorf("%s: %w", what, ErrUnsupported)
	}
	return f(ctx, node)
}

// Kill crashes the named node in its part.
func (c *RedisZK) Kill(ctx context.Context, node string) error { return c.part(node).Kill(ctx, node) }

// Restart starts a killed node of either part again.
func (c *RedisZK) Restart(ctx context.Context, node string) error {
	return c.part(node).Restart(ctx, node)
}

// Partition cuts every link of worker slot, to Redis and to ZooKeeper.
func (c *RedisZK) Partition(ctx context.Context, slot int) error {
	return errors.Join(c.redis.Partition(ctx, slot), c.zk.Partition(ctx, slot))
}

// Heal restores every link of worker slot in both parts.
func (c *RedisZK) Heal(ctx context.Context, slot int) error {
	return errors.Join(c.redis.Heal(ctx, slot), c.zk.Heal(ctx, slot))
}

// Leader returns the ZooKeeper leader: the Redis part has none.
func (c *RedisZK) Leader(ctx context.Context) (string, error) { return c.zk.Leader(ctx) }

// Isolate cuts a ZooKeeper server off from its peers; the Redis node has
// no peers.
func (c *RedisZK) Isolate(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "isolate "+node+": a single redis-server has no peers", c.zk.Isolate)
}

// Rejoin restores what Isolate cut.
func (c *RedisZK) Rejoin(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "rejoin "+node, c.zk.Rejoin)
}

// PauseNode stops a ZooKeeper server's JVM (pause-leader); the Redis part
// cannot pause its node.
func (c *RedisZK) PauseNode(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "pause "+node, c.zk.PauseNode)
}

// ResumeNode continues a paused ZooKeeper server.
func (c *RedisZK) ResumeNode(ctx context.Context, node string) error {
	return zkOnly(ctx, node, "resume "+node, c.zk.ResumeNode)
}

// SetClockOffset moves the wall clock of a node of either part (under the
// clock shim).
func (c *RedisZK) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	return c.part(node).SetClockOffset(ctx, node, offset)
}

// Pids returns the pids of both parts' running servers, by node name.
func (c *RedisZK) Pids() map[string]int {
	pids := c.redis.Pids()
	for n, pid := range c.zk.Pids() {
		pids[n] = pid
	}
	return pids
}
