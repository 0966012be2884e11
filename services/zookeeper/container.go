package zookeeper

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
	"github.com/lockcheck/lockcheck/containers"
)

// containerForm is the service's form for --cluster docker.
var containerForm = &clusters.ContainerForm{Images: []string{zookeeperImage.Short}, New: newContainers}

// zookeeperImage has ZooKeeper 3.8, the clock shim and an entrypoint that
// writes its configuration from the environment.
var zookeeperImage = containers.MustImage("zookeeper")

// zkReady is what a ZooKeeper server logs once its client port is bound.
const zkReady = "binding to port"

// zkServeWait bounds the wait for an ensemble to elect a leader and serve:
// three JVMs in containers on a two-core machine at load average 50 have
// taken more than the local topology's 90 s.
const zkServeWait = 180 * time.Second

// Containers is the container form of Cluster: an ensemble of
// ZooKeeper containers (tick 100 ms, sessions of 5 to 200 ticks, as the
// local one) and a redis storage container. Client ports are published on
// 127.0.0.1 through the clients network, and workers reach them through
// their own proxies; the servers talk to each other on a second, internal
// peers network, under the aliases zk1, zk2, ..., so cutting a server off
// from its peers is disconnecting it from that network while clients still
// reach it.
type Containers struct {
	containers.Stack
	clients *testcontainers.DockerNetwork
	peers   *testcontainers.DockerNetwork // nil for a standalone server
}

var (
	_ clusters.Topology    = (*Containers)(nil)
	_ clusters.FaultVerber = (*Containers)(nil)
	_ clusters.Killer      = (*Containers)(nil)
	_ clusters.Partitioner = (*Containers)(nil)
	_ clusters.Primary     = (*Containers)(nil)
	_ clusters.Isolator    = (*Containers)(nil)
	_ clusters.Pauser      = (*Containers)(nil)
	_ clusters.Clocker     = (*Containers)(nil)
)

func newContainers(cfg clusters.TopologyConfig) (clusters.Topology, error) {
	if cfg.Nodes < 1 {
		cfg.Nodes = 3
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	z := &Containers{Stack: containers.Stack{Cfg: cfg, Set: clusters.NodeSet{Kind: "ZooKeeper node"}}}
	z.Faults = clusters.FaultsOf(&z.Set)
	return z, nil
}

// tick is the ensemble's tickTime, as Cluster's default.
const tick = 100 * time.Millisecond

// zkSpec is server id of an ensemble of size nodes.
func (z *Containers) zkSpec(id int) containers.NodeSpec {
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
	spec := containers.NodeSpec{Name: name, Role: "lock", Image: zookeeperImage, Env: env, Port: "2181/tcp",
		Nets: []*testcontainers.DockerNetwork{z.clients}, Aliases: [][]string{nil},
		Wait: wait.ForLog(zkReady), Clock: z.Cfg.ClockShim}
	if z.peers != nil {
		var servers []string
		for i := 1; i <= z.Cfg.Nodes; i++ {
			servers = append(servers, fmt.Sprintf("server.%d=zk%d:2888:3888", i, i))
		}
		env["ZOO_SERVERS"] = strings.Join(servers, " ")
		spec.Nets = append(spec.Nets, z.peers)
		spec.Aliases = append(spec.Aliases, []string{name})
	}
	return spec
}

// Setup starts the ensemble and the storage node and returns once every
// server serves (srvr says leader, follower or standalone on its published
// port). On error, whatever was started is removed.
func (z *Containers) Setup(ctx context.Context) error {
	return z.SetUp(ctx, func() (err error) {
		if z.clients, err = z.Network(ctx, false); err != nil {
			return err
		}
		if z.Cfg.Nodes > 1 {
			if z.peers, err = z.Network(ctx, true); err != nil {
				return err
			}
		}
		var specs []containers.NodeSpec
		for id := 1; id <= z.Cfg.Nodes; id++ {
			specs = append(specs, z.zkSpec(id))
		}
		storage, err := containers.StorageSpec(z.clients)
		if err != nil {
			return err
		}
		specs = append(specs, storage)
		nodes, err := z.StartAll(ctx, specs)
		if err != nil {
			return err
		}
		z.Lock, z.Storage = nodes[:z.Cfg.Nodes], nodes[z.Cfg.Nodes]
		if err := containers.WaitStorage(ctx, z.Storage); err != nil {
			return err
		}
		if err := z.waitServing(ctx, z.Lock); err != nil {
			return err
		}
		return z.Link(func(ctx context.Context, n *containers.Container) error {
			return z.waitServing(ctx, []*containers.Container{n})
		})
	})
}

// waitServing waits until every node of nodes reports a serving mode.
func (z *Containers) waitServing(ctx context.Context, nodes []*containers.Container) error {
	return containers.WaitFor(ctx, zkServeWait, "ZooKeeper", func() error {
		var notReady []string
		for _, n := range nodes {
			if m, err := Mode(n.Addr()); err != nil || (m != "leader" && m != "follower" && m != "standalone") {
				notReady = append(notReady, n.Spec.Name)
			}
		}
		if len(notReady) > 0 {
			return fmt.Errorf("%s not serving (logs in %s after the run)", strings.Join(notReady, ", "), z.Cfg.LogDir)
		}
		return nil
	})
}

func (z *Containers) node(name string) (*containers.Container, error) {
	i, err := z.Set.Index(name)
	if err != nil {
		return nil, err
	}
	return z.Lock[i], nil
}

// Leader returns the server whose srvr reports it leader (or standalone).
func (z *Containers) Leader(ctx context.Context) (string, error) {
	for _, n := range z.Lock {
		if m, err := Mode(n.Addr()); err == nil && (m == "leader" || m == "standalone") {
			return n.Spec.Name, nil
		}
	}
	return "", errors.New("no ZooKeeper node reports itself leader")
}

// Isolate disconnects a server from the peers network: its quorum and
// election links fail both ways, its clients still reach it.
func (z *Containers) Isolate(ctx context.Context, name string) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	if z.peers == nil {
		return fmt.Errorf("isolate %s: a standalone server has no peers: %w", name, clusters.ErrUnsupported)
	}
	return z.Disconnect(ctx, n, z.peers)
}

// Rejoin connects it again, under its alias.
func (z *Containers) Rejoin(ctx context.Context, name string) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	if z.peers == nil {
		return nil
	}
	return z.Connect(ctx, n, z.peers, []string{name})
}

// SetClockOffset moves a server's wall clock through the clock shim in its
// container; it needs TopologyConfig.ClockShim.
func (z *Containers) SetClockOffset(ctx context.Context, name string, offset time.Duration) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	if n.ClockFile == "" {
		return fmt.Errorf("set clock of %s: servers run without the clock shim: %w", name, clusters.ErrUnsupported)
	}
	return clusters.WriteClockOffset(n.ClockFile, offset)
}
