package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/redis/go-redis/v9"
)

// SentinelBinary is the Sentinel binary the Sentinel topology runs.
const SentinelBinary = "redis-sentinel"

// DefaultMasterName is the name the sentinels monitor the master under.
const DefaultMasterName = "lockmaster"

// LookSentinel returns the path of redis-sentinel, or an error naming the
// Debian package to install.
func LookSentinel() (string, error) {
	path, err := exec.LookPath(SentinelBinary)
	if err != nil {
		return "", fmt.Errorf("%w: %s not found in PATH: install the Debian package redis-sentinel (scripts/deps.sh does)", clusters.ErrMissingBinary, SentinelBinary)
	}
	return path, nil
}

// SentinelConfig describes a Sentinel topology: one master, two replicas and
// three sentinels, plus the storage node.
type SentinelConfig struct {
	// Workers is the number of worker slots; each slot gets its own proxy to
	// every redis node and every sentinel.
	Workers int
	// LogDir receives one log per node.
	LogDir string
	// Persist makes the redis nodes keep an append-only file with fsync
	// always, as the lock nodes of the plain Redis cluster do.
	Persist bool
	// MasterName is the monitored master's name (DefaultMasterName).
	MasterName string
	// DownAfter is Sentinel's down-after-milliseconds (1 s by default).
	DownAfter time.Duration
	// FailoverTimeout is Sentinel's failover-timeout (3 s by default).
	FailoverTimeout time.Duration
	// clusters.ClockShim starts the redis nodes (not the sentinels, not the storage
	// node) under the clock shim, so SetClockOffset can move their clocks.
	ClockShim bool
}

// SentinelLinks is what a worker slot needs to find the master: its own
// proxies to the sentinels, the master's name, and the map from every
// address the sentinels hand out to the slot's own proxy for it.
type SentinelLinks struct {
	Addrs      []string
	MasterName string
	AddrMap    map[string]string
}

// sentinelProc is one redis-sentinel process.
type sentinelProc struct {
	name, dir, logPath string
	port               int
	front              string // the address it announces to the other sentinels (clusters.PeerFronts)
	clusters.ServerProc
}

func (s *sentinelProc) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Sentinel is a clusters.Cluster of one redis master, two replicas and three
// sentinels, all local processes. Every redis node announces a "peer"
// address (replica-announce-ip/port), a front (clusters.PeerFronts) in front of its
// peer proxy: replicas replicate from the master's and the sentinels
// monitor it, so the sentinels only ever learn and hand out peer addresses,
// and cutting one peer proxy cuts a node off from its replicas and
// sentinels. Each sentinel announces a front of its own to the others
// (sentinel announce-ip/port). A front knows which server dialed it, so a
// pair of servers can be cut (clusters.PeerCutter). Each worker slot has its own
// proxy to every redis node and every sentinel; SentinelLinks maps the
// announced addresses to them.
type Sentinel struct {
	cfg     SentinelConfig
	redis   []*RedisServer
	sents   []*sentinelProc
	storage *RedisServer
	peer    []string // redis node -> announced peer proxy address
	// sentSet holds the sentinels' proxies; the lock nodes' set the
	// redis nodes'.
	sentSet clusters.NodeSet
	// fronts stand at the addresses the servers announce to one another
	// (s.peer, each sentinel's front), so that pairs of them can be cut
	// (clusters.PeerCutter).
	fronts *clusters.PeerFronts
	clusters.Local
	reason clusters.HeldCuts // under mu
}

var (
	_ clusters.Cluster     = (*Sentinel)(nil)
	_ clusters.Killer      = (*Sentinel)(nil)
	_ clusters.Partitioner = (*Sentinel)(nil)
	_ clusters.Primary     = (*Sentinel)(nil)
	_ clusters.Isolator    = (*Sentinel)(nil)
	_ clusters.Promoter    = (*Sentinel)(nil)
)

