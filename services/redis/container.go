package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/containers"
)

func init() {
	containers.RegisterStorage(containers.StorageForm{Image: redisImage.Short, Spec: func(nw *testcontainers.DockerNetwork) containers.NodeSpec {
		return redisSpec(clusters.StorageName, "storage", nw, false, false)
	}})
}

// containerForm is the redis service's form for --cluster docker.
var containerForm = &clusters.ContainerForm{Images: []string{redisImage.Short}, New: newContainers}

// redisImage has redis-server 7.0 and the clock shim at
// /usr/local/lib/libclockshim.so.
var redisImage = containers.MustImage("redis")

// redisReady is what redis-server logs once it accepts connections.
const redisReady = "Ready to accept connections"

// Containers is the container form of Redis: independent redis-server
// lock nodes (appendonly, fsync always) and a storage node, each a
// container of the redis image on one private network; workers reach the
// lock nodes through their own proxies and the storage node directly.
type Containers struct {
	containers.Stack
}

var (
	_ clusters.Topology        = (*Containers)(nil)
	_ clusters.FaultVerber     = (*Containers)(nil)
	_ clusters.Killer          = (*Containers)(nil)
	_ clusters.Pauser          = (*Containers)(nil)
	_ clusters.Partitioner     = (*Containers)(nil)
	_ clusters.NodePartitioner = (*Containers)(nil)
	_ clusters.Clocker         = (*Containers)(nil)
)

func newContainers(cfg clusters.TopologyConfig) (clusters.Topology, error) {
	if cfg.Replicated && cfg.LockNodes <= 1 {
		return nil, fmt.Errorf("--cluster docker: the Sentinel topology (for failover nemeses) has no container form yet: %w", clusters.ErrUnsupported)
	}
	if cfg.LockNodes < 1 {
		cfg.LockNodes = 1
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	r := &Containers{Stack: containers.Stack{Cfg: cfg, Set: clusters.NodeSet{Kind: "lock node"}}}
	r.Faults = clusters.FaultsOf(&r.Set)
	return r, nil
}

// redisSpec is a redis-server container; persist keeps an append-only file
// with fsync always, so a killed and started container keeps its keys.
func redisSpec(name, role string, nw *testcontainers.DockerNetwork, persist, clock bool) containers.NodeSpec {
	cmd := []string{"redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--databases", "1"}
	if persist {
		cmd = append(cmd, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		cmd = append(cmd, "--appendonly", "no")
	}
	spec := containers.NodeSpec{Name: name, Role: role, Image: redisImage, Cmd: cmd, Port: "6379/tcp",
		Nets: []*testcontainers.DockerNetwork{nw}, Aliases: [][]string{{name}},
		Wait: wait.ForLog(redisReady), Clock: clock}
	if clock {
		spec.Env = map[string]string{"LD_PRELOAD": containers.ShimPath}
	}
	return spec
}

// Setup starts the containers and the proxies and returns once every node
// answers PING on its published port. On error, whatever was started is
// removed.
func (r *Containers) Setup(ctx context.Context) error {
	return r.SetUp(ctx, func() error {
		nw, err := r.Network(ctx, false)
		if err != nil {
			return err
		}
		var specs []containers.NodeSpec
		for i := 0; i < r.Cfg.LockNodes; i++ {
			specs = append(specs, redisSpec(fmt.Sprintf("lock%d", i), "lock", nw, true, r.Cfg.ClockShim))
		}
		specs = append(specs, redisSpec("storage", "storage", nw, false, false))
		nodes, err := r.StartAll(ctx, specs)
		if err != nil {
			return err
		}
		r.Lock, r.Storage = nodes[:r.Cfg.LockNodes], nodes[r.Cfg.LockNodes]
		for _, n := range nodes {
			if err := pingable(ctx, n); err != nil {
				return err
			}
		}
		return r.Link(pingable)
	})
}

// pingable waits until the redis-server in n answers PING.
func pingable(ctx context.Context, n *containers.Container) error {
	return containers.WaitFor(ctx, 30*time.Second, n.Spec.Name, func() error { return Ping(n.Addr()) })
}

// SetClockOffset moves a lock node's wall clock through the clock shim in
// its container; it needs TopologyConfig.ClockShim.
func (r *Containers) SetClockOffset(ctx context.Context, name string, offset time.Duration) error {
	j, err := r.Set.Index(name)
	if err != nil {
		return err
	}
	n := r.Lock[j]
	if n.ClockFile == "" {
		return fmt.Errorf("set clock of %s: lock nodes run without the clock shim: %w", name, clusters.ErrUnsupported)
	}
	return clusters.WriteClockOffset(n.ClockFile, offset)
}

// PartitionNodes cuts worker slot's links to the named lock nodes only.
func (r *Containers) PartitionNodes(ctx context.Context, slot int, nodes []string) error {
	return r.Set.PartitionNodes(ctx, slot, nodes)
}
