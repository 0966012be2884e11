package clusters

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
	"sync"
	"syscall"
	"time"
)

// Files of Debian's zookeeper and libslf4j-java packages.
const (
	ZooKeeperJar = "/usr/share/java/zookeeper.jar"
	SLF4JSimple  = "/usr/share/java/slf4j-simple.jar"
)

// LookZooKeeper returns the java binary, or an error naming the Debian
// package to install.

// zkReadyWait bounds the wait for ZooKeeper servers to serve after a start:
// three JVMs on a loaded two-core machine have taken more than 30 s.
const zkReadyWait = 90 * time.Second

func LookZooKeeper() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: java not found in PATH: install the Debian package default-jre-headless (scripts/deps.sh does)", ErrMissingBinary)
	}
	for _, f := range []struct{ path, pkg string }{{ZooKeeperJar, "zookeeper"}, {SLF4JSimple, "libslf4j-java"}} {
		if _, err := os.Stat(f.path); err != nil {
			return "", fmt.Errorf("%w: %s not found: install the Debian package %s (scripts/deps.sh does)", ErrMissingBinary, f.path, f.pkg)
		}
	}
	return java, nil
}

// ZooKeeperConfig describes a local ZooKeeper ensemble.
type ZooKeeperConfig struct {
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
	id                       int
	name                     string
	client, quorum, election int
	dir, conf, logPath       string
	mu                       sync.Mutex
	proc                     *Proc
	log                      *os.File
}

// clockFile is the clock shim's offset file of a server.
func (n *zkNode) clockFile() string { return filepath.Join(n.dir, "clock") }

func (n *zkNode) clientAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.client)) }

// ZooKeeper is a Cluster of local ZooKeeper servers (QuorumPeerMain, one JVM
// each) plus a redis-server storage node for the protected resource. Every
// worker-to-node link, and every server-to-server link (quorum and leader
// election), goes through its own Toxiproxy proxy.
type ZooKeeper struct {
	cfg     ZooKeeperConfig
	java    string
	shim    string // the clock shim's path, "" when not under it
	tmp     string
	nodes   []*zkNode
	storage *RedisServer
	proxyLg *os.File
	// memberLinks gives Partition, Heal, Isolate and Rejoin. Isolate stops
	// the quorum and election links' proxies rather than adding a timeout
	// toxic: with a toxic the proxy still completes the TCP handshake
	// upstream, and ZooKeeper's election listener reads a new peer's first
	// message synchronously, so every silent connection from the isolated
	// node would block it for its read timeout and keep the healthy nodes
	// from electing, which no real partition does (the SYN never arrives).
	memberLinks

	mu       sync.Mutex
	torn     bool
	slotAddr [][]string
}

var (
	_ Cluster     = (*ZooKeeper)(nil)
	_ Killer      = (*ZooKeeper)(nil)
	_ Partitioner = (*ZooKeeper)(nil)
	_ Primary     = (*ZooKeeper)(nil)
	_ Isolator    = (*ZooKeeper)(nil)
	_ Pauser      = (*ZooKeeper)(nil)
	_ Clocker     = (*ZooKeeper)(nil)
)

// NewZooKeeper returns an unstarted ensemble.
func NewZooKeeper(cfg ZooKeeperConfig) *ZooKeeper {
	if cfg.Nodes < 1 {
		cfg.Nodes = 3
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 100 * time.Millisecond
	}
	z := &ZooKeeper{cfg: cfg}
	z.memberLinks = memberLinks{workers: cfg.Workers, client: clientProxy,
		memberIDs: func() []int {
			ids := make([]int, len(z.nodes))
			for i, n := range z.nodes {
				ids[i] = n.id
			}
			return ids
		},
		idOf: func(name string) (int, error) {
			n, err := z.node(name)
			if err != nil {
				return 0, err
			}
			return n.id, nil
		},
		peer: func(from, to int) []string {
			return []string{peerProxy(from, to, "quorum"), peerProxy(from, to, "election")}
		}}
	return z
}

