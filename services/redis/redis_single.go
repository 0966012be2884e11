// The plain Redis topology: independent redis-server lock nodes (one, or five
// for RedLock), no replication. Redis clusters.Cluster (cluster mode) is in
// redis_cluster_mode.go.

package redis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// RedisConfig describes a set of local redis-server nodes: the lock nodes a
// lock design uses and one storage node for the protected resource.
type RedisConfig struct {
	// LockNodes is how many independent redis-server lock nodes to start.
	LockNodes int
	// Workers is the number of worker slots; each slot gets its own proxy to
	// each lock node.
	Workers int
	// LogDir receives one log per node (the run directory's nodes/).
	LogDir string
	// Persist makes lock nodes keep an append-only file with fsync always,
	// so a killed and restarted node still has its keys.
	Persist bool
	// clusters.ClockShim starts the lock nodes under the clock shim (see clusters.ClockShim),
	// each reading its wall-clock offset from the file "clock" in its data
	// directory, so SetClockOffset can move it. The storage node never runs
	// under the shim.
	ClockShim bool
}

// Redis is a clusters.Cluster of local redis-server processes behind Toxiproxy.
type Redis struct {
	cfg     RedisConfig
	lock    []*RedisServer
	storage *RedisServer
	clusters.Local
}

var (
	_ clusters.Cluster         = (*Redis)(nil)
	_ clusters.Killer          = (*Redis)(nil)
	_ clusters.Partitioner     = (*Redis)(nil)
	_ clusters.NodePartitioner = (*Redis)(nil)
	_ clusters.Clocker         = (*Redis)(nil)
)

// NewRedis returns an unstarted cluster.
func NewRedis(cfg RedisConfig) *Redis {
	if cfg.LockNodes < 1 {
		cfg.LockNodes = 1
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	return &Redis{cfg: cfg, Local: clusters.Local{NodeSet: clusters.NodeSet{Kind: "lock node"}}}
}

// Setup starts the lock nodes, the storage node and the proxies, and returns
// once every node answers. On error, whatever was started is stopped.
func (r *Redis) Setup(ctx context.Context) (err error) {
	if _, err := LookRedis(); err != nil {
		return err
	}
	shim := ""
	if r.cfg.ClockShim {
		if shim, err = clusters.ClockShim(); err != nil {
			return err
		}
	}
	return r.SetUp(ctx, "redis-", r.Teardown, func() (err error) {
		if err := os.MkdirAll(r.cfg.LogDir, 0o755); err != nil {
			return fmt.Errorf("create log dir: %w", err)
		}
		if r.lock, err = newRedisServers(r.DataDir, r.cfg.LogDir, "lock", r.cfg.LockNodes, r.cfg.Persist, shim); err != nil {
			return err
		}
		r.storage = NewRedisServer(r.DataDir, r.cfg.LogDir, "storage", false)
		for _, s := range append(append([]*RedisServer(nil), r.lock...), r.storage) {
			if err := s.Start(ctx); err != nil {
				return err
			}
		}
		if err := r.OpenProxies(r.cfg.LogDir); err != nil {
			return err
		}
		return r.NodeSet.Link(r.Proxies, r.cfg.Workers, redisSetNodes(r.lock, nil, nil))
	})
}

// Nodes lists the lock nodes, then the storage node.
func (r *Redis) Nodes() []clusters.Node { return NodeList(r.storage, r.lock) }

// LockAddrs returns the proxy addresses worker slot uses, one per lock node.
func (r *Redis) LockAddrs(slot int) []string { return r.NodeSet.LockAddrs(slot) }

// StorageAddr returns the storage node's address. Workers reach it directly:
// no nemesis touches the protected resource.
func (r *Redis) StorageAddr() string { return r.storage.Addr() }

// Pids returns the pids of the running server processes, by node name.
func (r *Redis) Pids() map[string]int { return RedisPids(r.storage, r.lock) }

// Kill stops the proxies to a lock node, so new connections are refused and
// open ones close, then SIGKILLs its redis-server.
func (r *Redis) Kill(ctx context.Context, node string) error { return r.NodeSet.Kill(ctx, node) }

// Restart starts a killed lock node on its old port and re-enables its
// proxies once it answers.
func (r *Redis) Restart(ctx context.Context, node string) error { return r.NodeSet.Restart(ctx, node) }

// clockFile is the clock shim's offset file of a lock node.
func clockFile(s *RedisServer) string { return filepath.Join(s.Dir, "clock") }

// shimNode makes s start under the clock shim at path shim, its clock at
// real time; shim "" leaves s alone.
func shimNode(shim string, s *RedisServer) error {
	if shim == "" {
		return nil
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s dir: %w", s.Name, err)
	}
	if err := clusters.WriteClockOffset(clockFile(s), 0); err != nil {
		return err
	}
	s.Env = clusters.ClockShimEnvFor(shim, clockFile(s))
	return nil
}

// SetClockOffset moves a lock node's wall clock to real time + offset. It
// needs the cluster to run under the clock shim (RedisConfig.ClockShim).
func (r *Redis) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	return r.NodeSet.SetClock(r.cfg.ClockShim, "lock nodes", node, offset, func(i int) string { return clockFile(r.lock[i]) })
}

// Partition cuts every link of a worker slot to the lock nodes.
func (r *Redis) Partition(ctx context.Context, slot int) error { return r.NodeSet.Partition(ctx, slot) }

// Heal restores every link of a worker slot.
func (r *Redis) Heal(ctx context.Context, slot int) error { return r.NodeSet.Heal(ctx, slot) }

// PartitionNodes cuts worker slot's links to the named lock nodes only.
func (r *Redis) PartitionNodes(ctx context.Context, slot int, nodes []string) error {
	return r.NodeSet.PartitionNodes(ctx, slot, nodes)
}

// Teardown stops the proxies and every server Setup started, and removes the
// data directory. It is idempotent.
func (r *Redis) Teardown(ctx context.Context) error {
	if !r.MarkTornDown() {
		return nil
	}
	r.CloseProxies()
	return errors.Join(append(StopRedis(ctx, r.storage, r.lock), r.RemoveTemp("redis-"))...)
}
