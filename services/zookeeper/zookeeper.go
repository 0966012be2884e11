package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// Files of Debian's zookeeper and libslf4j-java packages.
const (
	Jar         = "/usr/share/java/zookeeper.jar"
	SLF4JSimple = "/usr/share/java/slf4j-simple.jar"
)

// Look returns the java binary, or an error naming the Debian
// package to install.

// zkReadyWait bounds the wait for ZooKeeper servers to serve after a start:
// three JVMs on a loaded two-core machine have taken more than 30 s.
const zkReadyWait = 90 * time.Second

func Look() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: java not found in PATH: install the Debian package default-jre-headless (scripts/deps.sh does)", clusters.ErrMissingBinary)
	}
	for _, f := range []struct{ path, pkg string }{{Jar, "zookeeper"}, {SLF4JSimple, "libslf4j-java"}} {
		if _, err := os.Stat(f.path); err != nil {
			return "", fmt.Errorf("%w: %s not found: install the Debian package %s (scripts/deps.sh does)", clusters.ErrMissingBinary, f.path, f.pkg)
		}
	}
	return java, nil
}

// Config describes a local ZooKeeper ensemble.
type Config struct {
	// Nodes is the ensemble size: 3 by default, 1 for a standalone server.
	Nodes int
	// Workers is the number of worker slots; each slot gets its own proxy
	// to each node.
	Workers int
	// LogDir receives one log per node.
	LogDir string
	// Tick is ZooKeeper's tickTime; sessions may be as short as 5 ticks.
	Tick time.Duration
	// ClockShim starts every server's JVM under the clock shim, so
	// SetClockOffset can move its wall clock (ZooKeeper times sessions
	// with a monotonic clock, so a jump should change nothing: M10).
	ClockShim bool
	// NoStorage starts no storage node: the ensemble is one part of a
	// topology whose other part keeps the protected resource (RedisZK).
	// StorageAddr is then "".
	NoStorage bool
}

// zkNode is one ZooKeeper server.
type zkNode struct {
	*clusters.Member
	quorum, election int
	conf             string
}

// clockFile is the clock shim's offset file of a server.
func (n *zkNode) clockFile() string { return filepath.Join(n.Dir, "clock") }

// ZooKeeper is a Cluster of local ZooKeeper servers (QuorumPeerMain, one JVM
// each) plus a redis-server storage node for the protected resource. Every
// worker-to-node link, and every server-to-server link (quorum and leader
// election), goes through its own Toxiproxy proxy.
type Cluster struct {
	cfg   Config
	java  string
	shim  string // the clock shim's path, "" when not under it
	nodes []*zkNode
	// Ensemble gives Kill, Restart, PauseNode, ResumeNode, Partition, Heal,
	// Isolate and Rejoin. Isolate stops the quorum and election links'
	// proxies rather than adding a timeout toxic: with a toxic the proxy
	// still completes the TCP handshake upstream, and ZooKeeper's election
	// listener reads a new peer's first message synchronously, so every
	// silent connection from the isolated node would block it for its read
	// timeout and keep the healthy nodes from electing, which no real
	// partition does (the SYN never arrives).
	clusters.Ensemble
}

var _ clusters.Clocker = (*Cluster)(nil)

// Cluster offers the nemeses what every ensemble does, the cut of links
// between its servers and a restart with no data.
var (
	_ clusters.Replicated = (*Cluster)(nil)
	_ clusters.PeerCutter = (*Cluster)(nil)
	_ clusters.Wiper      = (*Cluster)(nil)
)

// New returns an unstarted ensemble.
func New(cfg Config) *Cluster {
	cfg.Nodes, cfg.Workers = clusters.EnsembleSize(cfg.Nodes, cfg.Workers)
	if cfg.Tick <= 0 {
		cfg.Tick = 100 * time.Millisecond
	}
	z := &Cluster{cfg: cfg}
	z.Init("ZooKeeper node", cfg.LogDir, false, func(from, to int) []string {
		return []string{peerProxy(from, to, "quorum"), peerProxy(from, to, "election")}
	})
	return z
}

func peerProxy(from, to int, kind string) string {
	return fmt.Sprintf("zk%d-zk%d-%s", from, to, kind)
}

// Setup starts the ensemble and the storage node and returns once a leader
// is elected and every node serves (srvr reports leader, follower or
// standalone). On error, whatever was started is stopped. A port taken by
// someone else between choosing it and the JVM binding it is retried with
// fresh ports.
func (z *Cluster) Setup(ctx context.Context) error {
	return z.RetrySetup(ctx, z.setupOnce, func() { z.nodes = nil })
}