// NewSentinel returns an unstarted Sentinel topology.
func NewSentinel(cfg SentinelConfig) *Sentinel {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.MasterName == "" {
		cfg.MasterName = DefaultMasterName
	}
	if cfg.DownAfter <= 0 {
		cfg.DownAfter = time.Second
	}
	if cfg.FailoverTimeout <= 0 {
		cfg.FailoverTimeout = 3 * time.Second
	}
	return &Sentinel{cfg: cfg, reason: make(clusters.HeldCuts), Local: clusters.Local{NodeSet: clusters.NodeSet{Kind: "redis node"}}}
}

const (
	sentinelReplicas  = 2
	sentinelSentinels = 3
	sentinelQuorum    = 2
	// sentinelReadyWait bounds each stage of Setup.
	sentinelReadyWait = 20 * time.Second
)

// announce is the config of redis node j that makes it announce its peer
// proxy to its master (and so to the sentinels), and sync replicas at once.
func (s *Sentinel) announce(j int) []string {
	_, port, _ := net.SplitHostPort(s.peer[j])
	return []string{"replica-announce-ip 127.0.0.1", "replica-announce-port " + port, "repl-diskless-sync-delay 0"}
}

func peerName(j int) string { return fmt.Sprintf("peer-redis%d", j) }

// Setup starts the redis nodes and makes redis0 the master of the other
// two, starts the sentinels, and returns once every sentinel names redis0 as
// master and sees both replicas and the other two sentinels. On error,
// whatever was started is stopped.
func (s *Sentinel) Setup(ctx context.Context) (err error) {
	if _, err := LookRedis(); err != nil {
		return err
	}
	bin, err := LookSentinel()
	if err != nil {
		return err
	}
	return s.SetUp(ctx, "sentinel-", s.Teardown, func() (err error) {
		if err := s.OpenProxies(s.cfg.LogDir); err != nil {
			return err
		}
		shim := ""
		if s.cfg.ClockShim {
			if shim, err = clusters.ClockShim(); err != nil {
				return err
			}
		}
		if s.redis, err = newRedisServers(s.DataDir, s.cfg.LogDir, "redis", sentinelReplicas+1, s.cfg.Persist, shim); err != nil {
			return err
		}
		s.storage = NewRedisServer(s.DataDir, s.cfg.LogDir, "storage", false)
		for k := 0; k < sentinelSentinels; k++ {
			s.sents = append(s.sents, &sentinelProc{name: fmt.Sprintf("sentinel%d", k), dir: filepath.Join(s.DataDir, fmt.Sprintf("sentinel%d", k)),
				logPath: filepath.Join(s.cfg.LogDir, fmt.Sprintf("sentinel%d.log", k))})
		}
		s.fronts = clusters.NewPeerFronts(s.PeerNodes(), s.Pids)
		for _, r := range append(append([]*RedisServer(nil), s.redis...), s.storage) {
			if err := r.Start(ctx); err != nil {
				return err
			}
		}
		for j, r := range s.redis {
			proxy, err := s.Proxies.Add(peerName(j), r.Addr())
			if err != nil {
				return err
			}
			addr, err := s.fronts.Add(r.Name, func() string { return proxy })
			if err != nil {
				return err
			}
			s.peer = append(s.peer, addr)
			_, port, _ := net.SplitHostPort(addr)
			// Extra is written into the config of every later start (Restart).
			r.Extra = s.announce(j)
			// A full sync starts at once, not after the default 5 s delay.
			if err := redisDo(ctx, r.Addr(), "CONFIG", "SET", "replica-announce-ip", "127.0.0.1", "replica-announce-port", port,
				"repl-diskless-sync-delay", "0"); err != nil {
				return fmt.Errorf("announce %s as %s: %w", r.Name, addr, err)
			}
		}
		_, mport, _ := net.SplitHostPort(s.peer[0])
		for _, r := range s.redis[1:] {
			if err := redisDo(ctx, r.Addr(), "REPLICAOF", "127.0.0.1", mport); err != nil {
				return fmt.Errorf("make %s a replica of %s: %w", r.Name, s.redis[0].Name, err)
			}
		}
		if err := s.waitReplicas(ctx, s.redis[0], sentinelReplicas, sentinelReadyWait); err != nil {
			return err
		}
		for _, sp := range s.sents {
			if sp.front, err = s.fronts.Add(sp.name, sp.addr); err != nil {
				return err
			}
			if err := s.startSentinel(ctx, bin, sp); err != nil {
				return err
			}
		}
		if err := s.waitSentinels(ctx, sentinelReadyWait); err != nil {
			return err
		}
		if err := s.NodeSet.Link(s.Proxies, s.cfg.Workers, redisSetNodes(s.redis, func(j int) []string { return []string{peerName(j)} }, s.restarter)); err != nil {
			return err
		}
		sents := make([]clusters.SetNode, len(s.sents))
		for k, sp := range s.sents {
			sents[k] = clusters.SetNode{Name: sp.name, Addr: sp.addr()}
		}
		return s.sentSet.Link(s.Proxies, s.cfg.Workers, sents)
	})
}

