package containers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lockcheck/lockcheck/clusters"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/services/zookeeper"
)

func init() {
	register("zookeeper", clusters.ContainerForm{Images: []string{zookeeperImage.Short, redisImage.Short}, New: newZooKeeper})
}

// zkReady is what a ZooKeeper server logs once its client port is bound.
const zkReady = "binding to port"

// zkServeWait bounds the wait for an ensemble to elect a leader and serve:
// three JVMs in containers on a two-core machine at load average 50 have
// taken more than the local topology's 90 s.
const zkServeWait = 180 * time.Second

// ZooKeeper is the container form of clusters.ZooKeeper: an ensemble of
// ZooKeeper containers (tick 100 ms, sessions of 5 to 200 ticks, as the
// local one) and a redis storage container. Client ports are published on
// 127.0.0.1 through the clients network, and workers reach them through
// their own proxies; the servers talk to each other on a second, internal
// peers network, under the aliases zk1, zk2, ..., so cutting a server off
// from its peers is disconnecting it from that network while clients still
// reach it.
type ZooKeeper struct {
	stack
	clients *testcontainers.DockerNetwork
	peers   *testcontainers.DockerNetwork // nil for a standalone server
}

var (
	_ clusters.Topology    = (*ZooKeeper)(nil)
	_ clusters.FaultVerber = (*ZooKeeper)(nil)
	_ clusters.Killer      = (*ZooKeeper)(nil)
	_ clusters.Partitioner = (*ZooKeeper)(nil)
	_ clusters.Primary     = (*ZooKeeper)(nil)
	_ clusters.Isolator    = (*ZooKeeper)(nil)
	_ clusters.Pauser      = (*ZooKeeper)(nil)
	_ clusters.Clocker     = (*ZooKeeper)(nil)
)

func newZooKeeper(cfg clusters.TopologyConfig) (clusters.Topology, error) {
	if cfg.Nodes < 1 {
		cfg.Nodes = 3
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	z := &ZooKeeper{stack: stack{cfg: cfg, set: clusters.NodeSet{Kind: "ZooKeeper node"}}}
	z.Faults = clusters.FaultsOf(&z.set)
	return z, nil
}

// tick is the ensemble's tickTime, as clusters.ZooKeeper's default.
const tick = 100 * time.Millisecond

// zkSpec is server id of an ensemble of size nodes.
func (z *ZooKeeper) zkSpec(id int) nodeSpec {
	name := "zk" + strconv.Itoa(id)
	ms := tick.Milliseconds()
	env := map[string]string{
		"ZOO_MY_ID":               strconv.Itoa(id),
		"ZOO_TICK_TIME":           strconv.FormatInt(ms, 10),
		"ZOO_INIT_LIMIT":          "50",
		"ZOO_SYNC_LIMIT":          "25",
		"ZOO_MIN_SESSION_TIMEOUT": strconv.FormatInt(5*ms, 10),
		"ZOO_MAX_SESSION_TIMEOUT": strconv.FormatInt(200*ms, 10),
	}
	spec := nodeSpec{name: name, role: "lock", image: zookeeperImage, env: env, port: "2181/tcp",
		nets: []*testcontainers.DockerNetwork{z.clients}, aliases: [][]string{nil},
		wait: wait.ForLog(zkReady), clock: z.cfg.ClockShim}
	if z.peers != nil {
		var servers []string
		for i := 1; i <= z.cfg.Nodes; i++ {
			servers = append(servers, fmt.Sprintf("server.%d=zk%d:2888:3888", i, i))
		}
		env["ZOO_SERVERS"] = strings.Join(servers, " ")
		spec.nets = append(spec.nets, z.peers)
		spec.aliases = append(spec.aliases, []string{name})
	}
	return spec
}

// Setup starts the ensemble and the storage node and returns once every
// server serves (srvr says leader, follower or standalone on its published
// port). On error, whatever was started is removed.
func (z *ZooKeeper) Setup(ctx context.Context) error {
	return z.setUp(ctx, func() (err error) {
		if z.clients, err = z.network(ctx, false); err != nil {
			return err
		}
		if z.cfg.Nodes > 1 {
			if z.peers, err = z.network(ctx, true); err != nil {
				return err
			}
		}
		var specs []nodeSpec
		for id := 1; id <= z.cfg.Nodes; id++ {
			specs = append(specs, z.zkSpec(id))
		}
		specs = append(specs, redisSpec("storage", "storage", z.clients, false, false))
		nodes, err := z.startAll(ctx, specs)
		if err != nil {
			return err
		}
		z.lock, z.storage = nodes[:z.cfg.Nodes], nodes[z.cfg.Nodes]
		if err := waitFor(ctx, 30*time.Second, "storage", func() error { return redisnode.Ping(z.storage.addr()) }); err != nil {
			return err
		}
		if err := z.waitServing(ctx, z.lock); err != nil {
			return err
		}
		return z.link(func(ctx context.Context, n *node) error { return z.waitServing(ctx, []*node{n}) })
	})
}

// waitServing waits until every node of nodes reports a serving mode.
func (z *ZooKeeper) waitServing(ctx context.Context, nodes []*node) error {
	return waitFor(ctx, zkServeWait, "ZooKeeper", func() error {
		var notReady []string
		for _, n := range nodes {
			if m, err := zookeeper.Mode(n.addr()); err != nil || (m != "leader" && m != "follower" && m != "standalone") {
				notReady = append(notReady, n.spec.name)
			}
		}
		if len(notReady) > 0 {
			return fmt.Errorf("%s not serving (logs in %s after the run)", strings.Join(notReady, ", "), z.cfg.LogDir)
		}
		return nil
	})
}

func (z *ZooKeeper) node(name string) (*node, error) {
	i, err := z.set.Index(name)
	if err != nil {
		return nil, err
	}
	return z.lock[i], nil
}

// Leader returns the server whose srvr reports it leader (or standalone).
func (z *ZooKeeper) Leader(ctx context.Context) (string, error) {
	for _, n := range z.lock {
		if m, err := zookeeper.Mode(n.addr()); err == nil && (m == "leader" || m == "standalone") {
			return n.spec.name, nil
		}
	}
	return "", errors.New("no ZooKeeper node reports itself leader")
}

// Isolate disconnects a server from the peers network: its quorum and
// election links fail both ways, its clients still reach it.
func (z *ZooKeeper) Isolate(ctx context.Context, name string) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	if z.peers == nil {
		return fmt.Errorf("isolate %s: a standalone server has no peers: %w", name, clusters.ErrUnsupported)
	}
	return z.disconnect(ctx, n, z.peers)
}

// Rejoin connects it again, under its alias.
func (z *ZooKeeper) Rejoin(ctx context.Context, name string) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	if z.peers == nil {
		return nil
	}
	return z.connect(ctx, n, z.peers, []string{name})
}

// SetClockOffset moves a server's wall clock through the clock shim in its
// container; it needs TopologyConfig.ClockShim.
func (z *ZooKeeper) SetClockOffset(ctx context.Context, name string, offset time.Duration) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	if n.clockFile == "" {
		return fmt.Errorf("set clock of %s: servers run without the clock shim: %w", name, clusters.ErrUnsupported)
	}
	return clusters.WriteClockOffset(n.clockFile, offset)
}