func (z *Cluster) setupOnce(ctx context.Context) (err error) {
	if z.java, err = Look(); err != nil {
		return err
	}
	return z.SetUp(ctx, "zk-", z.Teardown, func() (err error) {
		for i := 1; i <= z.cfg.Nodes; i++ {
			n := &zkNode{}
			if n.Member, err = z.AddMember("zk", i, &n.quorum, &n.election); err != nil {
				return err
			}
			z.nodes = append(z.nodes, n)
		}
		if err := z.writeConfigs(); err != nil {
			return err
		}
		if z.cfg.ClockShim {
			if z.shim, err = clusters.ClockShim(); err != nil {
				return err
			}
			for _, n := range z.nodes {
				if err := clusters.WriteClockOffset(n.clockFile(), 0); err != nil {
					return err
				}
			}
		}
		return z.Launch(ctx, z.cfg.Workers, z.cfg.NoStorage, func(ctx context.Context, i int) error { return z.startNode(ctx, z.nodes[i]) },
			z.waitReady)
	})
}

// writeConfigs writes each node's zoo.cfg. A node's own server line has its
// real ports; its peers' lines have the addresses of its proxies to them, so
// every link between two servers can be cut on its own.
func (z *Cluster) writeConfigs() error {
	tick := z.cfg.Tick.Milliseconds()
	for _, n := range z.nodes {
		if err := os.MkdirAll(n.Dir, 0o755); err != nil {
			return fmt.Errorf("create %s dir: %w", n.Name, err)
		}
		if err := os.WriteFile(filepath.Join(n.Dir, "myid"), []byte(strconv.Itoa(n.ID)+"\n"), 0o644); err != nil {
			return fmt.Errorf("write %s myid: %w", n.Name, err)
		}
		lines := []string{
			"tickTime=" + strconv.FormatInt(tick, 10),
			"initLimit=20",
			"syncLimit=10",
			"dataDir=" + n.Dir,
			"clientPort=" + strconv.Itoa(n.Client),
			"clientPortAddress=127.0.0.1",
			"minSessionTimeout=" + strconv.FormatInt(5*tick, 10),
			"maxSessionTimeout=" + strconv.FormatInt(200*tick, 10),
			"admin.enableServer=false",
			"4lw.commands.whitelist=srvr,ruok,mntr",
			"electionPortBindRetry=10",
		}
		if len(z.nodes) > 1 {
			for _, peer := range z.nodes {
				q, e := strconv.Itoa(peer.quorum), strconv.Itoa(peer.election)
				if peer.ID != n.ID {
					qa, err := z.Proxies.Add(peerProxy(n.ID, peer.ID, "quorum"), net.JoinHostPort("127.0.0.1", q))
					if err != nil {
						return err
					}
					ea, err := z.Proxies.Add(peerProxy(n.ID, peer.ID, "election"), net.JoinHostPort("127.0.0.1", e))
					if err != nil {
						return err
					}
					q, e = port(qa), port(ea)
				}
				lines = append(lines, fmt.Sprintf("server.%d=127.0.0.1:%s:%s", peer.ID, q, e))
			}
		}
		n.conf = filepath.Join(n.Dir, "zoo.cfg")
		if err := os.WriteFile(n.conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("write %s config: %w", n.Name, err)
		}
	}
	return nil
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// startNode starts one server's JVM in its own process group.
func (z *Cluster) startNode(ctx context.Context, n *zkNode) error {
	argv := []string{z.java, "-Xms32m", "-Xmx160m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.admin.enableServer=false", "-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-cp", "/etc/zookeeper/conf:" + Jar + ":" + SLF4JSimple,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", n.conf}
	var env []string
	if z.shim != "" {
		env = clusters.ClockShimEnvFor(z.shim, n.clockFile())
	}
	return clusters.StartMember(ctx, n.Member, argv, env)
}

// waitReady waits until every member in ms reports a serving mode.
func (z *Cluster) waitReady(ctx context.Context, ms []*clusters.Member) error {
	return z.WaitServing(ctx, "ZooKeeper", ms, zkReadyWait, "Address already in use", "not serving", func(m *clusters.Member) bool {
		mode, err := Mode(m.ClientAddr())
		return err == nil && (mode == "leader" || mode == "follower" || mode == "standalone")
	})
}

// Mode asks a ZooKeeper server with the srvr four-letter word what it is:
// leader, follower, standalone, or an error while it is not serving.
func Mode(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 64*1024))
	if err != nil && len(b) == 0 {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("not serving: %q", strings.TrimSpace(string(b)))
}

// SetClockOffset moves a server's wall clock to real time + offset. It
// needs the ensemble to run under the clock shim (Config.ClockShim).
func (z *Cluster) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	return z.NodeSet.SetClock(z.shim != "", "servers", node, offset, func(i int) string { return z.nodes[i].clockFile() })
}

// Leader returns the name of the node that reports itself leader (the only
// node of a standalone server).
func (z *Cluster) Leader(ctx context.Context) (string, error) {
	for _, n := range z.nodes {
		if m, err := Mode(n.ClientAddr()); err == nil && (m == "leader" || m == "standalone") {
			return n.Name, nil
		}
	}
	return "", errors.New("no ZooKeeper node reports itself leader")
}

// Teardown stops the proxies, every JVM and the storage node, and removes the
// data directory. It is idempotent.
func (z *Cluster) Teardown(ctx context.Context) error {
	return z.TeardownWith(ctx, "zk-", func() {}, func() {})
}