// restarter starts redis node j again on its old port, as a replica of
// the master the sentinels name when that is another node (as Sentinel
// would have rewritten its config had it been up).
func (s *Sentinel) restarter(j int, r *RedisServer) func(context.Context) error {
	return func(ctx context.Context) error {
		extra := s.announce(j)
		if leader, err := s.Leader(ctx); err == nil && leader != r.Name {
			li, _, _ := s.redisNode(leader)
			_, port, _ := net.SplitHostPort(s.peer[li])
			extra = append(extra, "replicaof 127.0.0.1 "+port)
		}
		r.Extra = extra
		return r.Start(ctx)
	}
}

// sentinelConfig is a sentinel's config file. Sentinel rewrites it (its id,
// the known replicas and sentinels, the current epoch), so it must be a
// writable file of its own.
func (s *Sentinel) sentinelConfig(sp *sentinelProc) string {
	_, mport, _ := net.SplitHostPort(s.peer[0])
	m := s.cfg.MasterName
	lines := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(sp.port),
		"daemonize no",
		"dir " + sp.dir,
		"logfile \"\"",
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %s %d", m, mport, sentinelQuorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", m, s.cfg.DownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", m, s.cfg.FailoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", m),
		"sentinel announce-ip 127.0.0.1",
		"sentinel announce-port " + sentinelFrontPort(sp),
	}
	return strings.Join(lines, "\n") + "\n"
}

