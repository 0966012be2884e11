package containers

import (
	"context"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lockcheck/lockcheck/clusters"
)

func init() {
	register(Builder{Service: "redis", Images: []Image{redisImage}, New: newRedis})
}

// redisReady is what redis-server logs once it accepts connections.
const redisReady = "Ready to accept connections"

// Redis is the container form of clusters.Redis: independent redis-server
// lock nodes (appendonly, fsync always) and a storage node, each a
// container of the redis image on one private network; workers reach the
// lock nodes through their own proxies and the storage node directly.
type Redis struct {
	stack
	lock     []*node
	storage  *node
	slotAddr [][]string // slot -> lock node -> proxy address
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
	return &Redis{stack: stack{cfg: cfg}}, nil
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
func (r *Redis) Setup(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = r.Teardown(ctx)
		}
	}()
	if err := r.open(ctx); err != nil {
		return err
	}
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
		if err := waitFor(ctx, 30*time.Second, n.spec.name, func() error { return clusters.Ping(n.addr()) }); err != nil {
			return err
		}
	}
	r.slotAddr = make([][]string, r.cfg.Workers)
	for slot := range r.slotAddr {
		for j, n := range r.lock {
			addr, err := r.proxies.Add(redisProxy(slot, j), n.addr())
			if err != nil {
				return err
			}
			r.slotAddr[slot] = append(r.slotAddr[slot], addr)
		}
	}
	return nil
}

func redisProxy(slot, node int) string { return fmt.Sprintf("w%d-lock%d", slot, node) }

// Teardown removes the containers, the network and the proxies.
func (r *Redis) Teardown(ctx context.Context) error { return r.teardown(ctx) }

// Nodes lists the lock nodes, then the storage node, at their published
// addresses.
func (r *Redis) Nodes() []clusters.Node {
	var nodes []clusters.Node
	for _, n := range r.lock {
		nodes = append(nodes, clusters.Node{Name: n.spec.name, Role: "lock", Addr: n.addr()})
	}
	if r.storage != nil {
		nodes = append(nodes, clusters.Node{Name: "storage", Role: "storage", Addr: r.storage.addr()})
	}
	return nodes
}

// LockAddrs returns the proxy addresses worker slot uses, one per lock node.
func (r *Redis) LockAddrs(slot int) []string { return append([]string(nil), r.slotAddr[slot]...) }

// StorageAddr returns the storage container's published address.
func (r *Redis) StorageAddr() string { return r.storage.addr() }

func (r *Redis) lockNode(name string) (int, *node, error) {
	for j, n := range r.lock {
		if n.spec.name == name {
			return j, n, nil
		}
	}
	return 0, nil, fmt.Errorf("no lock node named %q", name)
}

// Kill stops the proxies to a lock node, so its client connections close
// and new ones are refused, and kills its container.
func (r *Redis) Kill(ctx context.Context, name string) error {
	j, n, err := r.lockNode(name)
	if err != nil {
		return err
	}
	if err := r.proxies.DisableAll(r.nodeLinks(j)); err != nil {
		return err
	}
	return r.kill(ctx, n)
}

// Restart starts a killed lock node's container again (its append-only
// file survives in the container) and re-enables its proxies once it
// answers.
func (r *Redis) Restart(ctx context.Context, name string) error {
	j, n, err := r.lockNode(name)
	if err != nil {
		return err
	}
	if err := r.restart(ctx, n); err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, name, func() error { return clusters.Ping(n.addr()) }); err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	return r.proxies.EnableAll(r.nodeLinks(j))
}

// PauseNode freezes a lock node's container (docker pause).
func (r *Redis) PauseNode(ctx context.Context, name string) error {
	_, n, err := r.lockNode(name)
	if err != nil {
		return err
	}
	return r.pause(ctx, n)
}

// ResumeNode thaws it (docker unpause).
func (r *Redis) ResumeNode(ctx context.Context, name string) error {
	_, n, err := r.lockNode(name)
	if err != nil {
		return err
	}
	return r.unpause(ctx, n)
}

// SetClockOffset moves a lock node's wall clock through the clock shim in
// its container; it needs TopologyConfig.ClockShim.
func (r *Redis) SetClockOffset(ctx context.Context, name string, offset time.Duration) error {
	_, n, err := r.lockNode(name)
	if err != nil {
		return err
	}
	if n.clockFile == "" {
		return fmt.Errorf("set clock of %s: lock nodes run without the clock shim: %w", name, clusters.ErrUnsupported)
	}
	return clusters.WriteClockOffset(n.clockFile, offset)
}

// Partition cuts every link of a worker slot to the lock nodes.
func (r *Redis) Partition(ctx context.Context, slot int) error {
	return r.proxies.CutAll(r.slotLinks(slot))
}

// Heal restores every link of a worker slot.
func (r *Redis) Heal(ctx context.Context, slot int) error {
	return r.proxies.RestoreAll(ctx, r.slotLinks(slot))
}

// PartitionNodes cuts worker slot's links to the named lock nodes only.
func (r *Redis) PartitionNodes(ctx context.Context, slot int, nodes []string) error {
	if slot < 0 || slot >= len(r.slotAddr) {
		return fmt.Errorf("partition slot %d: no such worker slot", slot)
	}
	var names []string
	for _, name := range nodes {
		j, _, err := r.lockNode(name)
		if err != nil {
			return err
		}
		names = append(names, redisProxy(slot, j))
	}
	return r.proxies.CutAll(names)
}

func (r *Redis) slotLinks(slot int) []string {
	return clusters.LinkNames(len(r.lock), func(j int) string { return redisProxy(slot, j) })
}

func (r *Redis) nodeLinks(j int) []string {
	return clusters.LinkNames(r.cfg.Workers, func(slot int) string { return redisProxy(slot, j) })
}
