package containers

import (
	"context"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lockcheck/lockcheck/clusters"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

func init() {
	register("redis", clusters.ContainerForm{Images: []string{redisImage.Short}, New: newRedis})
}

// redisReady is what redis-server logs once it accepts connections.
const redisReady = "Ready to accept connections"

// Redis is the container form of redisnode.Redis: independent redis-server
// lock nodes (appendonly, fsync always) and a storage node, each a
// container of the redis image on one private network; workers reach the
// lock nodes through their own proxies and the storage node directly.
type Redis struct {
	stack
}

var (
	_ clusters.Topology        = (*Redis)(nil)
	_ clusters.FaultVerber     = (*Redis)(nil)
	_ clusters.Killer          = (*Redis)(nil)
	_ clusters.Pauser          = (*Redis)(nil)
	_ clusters.Partitioner     = (*Redis)(nil)
	_ clusters.NodePartitioner = (*Redis)(nil)
	_ clusters.Clocker         = (*Redis)(nil)
)

func newRedis(cfg clusters.TopologyConfig) (clusters.Topology, error) {
	if cfg.Replicated && cfg.LockNodes <= 1 {
		return nil, fmt.Errorf("--cluster docker: the Sentinel topology (for failover nemeses) has no container form yet: %w", clusters.ErrUnsupported)
	}
	if cfg.LockNodes < 1 {
		cfg.LockNodes = 1
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	r := &Redis{stack: stack{cfg: cfg, set: clusters.NodeSet{Kind: "lock node"}}}
	r.Faults = clusters.FaultsOf(&r.set)
	return r, nil
}

// redisSpec is a redis-server container; persist keeps an append-only file
// with fsync always, so a killed and started container keeps its keys.
func redisSpec(name, role string, nw *testcontainers.DockerNetwork, persist, clock bool) nodeSpec {
	cmd := []string{"redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--databases", "1"}
	if persist {
		cmd = append(cmd, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		cmd = append(cmd, "--appendonly", "no")
	}
	spec := nodeSpec{name: name, role: role, image: redisImage, cmd: cmd, port: "6379/tcp",
		nets: []*testcontainers.DockerNetwork{nw}, aliases: [][]string{{name}},
		wait: wait.ForLog(redisReady), clock: clock}
	if clock {
		spec.env = map[string]string{"LD_PRELOAD": shimPath}
	}
	return spec
}

// Setup starts the containers and the proxies and returns once every node
// answers PING on its published port. On error, whatever was started is
// removed.
func (r *Redis) Setup(ctx context.Context) error {
	return r.setUp(ctx, func() error {
		nw, err := r.network(ctx, false)
		if err != nil {
			return err
		}
		var specs []nodeSpec
		for i := 0; i < r.cfg.LockNodes; i++ {
			specs = append(specs, redisSpec(fmt.Sprintf("lock%d", i), "lock", nw, true, r.cfg.ClockShim))
		}
		specs = append(specs, redisSpec("storage", "storage", nw, false, false))
		nodes, err := r.startAll(ctx, specs)
		if err != nil {
			return err
		}
		r.lock, r.storage = nodes[:r.cfg.LockNodes], nodes[r.cfg.LockNodes]
		for _, n := range nodes {
			if err := pingable(ctx, n); err != nil {
				return err
			}
		}
		return r.link(pingable)
	})
}

// pingable waits until the redis-server in n answers PING.
func pingable(ctx context.Context, n *node) error {
	return waitFor(ctx, 30*time.Second, n.spec.name, func() error { return redisnode.Ping(n.addr()) })
}

// SetClockOffset moves a lock node's wall clock through the clock shim in
// its container; it needs TopologyConfig.ClockShim.
func (r *Redis) SetClockOffset(ctx context.Context, name string, offset time.Duration) error {
	j, err := r.set.Index(name)
	if err != nil {
		return err
	}
	n := r.lock[j]
	if n.clockFile == "" {
		return fmt.Errorf("set clock of %s: lock nodes run without the clock shim: %w", name, clusters.ErrUnsupported)
	}
	return clusters.WriteClockOffset(n.clockFile, offset)
}

// PartitionNodes cuts worker slot's links to the named lock nodes only.
func (r *Redis) PartitionNodes(ctx context.Context, slot int, nodes []string) error {
	return r.set.PartitionNodes(ctx, slot, nodes)
}