// startSentinel starts one sentinel on a free port (another port when the
// chosen one was taken meanwhile) and waits until it answers PING.
func (s *Sentinel) startSentinel(ctx context.Context, bin string, sp *sentinelProc) error {
	if err := os.MkdirAll(sp.dir, 0o755); err != nil {
		return fmt.Errorf("create %s dir: %w", sp.name, err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := clusters.FreePort()
		if err != nil {
			return err
		}
		sp.port = port
		conf := filepath.Join(sp.dir, "sentinel.conf")
		if err := os.WriteFile(conf, []byte(s.sentinelConfig(sp)), 0o644); err != nil {
			return fmt.Errorf("write %s config: %w", sp.name, err)
		}
		proc, err := sp.StartLogged(ctx, sp.name, sp.logPath, []string{bin, conf}, nil, sp.dir)
		if err != nil {
			return err
		}
		if lastErr = waitRedis(ctx, sp.addr(), proc, 10*time.Second); lastErr == nil {
			return nil
		}
		_ = proc.Kill()
		sp.CloseLog()
		if b, _ := os.ReadFile(sp.logPath); !strings.Contains(string(b), "Address already in use") {
			break
		}
	}
	return fmt.Errorf("start %s on %s (log %s): %w", sp.name, sp.addr(), sp.logPath, lastErr)
}

// waitReplicas waits until master reports n online replicas at their peer
// proxy addresses.
func (s *Sentinel) waitReplicas(ctx context.Context, master *RedisServer, n int, timeout time.Duration) error {
	c := nodeClient(master.Addr())
	defer c.Close()
	return clusters.Poll(ctx, timeout, func() error {
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		online := 0
		for _, line := range strings.Split(info, "\n") {
			if strings.HasPrefix(line, "slave") && strings.Contains(line, "state=online") {
				online++
			}
		}
		if online < n {
			return fmt.Errorf("%s has %d of %d replicas online", master.Name, online, n)
		}
		return nil
	}, "replication")
}

// waitSentinels waits until every sentinel names the same master, sees
// both replicas as healthy and knows the other sentinels.
func (s *Sentinel) waitSentinels(ctx context.Context, timeout time.Duration) error {
	return clusters.PollEach(ctx, timeout, "sentinels", len(s.sents), func(k int) (string, error) {
		return s.sents[k].name, s.sentinelReady(ctx, s.sents[k])
	})
}

func (s *Sentinel) sentinelReady(ctx context.Context, sp *sentinelProc) error {
	c := sentinelClient(sp.addr())
	defer c.Close()
	m, err := c.GetMasterAddrByName(ctx, s.cfg.MasterName).Result()
	if err != nil {
		return err
	}
	if addr := net.JoinHostPort(m[0], m[1]); addr != s.peer[0] {
		return fmt.Errorf("names master %s, want %s", addr, s.peer[0])
	}
	reps, err := c.Replicas(ctx, s.cfg.MasterName).Result()
	if err != nil {
		return err
	}
	good := 0
	for _, r := range reps {
		if r["flags"] == "slave" && r["master-link-status"] == "ok" {
			good++
		}
	}
	if good < sentinelReplicas {
		return fmt.Errorf("sees %d of %d replicas healthy", good, sentinelReplicas)
	}
	peers, err := c.Sentinels(ctx, s.cfg.MasterName).Result()
	if err != nil {
		return err
	}
	if len(peers) < sentinelSentinels-1 {
		return fmt.Errorf("knows %d of %d other sentinels", len(peers), sentinelSentinels-1)
	}
	return nil
}

// nodeClient returns a go-redis client for the harness's own commands to a
// server, with short timeouts and no retries.
func nodeClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, PoolSize: 1})
}

func sentinelClient(addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, PoolSize: 1})
}

// redisDo sends one command to the server at addr and expects no error.
func redisDo(ctx context.Context, addr string, args ...any) error {
	c := nodeClient(addr)
	defer c.Close()
	return c.Do(ctx, args...).Err()
}

// Nodes lists the redis nodes (role "lock"), the sentinels (role
// "sentinel") and the storage node.
func (s *Sentinel) Nodes() []clusters.Node {
	var sents []clusters.Node
	for _, sp := range s.sents {
		sents = append(sents, clusters.Node{Name: sp.name, Role: "sentinel", Addr: sp.addr()})
	}
	return NodeList(s.storage, s.redis, sents...)
}

// LockAddrs returns worker slot's proxies to the redis nodes. A client that
// follows failovers uses SentinelLinks instead.
func (s *Sentinel) LockAddrs(slot int) []string { return s.NodeSet.LockAddrs(slot) }

// StorageAddr returns the storage node's address (no proxy, no fault).
func (s *Sentinel) StorageAddr() string { return s.storage.Addr() }

// SentinelLinks returns worker slot's proxies to the sentinels, the master
// name, and the map from each announced address (a redis node's peer
// address, a sentinel's own address and its front) to the slot's proxy for
// that node.
func (s *Sentinel) SentinelLinks(slot int) SentinelLinks {
	m := make(map[string]string)
	redis, sents := s.NodeSet.LockAddrs(slot), s.sentSet.LockAddrs(slot)
	for j, p := range s.peer {
		m[p] = redis[j]
	}
	for k, sp := range s.sents {
		m[sp.addr()], m[sp.front] = sents[k], sents[k]
	}
	return SentinelLinks{Addrs: sents, MasterName: s.cfg.MasterName, AddrMap: m}
}

// WorkerLinks gives a worker of slot its SentinelLinks (clusters.Linker).
func (s *Sentinel) WorkerLinks(slot int) clusters.WorkerLinks {
	l := s.SentinelLinks(slot)
	return clusters.WorkerLinks{DiscoveryAddrs: l.Addrs, MasterName: l.MasterName, AddrMap: l.AddrMap}
}