func clientProxy(slot, id int) string { return fmt.Sprintf("w%d-zk%d", slot, id) }
func peerProxy(from, to int, kind string) string {
	return fmt.Sprintf("zk%d-zk%d-%s", from, to, kind)
}

// Setup starts the ensemble and the storage node and returns once a leader
// is elected and every node serves (srvr reports leader, follower or
// standalone). On error, whatever was started is stopped. A port taken by
// someone else between choosing it and the JVM binding it is retried with
// fresh ports.
func (z *ZooKeeper) Setup(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = z.setupOnce(ctx); err == nil || !errors.Is(err, errPortInUse) {
			return err
		}
		z.mu.Lock()
		z.torn, z.nodes, z.storage, z.proxies, z.proxyLg, z.slotAddr = false, nil, nil, nil, nil, nil
		z.mu.Unlock()
	}
	return err
}

func (z *ZooKeeper) setupOnce(ctx context.Context) (err error) {
	if z.java, err = LookZooKeeper(); err != nil {
		return err
	}
	if _, err := LookRedis(); err != nil {
		return err
	}
	if z.tmp, err = TempDir("zk-"); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	defer func() {
		if err != nil {
			_ = z.Teardown(context.WithoutCancel(ctx))
		}
	}()
	if z.proxies, z.proxyLg, err = OpenProxies(z.cfg.LogDir); err != nil {
		return err
	}
	for i := 1; i <= z.cfg.Nodes; i++ {
		n := &zkNode{id: i, name: fmt.Sprintf("zk%d", i), dir: filepath.Join(z.tmp, fmt.Sprintf("zk%d", i)),
			logPath: filepath.Join(z.cfg.LogDir, fmt.Sprintf("zk%d.log", i))}
		_ = os.Remove(n.logPath) // a retried setup starts a fresh log
		for _, p := range []*int{&n.client, &n.quorum, &n.election} {
			if *p, err = FreePort(); err != nil {
				return err
			}
		}
		z.nodes = append(z.nodes, n)
	}
	if err := z.writeConfigs(); err != nil {
		return err
	}
	if z.cfg.ClockShim {
		if z.shim, err = ClockShim(); err != nil {
			return err
		}
		for _, n := range z.nodes {
			if err := WriteClockOffset(n.clockFile(), 0); err != nil {
				return err
			}
		}
	}
	for _, n := range z.nodes {
		if err := z.startNode(ctx, n); err != nil {
			return err
		}
	}
	if err := z.waitReady(ctx, z.nodes, zkReadyWait); err != nil {
		return err
	}
	if !z.cfg.NoStorage {
		z.storage = &RedisServer{Name: "storage", Dir: filepath.Join(z.tmp, "storage"),
			LogPath: filepath.Join(z.cfg.LogDir, "storage.log")}
		if err := z.storage.Start(ctx); err != nil {
			return err
		}
	}
	z.slotAddr = make([][]string, z.cfg.Workers)
	for slot := 0; slot < z.cfg.Workers; slot++ {
		for _, n := range z.nodes {
			addr, err := z.proxies.Add(clientProxy(slot, n.id), n.clientAddr())
			if err != nil {
				return err
			}
			z.slotAddr[slot] = append(z.slotAddr[slot], addr)
		}
	}
	return nil
}