// Pids returns the pids of the running server processes, by node name.
func (s *Sentinel) Pids() map[string]int {
	pids := RedisPids(s.storage, s.redis)
	for _, sp := range s.sents {
		if pid := sp.Pid(); pid != 0 {
			pids[sp.name] = pid
		}
	}
	return pids
}

// SetClockOffset moves a redis node's wall clock to real time + offset. It
// needs the topology to run under the clock shim (SentinelConfig.ClockShim).
func (s *Sentinel) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	return s.NodeSet.SetClock(s.cfg.ClockShim, "redis nodes", node, offset, func(j int) string { return clockFile(s.redis[j]) })
}

func (s *Sentinel) redisNode(name string) (int, *RedisServer, error) {
	j, err := s.NodeSet.Index(name)
	if err != nil {
		return 0, nil, err
	}
	return j, s.redis[j], nil
}

// Leader returns the master most sentinels name (at least a quorum of them).
func (s *Sentinel) Leader(ctx context.Context) (string, error) {
	votes := make(map[string]int)
	var errs []error
	for _, sp := range s.sents {
		c := sentinelClient(sp.addr())
		m, err := c.GetMasterAddrByName(ctx, s.cfg.MasterName).Result()
		c.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sp.name, err))
			continue
		}
		votes[net.JoinHostPort(m[0], m[1])]++
	}
	for addr, n := range votes {
		if n < sentinelQuorum {
			continue
		}
		for j, p := range s.peer {
			if p == addr {
				return s.redis[j].Name, nil
			}
		}
		return "", fmt.Errorf("the sentinels name master %s, which is no peer proxy", addr)
	}
	return "", fmt.Errorf("the sentinels do not agree on a master (%v): %w", votes, errors.Join(errs...))
}

// WaitPromotion polls the sentinels until a quorum names a master other
// than old.
func (s *Sentinel) WaitPromotion(ctx context.Context, old string, timeout time.Duration) (string, error) {
	return waitPromotion(ctx, old, timeout, "the sentinels", s.Leader)
}

// waitPromotion polls leader until it names a master other than old, and
// returns it; who is who names the masters ("the sentinels").
func waitPromotion(ctx context.Context, old string, timeout time.Duration, who string, leader func(context.Context) (string, error)) (string, error) {
	var promoted string
	err := clusters.Poll(ctx, timeout, func() error {
		l, err := leader(ctx)
		if err != nil {
			return err
		}
		if l == old {
			return fmt.Errorf("%s still name %s", who, old)
		}
		promoted = l
		return nil
	}, "promotion")
	return promoted, err
}

// LagReplication delays everything node sends through its peer proxy (the
// replication stream to its replicas, its replies to the sentinels) by d,
// so its last d of acknowledged writes are not yet replicated; d = 0 takes
// the delay away. Restart takes it away too.
func (s *Sentinel) LagReplication(ctx context.Context, node string, d time.Duration) error {
	j, _, err := s.redisNode(node)
	if err != nil {
		return err
	}
	p, err := s.Proxies.Proxy(peerName(j))
	if err != nil {
		return err
	}
	_ = p.Toxics.RemoveToxic(ctx, "lag_downstream")
	if d <= 0 {
		return nil
	}
	body := fmt.Sprintf(`{"name":"lag_downstream","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":%d}}`, d.Milliseconds())
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		return fmt.Errorf("lag replication from %s: %w", node, err)
	}
	return nil
}

// WaitReplica polls node (directly, not through a proxy) until it reports

// FailoverWords says what a failover did in Sentinel's words: the sentinels
// promote a replica and demote the old master.
func (s *Sentinel) FailoverWords() clusters.FailoverWords {
	return clusters.FailoverWords{
		Cut: func(master string) string { return "cut master " + master + " off from replicas and sentinels" },
		Promoted: func(_, promoted string, after time.Duration) string {
			return fmt.Sprintf("sentinels promoted %s after %.1f s", promoted, after.Seconds())
		},
		Rejoined: func(old string, after time.Duration) string {
			return fmt.Sprintf("the sentinels demoted %s to a replica after %.1f s, and its resync dropped its writes since the cut", old, after.Seconds())
		},
	}
}

// role slave with its master link up.
func (s *Sentinel) WaitReplica(ctx context.Context, node string, timeout time.Duration) error {
	_, r, err := s.redisNode(node)
	if err != nil {
		return err
	}
	return waitReplica(ctx, r, timeout)
}

// waitReplica polls r (directly, not through a proxy) until it reports
// role slave with its master link up.
func waitReplica(ctx context.Context, r *RedisServer, timeout time.Duration) error {
	c := nodeClient(r.Addr())
	defer c.Close()
	return clusters.Poll(ctx, timeout, func() error {
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "role:slave") || !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("%s is not a replica in sync yet", r.Name)
		}
		return nil
	}, r.Name+" as a replica")
}

// cut cuts proxies on behalf of fault (see clusters.HeldCuts).
func (s *Sentinel) cut(fault string, names []string) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.reason.Cut(s.Proxies, fault, names)
}

// restore lets go of every proxy fault cut (see clusters.HeldCuts).
func (s *Sentinel) restore(ctx context.Context, fault string) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.reason.Release(ctx, s.Proxies, fault)
}

// Partition cuts every link of a worker slot: to each redis node and each
// sentinel.
func (s *Sentinel) Partition(ctx context.Context, slot int) error {
	return s.cut(fmt.Sprintf("partition-%d", slot), append(s.NodeSet.SlotLinks(slot), s.sentSet.SlotLinks(slot)...))
}

// Heal restores the links Partition cut for slot.
func (s *Sentinel) Heal(ctx context.Context, slot int) error {
	return s.restore(ctx, fmt.Sprintf("partition-%d", slot))
}

// Isolate cuts node off from its replicas (or master) and the sentinels:
// its peer proxy drops everything. Clients still reach it.
func (s *Sentinel) Isolate(ctx context.Context, node string) error {
	j, _, err := s.redisNode(node)
	if err != nil {
		return err
	}
	return s.cut("isolate-"+node, []string{peerName(j)})
}

// Rejoin undoes Isolate.
func (s *Sentinel) Rejoin(ctx context.Context, node string) error {
	return s.restore(ctx, "isolate-"+node)
}

// CutMaster cuts master's peer proxy (replicas and sentinels lose it), cuts
// the slots in stay off from the sentinels and the other redis nodes, and
// cuts every other slot off from master.
func (s *Sentinel) CutMaster(ctx context.Context, master string, stay []int) error {
	j, _, err := s.redisNode(master)
	if err != nil {
		return err
	}
	return s.cut("failover", append([]string{peerName(j)}, s.NodeSet.SplitLinks(j, stay, s.sentSet.SlotLinks)...))
}

// HealMaster restores every link CutMaster cut.
func (s *Sentinel) HealMaster(ctx context.Context) error { return s.restore(ctx, "failover") }

// Kill stops every proxy to a redis node (connections refused) and
// SIGKILLs it.
func (s *Sentinel) Kill(ctx context.Context, node string) error { return s.NodeSet.Kill(ctx, node) }

// Restart starts a killed redis node on its old port, as a replica of the
// master the sentinels name when that is another node (as Sentinel would
// have rewritten its config had it been up), and re-enables its proxies.
func (s *Sentinel) Restart(ctx context.Context, node string) error {
	_ = s.LagReplication(ctx, node, 0)
	return s.NodeSet.Restart(ctx, node)
}

// Teardown stops the proxies, the sentinels and every redis server Setup
// started, and removes the data directory. It is idempotent.
func (s *Sentinel) Teardown(ctx context.Context) error {
	if !s.MarkTornDown() {
		return nil
	}
	s.CloseProxies()
	if s.fronts != nil {
		s.fronts.Close()
	}
	var errs []error
	for _, sp := range s.sents {
		errs = append(errs, sp.StopProc(ctx, 5*time.Second))
	}
	errs = append(errs, StopRedis(ctx, s.storage, s.redis)...)
	return errors.Join(append(errs, s.RemoveTemp("sentinel-"))...)
}