// writeConfigs writes each node's zoo.cfg. A node's own server line has its
// real ports; its peers' lines have the addresses of its proxies to them, so
// every link between two servers can be cut on its own.
func (z *ZooKeeper) writeConfigs() error {
	tick := z.cfg.Tick.Milliseconds()
	for _, n := range z.nodes {
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			return fmt.Errorf("create %s dir: %w", n.name, err)
		}
		if err := os.WriteFile(filepath.Join(n.dir, "myid"), []byte(strconv.Itoa(n.id)+"\n"), 0o644); err != nil {
			return fmt.Errorf("write %s myid: %w", n.name, err)
		}
		lines := []string{
			"tickTime=" + strconv.FormatInt(tick, 10),
			"initLimit=20",
			"syncLimit=10",
			"dataDir=" + n.dir,
			"clientPort=" + strconv.Itoa(n.client),
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
				if peer.id != n.id {
					qa, err := z.proxies.Add(peerProxy(n.id, peer.id, "quorum"), net.JoinHostPort("127.0.0.1", q))
					if err != nil {
						return err
					}
					ea, err := z.proxies.Add(peerProxy(n.id, peer.id, "election"), net.JoinHostPort("127.0.0.1", e))
					if err != nil {
						return err
					}
					q, e = port(qa), port(ea)
				}
				lines = append(lines, fmt.Sprintf("server.%d=127.0.0.1:%s:%s", peer.id, q, e))
			}
		}
		n.conf = filepath.Join(n.dir, "zoo.cfg")
		if err := os.WriteFile(n.conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("write %s config: %w", n.name, err)
		}
	}
	return nil
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// startNode starts one server's JVM in its own process group.
func (z *ZooKeeper) startNode(ctx context.Context, n *zkNode) error {
	log, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s log: %w", n.name, err)
	}
	argv := []string{z.java, "-Xms32m", "-Xmx160m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.admin.enableServer=false", "-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-cp", "/etc/zookeeper/conf:" + ZooKeeperJar + ":" + SLF4JSimple,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", n.conf}
	var env []string
	if z.shim != "" {
		env = ClockShimEnvFor(z.shim, n.clockFile())
	}
	proc, err := StartProcEnv(ctx, n.name, argv, env, n.dir, log)
	if err != nil {
		log.Close()
		return err
	}
	n.mu.Lock()
	n.proc, n.log = proc, log
	n.mu.Unlock()
	return nil
}

// waitReady waits until every node in nodes reports a serving mode.
func (z *ZooKeeper) waitReady(ctx context.Context, nodes []*zkNode, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var notReady []string
		for _, n := range nodes {
			n.mu.Lock()
			p := n.proc
			n.mu.Unlock()
			if p == nil || p.Exited() {
				if b, _ := os.ReadFile(n.logPath); strings.Contains(string(b), "Address already in use") {
					return fmt.Errorf("%s exited during start-up: %w (log %s)", n.name, errPortInUse, n.logPath)
				}
				return fmt.Errorf("%s exited during start-up (log %s)", n.name, n.logPath)
			}
			if mode, err := Mode(n.clientAddr()); err != nil || (mode != "leader" && mode != "follower" && mode != "standalone") {
				notReady = append(notReady, n.name)
			}
		}
		if len(notReady) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ZooKeeper not ready within %s: %s not serving (logs in %s)", timeout, strings.Join(notReady, ", "), z.cfg.LogDir)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
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

// Nodes lists the ZooKeeper servers, then the storage node.
func (z *ZooKeeper) Nodes() []Node {
	var nodes []Node
	for _, n := range z.nodes {
		nodes = append(nodes, Node{Name: n.name, Role: "lock", Addr: n.clientAddr()})
	}
	if z.storage != nil {
		nodes = append(nodes, Node{Name: "storage", Role: "storage", Addr: z.storage.Addr()})
	}
	return nodes
}

// LockAddrs returns the proxy addresses worker slot uses, one per server.
func (z *ZooKeeper) LockAddrs(slot int) []string { return append([]string(nil), z.slotAddr[slot]...) }

// StorageAddr returns the storage node's address, "" without one
// (ZooKeeperConfig.NoStorage).
func (z *ZooKeeper) StorageAddr() string {
	if z.storage == nil {
		return ""
	}
	return z.storage.Addr()
}

// SetClockOffset moves a server's wall clock to real time + offset. It
// needs the ensemble to run under the clock shim (ZooKeeperConfig.ClockShim).
func (z *ZooKeeper) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	if z.shim == "" {
		return fmt.Errorf("set clock of %s: servers run without the clock shim: %w", node, ErrUnsupported)
	}
	n, err := z.node(node)
	if err != nil {
		return err
	}
	return WriteClockOffset(n.clockFile(), offset)
}

func (z *ZooKeeper) node(name string) (*zkNode, error) {
	for _, n := range z.nodes {
		if n.name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no ZooKeeper node named %q", name)
}

// Leader returns the name of the node that reports itself leader (the only
// node of a standalone server).
func (z *ZooKeeper) Leader(ctx context.Context) (string, error) {
	for _, n := range z.nodes {
		if m, err := Mode(n.clientAddr()); err == nil && (m == "leader" || m == "standalone") {
			return n.name, nil
		}
	}
	return "", errors.New("no ZooKeeper node reports itself leader")
}

// Kill stops the clients' proxies to a node, so its connections close and
// new ones are refused, and SIGKILLs its JVM.
func (z *ZooKeeper) Kill(ctx context.Context, name string) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	if err := z.proxies.DisableAll(z.clientLinks(n.id)); err != nil {
		return err
	}
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p != nil {
		if err := p.Kill(); err != nil {
			return fmt.Errorf("kill %s: %w", name, err)
		}
	}
	if n.log != nil {
		n.log.Close()
	}
	return nil
}

// Restart starts a killed node with its old data and waits until it serves
// again, then lets clients reach it.
func (z *ZooKeeper) Restart(ctx context.Context, name string) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	n.mu.Lock()
	running := n.proc != nil && !n.proc.Exited()
	n.mu.Unlock()
	if !running {
		if err := z.startNode(ctx, n); err != nil {
			return fmt.Errorf("restart %s: %w", name, err)
		}
		if err := z.waitReady(ctx, []*zkNode{n}, zkReadyWait); err != nil {
			return fmt.Errorf("restart %s: %w", name, err)
		}
	}
	return z.proxies.EnableAll(z.clientLinks(n.id))
}

// PauseNode stops a node's JVM with SIGSTOP.
func (z *ZooKeeper) PauseNode(ctx context.Context, name string) error { return z.signal(name, true) }

// ResumeNode continues a paused node's JVM with SIGCONT.
func (z *ZooKeeper) ResumeNode(ctx context.Context, name string) error { return z.signal(name, false) }

func (z *ZooKeeper) signal(name string, stop bool) error {
	n, err := z.node(name)
	if err != nil {
		return err
	}
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s is not running", name)
	}
	if stop {
		return p.Signal(sigStop)
	}
	return p.Signal(sigCont)
}

// Pids returns the pids of the running server processes, by node name.
func (z *ZooKeeper) Pids() map[string]int {
	pids := make(map[string]int)
	for _, n := range z.nodes {
		n.mu.Lock()
		if n.proc != nil && !n.proc.Exited() {
			pids[n.name] = n.proc.Pid()
		}
		n.mu.Unlock()
	}
	if z.storage != nil {
		if pid := z.storage.Pid(); pid != 0 {
			pids["storage"] = pid
		}
	}
	return pids
}

// Teardown stops the proxies, every JVM and the storage node, and removes the
// data directory. It is idempotent.
func (z *ZooKeeper) Teardown(ctx context.Context) error {
	z.mu.Lock()
	if z.torn {
		z.mu.Unlock()
		return nil
	}
	z.torn = true
	z.mu.Unlock()
	if z.proxies != nil {
		z.proxies.Close()
	}
	if z.proxyLg != nil {
		z.proxyLg.Close()
	}
	var errs []error
	for _, n := range z.nodes {
		n.mu.Lock()
		p, log := n.proc, n.log
		n.mu.Unlock()
		if p != nil {
			errs = append(errs, p.Stop(ctx, 5*time.Second))
		}
		if log != nil {
			log.Close()
		}
	}
	if z.storage != nil {
		errs = append(errs, z.storage.Stop(ctx))
	}
	if z.tmp != "" && strings.Contains(z.tmp, "lockcheck-zk-") {
		errs = append(errs, os.RemoveAll(z.tmp))
	}
	return errors.Join(errs...)
}

const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)
