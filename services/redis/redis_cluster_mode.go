package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// RedisClusterConfig describes a Redis clusters.Cluster topology: three masters,
// three replicas, plus the storage node.
type RedisClusterConfig struct {
	// Workers is the number of worker slots; each slot gets its own proxy to
	// every cluster node.
	Workers int
	// LogDir receives one log per node.
	LogDir string
	// Persist makes the cluster nodes keep an append-only file with fsync
	// always, as the other Redis topologies do.
	Persist bool
	// clusters.ClockShim starts the cluster nodes (not the storage node) under the
	// clock shim, so SetClockOffset can move their clocks.
	ClockShim bool
	// NodeTimeout is cluster-node-timeout (DefaultClusterNodeTimeout when
	// 0): how long a node goes unanswered before its peers suspect it, and
	// how long a master cut off from the majority keeps taking writes.
	NodeTimeout time.Duration
}

// DefaultClusterNodeTimeout is the cluster-node-timeout lockcheck runs
// Redis clusters.Cluster with: Redis's own default.
const DefaultClusterNodeTimeout = 15 * time.Second

const (
	clusterMasters = 3
	clusterSize    = 2 * clusterMasters
	clusterSlots   = 16384
	// clusterReadyWait bounds each stage of Setup.
	clusterReadyWait = 30 * time.Second
)

// RedisCluster is a clusters.Cluster of six cluster-enabled redis-servers, redis0..2
// masters of a third of the slots each and redis3..5 their replicas. Every
// node announces (cluster-announce-ip/port/bus-port) a peer proxy for its
// client port and a bus proxy for its cluster-bus port: replicas replicate
// through the peer proxies, every cluster-bus link goes through the bus
// proxies, and the slot map the cluster hands to clients names the peer
// proxies, which AddrMap maps to each worker slot's own proxies. Each bus
// proxy also drops the links of cut senders (see busSenderFilter), so a
// node can be cut off from every peer while workers still reach it.
type RedisCluster struct {
	cfg      RedisClusterConfig
	nodes    []*RedisServer
	storage  *RedisServer
	gateName string
	gate     *busGate
	ids      []string // node -> cluster node id
	peer     []string // node -> announced client address (peer proxy)
	bus      []string // node -> announced bus address (bus proxy)
	clusters.Local

	// under mu:
	reason  clusters.HeldCuts
	gateCut map[string][]string // fault -> node ids it cut at the bus gate
	fo      clusterFailover
}

// clusterFailover is the failover in force: the cut master, the replica
// told to take over, and a slot the old master served.
type clusterFailover struct {
	old, replica string
	slot         int
}

var (
	_ clusters.Topology    = (*RedisCluster)(nil)
	_ clusters.Killer      = (*RedisCluster)(nil)
	_ clusters.Partitioner = (*RedisCluster)(nil)
	_ clusters.Primary     = (*RedisCluster)(nil)
	_ clusters.KeyPrimary  = (*RedisCluster)(nil)
	_ clusters.Isolator    = (*RedisCluster)(nil)
	_ clusters.Promoter    = (*RedisCluster)(nil)
	_ clusters.Clocker     = (*RedisCluster)(nil)
	_ clusters.Linker      = (*RedisCluster)(nil)
)

// NewRedisCluster returns an unstarted Redis clusters.Cluster topology.
func NewRedisCluster(cfg RedisClusterConfig) *RedisCluster {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = DefaultClusterNodeTimeout
	}
	return &RedisCluster{cfg: cfg, reason: make(clusters.HeldCuts), gateCut: make(map[string][]string),
		Local: clusters.Local{NodeSet: clusters.NodeSet{Kind: "cluster node"}}}
}

func clusterPeerName(j int) string { return fmt.Sprintf("peer-redis%d", j) }
func clusterBusName(j int) string  { return fmt.Sprintf("bus-redis%d", j) }

// Setup starts the six nodes and the storage node, puts every node behind
// its peer and bus proxies, joins the nodes (CLUSTER MEET through the bus
// proxies), gives each master a third of the slots (CLUSTER ADDSLOTSRANGE)
// and a replica (CLUSTER REPLICATE), and returns once every node reports
// cluster_state:ok with all slots covered, sees three masters with one
// replica each, and every replica's link to its master is up. On error,
// whatever was started is stopped.
func (c *RedisCluster) Setup(ctx context.Context) (err error) {
	if _, err := LookRedis(); err != nil {
		return err
	}
	return c.SetUp(ctx, "rcluster-", c.Teardown, func() (err error) {
		if err := c.OpenProxies(c.cfg.LogDir); err != nil {
			return err
		}
		c.gateName = c.DataDir
		c.gate = newBusGate(c.gateName)
		shim := ""
		if c.cfg.ClockShim {
			if shim, err = clusters.ClockShim(); err != nil {
				return err
			}
		}
		if c.nodes, err = newRedisServers(c.DataDir, c.cfg.LogDir, "redis", clusterSize, c.cfg.Persist, shim); err != nil {
			return err
		}
		c.storage = NewRedisServer(c.DataDir, c.cfg.LogDir, "storage", false)
		if err := c.startNodes(ctx); err != nil {
			return err
		}
		if err := c.storage.Start(ctx); err != nil {
			return err
		}
		c.peer, c.bus, c.ids = make([]string, clusterSize), make([]string, clusterSize), make([]string, clusterSize)
		errs := make([]error, clusterSize)
		var wg sync.WaitGroup
		for j, r := range c.nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[j] = c.announce(ctx, j, r)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if err := c.join(ctx); err != nil {
			return err
		}
		return c.NodeSet.Link(c.Proxies, c.cfg.Workers, redisSetNodes(c.nodes, func(j int) []string {
			return []string{clusterPeerName(j), clusterBusName(j)}
		}, nil))
	})
}

// clusterConfig is the cluster-mode config of a node whose bus listens on
// busPort.
func (c *RedisCluster) clusterConfig(busPort int) []string {
	return []string{
		"cluster-enabled yes",
		"cluster-config-file nodes.conf",
		fmt.Sprintf("cluster-node-timeout %d", c.cfg.NodeTimeout.Milliseconds()),
		"cluster-port " + strconv.Itoa(busPort),
		"repl-diskless-sync-delay 0",
	}
}

// startNodes starts the cluster nodes at once, each on a free client port
// and a free bus port (both chosen again when one was taken meanwhile).
func (c *RedisCluster) startNodes(ctx context.Context) error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for j, r := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt := 0; attempt < 5; attempt++ {
				bus, err := clusters.FreePort()
				if err != nil {
					errs[j] = err
					return
				}
				r.Port = 0
				r.Extra = c.clusterConfig(bus)
				errs[j] = r.Start(ctx)
				if errs[j] == nil || !errors.Is(errs[j], clusters.ErrPortInUse) {
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// busPort returns the bus port node r was configured with.
func busPort(r *RedisServer) string {
	for _, l := range r.Extra {
		if p, ok := strings.CutPrefix(l, "cluster-port "); ok {
			return p
		}
	}
	return ""
}

// announce puts node j behind its peer proxy and its bus proxy (with the
// sender filter on from the start, so it sees every bus link from its first
// byte), makes the node announce them, and reads its node id into c.peer[j],
// c.bus[j] and c.ids[j]. Nodes are announced at once.
func (c *RedisCluster) announce(ctx context.Context, j int, r *RedisServer) error {
	peer, err := c.Proxies.Add(clusterPeerName(j), r.Addr())
	if err != nil {
		return err
	}
	bus, err := c.Proxies.Add(clusterBusName(j), net.JoinHostPort("127.0.0.1", busPort(r)))
	if err != nil {
		return err
	}
	p, err := c.Proxies.Proxy(clusterBusName(j))
	if err != nil {
		return err
	}
	body := fmt.Sprintf(`{"name":"bus_sender","type":%q,"stream":"upstream","toxicity":1,"attributes":{"gate":%q,"node":%d}}`,
		busSenderToxic, c.gateName, j)
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		return fmt.Errorf("add the bus sender filter to %s: %w", clusterBusName(j), err)
	}
	c.peer[j], c.bus[j] = peer, bus
	_, pport, _ := net.SplitHostPort(peer)
	_, bport, _ := net.SplitHostPort(bus)
	// Extra is written into the config of every later start (Restart).
	r.Extra = append(r.Extra, "cluster-announce-ip 127.0.0.1", "cluster-announce-port "+pport, "cluster-announce-bus-port "+bport)
	if err := redisDo(ctx, r.Addr(), "CONFIG", "SET", "cluster-announce-ip", "127.0.0.1", "cluster-announce-port", pport,
		"cluster-announce-bus-port", bport); err != nil {
		return fmt.Errorf("announce %s as %s (bus %s): %w", r.Name, peer, bus, err)
	}
	cl := nodeClient(r.Addr())
	defer cl.Close()
	id, err := cl.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return fmt.Errorf("node id of %s: %w", r.Name, err)
	}
	c.ids[j] = id
	return nil
}

// setEpoch gives fresh node j config epoch j+1. A node that already knows
// other nodes or has an epoch was reached, before it met its own cluster,
// by another cluster's gossip (a cluster of another run whose node had
// this bus port before): it is reset (CLUSTER RESET HARD forgets every
// node, zeroes its epochs and gives it a new id, read again) and tried
// again.
func (c *RedisCluster) setEpoch(ctx context.Context, j int, r *RedisServer) error {
	var err error
	for try := 0; try < 3; try++ {
		err = redisDo(ctx, r.Addr(), "CLUSTER", "SET-CONFIG-EPOCH", j+1)
		if err == nil || !strings.Contains(err.Error(), "already non-zero") && !strings.Contains(err.Error(), "does not know any other node") {
			return err
		}
		if rerr := redisDo(ctx, r.Addr(), "CLUSTER", "RESET", "HARD"); rerr != nil {
			return fmt.Errorf("%w; reset: %v", err, rerr)
		}
		cl := nodeClient(r.Addr())
		id, ierr := cl.Do(ctx, "CLUSTER", "MYID").Text()
		cl.Close()
		if ierr != nil {
			return fmt.Errorf("%w; node id after reset: %v", err, ierr)
		}
		c.ids[j] = id
	}
	return err
}

// join makes the six nodes one cluster: redis0 meets the others through
// their proxies, each master takes a third of the slots, and once every
// node knows the others, redis3..5 replicate redis0..2.
func (c *RedisCluster) join(ctx context.Context) error {
	// Each fresh node gets its own config epoch first, as redis-cli
	// --cluster create does. Left at 0, the nodes resolve their collisions
	// by gossip, slowly, and a replica can keep the same epoch as its
	// master: a takeover then claims the slots at an epoch no higher than
	// the old master's (CLUSTER FAILOVER TAKEOVER bumps only an epoch that
	// is not already the greatest), and on heal the old master could win
	// them back and make the new one its replica again.
	for j, r := range c.nodes {
		if err := c.setEpoch(ctx, j, r); err != nil {
			return fmt.Errorf("config epoch of %s: %w", r.Name, err)
		}
	}
	// Every pair meets, so no node waits for gossip to learn of another.
	for i := 0; i < clusterSize; i++ {
		for j := i + 1; j < clusterSize; j++ {
			_, pport, _ := net.SplitHostPort(c.peer[j])
			_, bport, _ := net.SplitHostPort(c.bus[j])
			if err := redisDo(ctx, c.nodes[i].Addr(), "CLUSTER", "MEET", "127.0.0.1", pport, bport); err != nil {
				return fmt.Errorf("%s meets %s: %w", c.nodes[i].Name, c.nodes[j].Name, err)
			}
		}
	}
	for m := 0; m < clusterMasters; m++ {
		lo, hi := m*clusterSlots/clusterMasters, (m+1)*clusterSlots/clusterMasters-1
		if err := redisDo(ctx, c.nodes[m].Addr(), "CLUSTER", "ADDSLOTSRANGE", lo, hi); err != nil {
			return fmt.Errorf("give %s slots %d-%d: %w", c.nodes[m].Name, lo, hi, err)
		}
	}
	if err := clusters.Poll(ctx, clusterReadyWait, func() error {
		for _, r := range c.nodes {
			ns, err := c.view(ctx, r)
			if err != nil {
				return err
			}
			if len(ns) != clusterSize {
				return fmt.Errorf("%s knows %d of %d nodes", r.Name, len(ns), clusterSize)
			}
			for _, n := range ns {
				if strings.Contains(n.flags, "handshake") || strings.Contains(n.flags, "noaddr") {
					return fmt.Errorf("%s: %s is %s", r.Name, n.id, n.flags)
				}
			}
		}
		return nil
	}, "cluster meet"); err != nil {
		return err
	}
	for m := 0; m < clusterMasters; m++ {
		r := c.nodes[clusterMasters+m]
		if err := redisDo(ctx, r.Addr(), "CLUSTER", "REPLICATE", c.ids[m]); err != nil {
			return fmt.Errorf("make %s a replica of %s: %w", r.Name, c.nodes[m].Name, err)
		}
	}
	return clusters.PollEach(ctx, clusterReadyWait, "redis cluster", len(c.nodes), func(j int) (string, error) {
		return c.nodes[j].Name, c.nodeReady(ctx, c.nodes[j])
	})
}

// nodeReady checks one node: cluster_state:ok with every slot covered,
// three masters with slots and no failure flag in its view; a master must
// see its replica (the failover nemesis asks the master for it), a replica
// must have its link to its master up. Whether the other nodes have heard
// yet that a node became a replica does not matter to clients or faults:
// they learn it with their next ping of it.
func (c *RedisCluster) nodeReady(ctx context.Context, r *RedisServer) error {
	cl := nodeClient(r.Addr())
	defer cl.Close()
	info, err := cl.Do(ctx, "CLUSTER", "INFO").Text()
	if err != nil {
		return err
	}
	for _, want := range []string{"cluster_state:ok", "cluster_slots_ok:16384", "cluster_known_nodes:6", "cluster_size:3"} {
		if !strings.Contains(info, want+"\r\n") {
			return fmt.Errorf("cluster info lacks %s", want)
		}
	}
	ns, err := c.view(ctx, r)
	if err != nil {
		return err
	}
	masters, self := 0, clusterNode{}
	replicaOf := make(map[string]bool)
	for _, n := range ns {
		if strings.Contains(n.flags, "fail") {
			return fmt.Errorf("sees %s as %s", n.id, n.flags)
		}
		if strings.Contains(n.flags, "myself") {
			self = n
		}
		switch {
		case strings.Contains(n.flags, "master") && len(n.slots) > 0:
			masters++
		case strings.Contains(n.flags, "slave"):
			replicaOf[n.master] = true
		}
	}
	if masters != clusterMasters {
		return fmt.Errorf("sees %d masters with slots", masters)
	}
	if strings.Contains(self.flags, "master") && !replicaOf[self.id] {
		return errors.New("master does not see its replica yet")
	}
	if strings.Contains(self.flags, "slave") {
		rinfo, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(rinfo, "master_link_status:up") {
			return errors.New("replica's link to its master is down")
		}
	}
	return nil
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id, flags, master string
	slots             [][2]int
}

func (n clusterNode) serves(slot int) bool {
	for _, r := range n.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// view returns the cluster as node r sees it (CLUSTER NODES), asked
// directly, not through a proxy.
func (c *RedisCluster) view(ctx context.Context, r *RedisServer) ([]clusterNode, error) {
	cl := nodeClient(r.Addr())
	defer cl.Close()
	txt, err := cl.Do(ctx, "CLUSTER", "NODES").Text()
	if err != nil {
		return nil, err
	}
	return parseClusterNodes(txt), nil
}

// parseClusterNodes parses CLUSTER NODES output; slots being migrated
// ("[...]") are skipped.
func parseClusterNodes(txt string) []clusterNode {
	var out []clusterNode
	for _, line := range strings.Split(strings.TrimSpace(txt), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		n := clusterNode{id: f[0], flags: f[2], master: f[3]}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue
			}
			lo, hi, found := strings.Cut(s, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if found {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil {
				n.slots = append(n.slots, [2]int{a, b})
			}
		}
		out = append(out, n)
	}
	return out
}

// Nodes lists the cluster nodes (role "lock") and the storage node.
func (c *RedisCluster) Nodes() []clusters.Node { return NodeList(c.storage, c.nodes) }

// LockAddrs returns worker slot's proxies to the six nodes: the cluster
// client's seed addresses.
func (c *RedisCluster) LockAddrs(slot int) []string { return c.NodeSet.LockAddrs(slot) }

// StorageAddr returns the storage node's address (no proxy, no fault).
func (c *RedisCluster) StorageAddr() string { return c.storage.Addr() }

// WorkerLinks gives a worker of slot the address map (clusters.Linker):
// the slot map and MOVED redirections name the peer proxies.
func (c *RedisCluster) WorkerLinks(slot int) clusters.WorkerLinks {
	return clusters.WorkerLinks{AddrMap: c.AddrMap(slot)}
}

// AddrMap maps each node's announced address (its peer proxy) to worker
// slot's own proxy for that node.
func (c *RedisCluster) AddrMap(slot int) map[string]string {
	m := make(map[string]string, len(c.peer))
	addrs := c.NodeSet.LockAddrs(slot)
	for j, p := range c.peer {
		m[p] = addrs[j]
	}
	return m
}

// Pids returns the pids of the running server processes, by node name.
func (c *RedisCluster) Pids() map[string]int { return RedisPids(c.storage, c.nodes) }

func (c *RedisCluster) node(name string) (int, *RedisServer, error) {
	j, err := c.NodeSet.Index(name)
	if err != nil {
		return 0, nil, err
	}
	return j, c.nodes[j], nil
}

// SetClockOffset moves a cluster node's wall clock to real time + offset.
// It needs the topology to run under the clock shim.
func (c *RedisCluster) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	return c.NodeSet.SetClock(c.cfg.ClockShim, "cluster nodes", node, offset, func(j int) string { return clockFile(c.nodes[j]) })
}

// owner returns the master that serves slot, as most running nodes see it
// (a majority of the six).
func (c *RedisCluster) owner(ctx context.Context, slot int, skip string) (string, error) {
	votes := make(map[string]int)
	var errs []error
	for _, r := range c.nodes {
		if r.Name == skip || !r.Running() {
			continue
		}
		ns, err := c.view(ctx, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
			continue
		}
		for _, n := range ns {
			if strings.Contains(n.flags, "master") && n.serves(slot) {
				votes[n.id]++
			}
		}
	}
	for id, v := range votes {
		if v > clusterSize/2 {
			for j, nid := range c.ids {
				if nid == id {
					return c.nodes[j].Name, nil
				}
			}
		}
	}
	return "", fmt.Errorf("no master of slot %d named by a majority (%v): %w", slot, votes, errors.Join(errs...))
}

// keySlot asks a running node for key's hash slot (CLUSTER KEYSLOT).
func (c *RedisCluster) keySlot(ctx context.Context, key string) (int, error) {
	var errs []error
	for _, r := range c.nodes {
		if !r.Running() {
			continue
		}
		cl := nodeClient(r.Addr())
		n, err := cl.Do(ctx, "CLUSTER", "KEYSLOT", key).Int()
		cl.Close()
		if err == nil {
			return n, nil
		}
		errs = append(errs, err)
	}
	return 0, fmt.Errorf("hash slot of %q: %w", key, errors.Join(errs...))
}

// Leader returns the master of slot 0 (redis0 until a failover); a fault
// on a key's lock asks KeyLeader.
func (c *RedisCluster) Leader(ctx context.Context) (string, error) { return c.owner(ctx, 0, "") }

// KeyLeader returns the master that serves key's slot.
func (c *RedisCluster) KeyLeader(ctx context.Context, key string) (string, error) {
	slot, err := c.keySlot(ctx, key)
	if err != nil {
		return "", err
	}
	return c.owner(ctx, slot, "")
}

// cut cuts proxies and bus senders on behalf of fault (several faults may
// hold one proxy cut; it is restored when the last lets go).
func (c *RedisCluster) cut(fault string, names []string, senders []string) error {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, id := range senders {
		c.gate.set(id, true)
	}
	c.gateCut[fault] = append(c.gateCut[fault], senders...)
	return c.reason.Cut(c.Proxies, fault, names)
}

// restore lets go of every proxy and bus sender fault cut, and restores
// those no other fault holds.
func (c *RedisCluster) restore(ctx context.Context, fault string) error {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	held := make(map[string]bool)
	for f, ids := range c.gateCut {
		if f != fault {
			for _, id := range ids {
				held[id] = true
			}
		}
	}
	for _, id := range c.gateCut[fault] {
		if !held[id] {
			c.gate.set(id, false)
		}
	}
	delete(c.gateCut, fault)
	return c.reason.Release(ctx, c.Proxies, fault)
}

// Partition cuts every link of a worker slot to the cluster nodes.
func (c *RedisCluster) Partition(ctx context.Context, slot int) error {
	return c.cut(fmt.Sprintf("partition-%d", slot), c.NodeSet.SlotLinks(slot), nil)
}

// Heal restores the links Partition cut for slot.
func (c *RedisCluster) Heal(ctx context.Context, slot int) error {
	return c.restore(ctx, fmt.Sprintf("partition-%d", slot))
}

// isolation is what cutting node j off from its peers cuts: its peer and
// bus proxies (nothing reaches it) and, at the bus gate, every bus link it
// opened (nothing it sends arrives).
func (c *RedisCluster) isolation(j int) ([]string, []string) {
	return []string{clusterPeerName(j), clusterBusName(j)}, []string{c.ids[j]}
}

// Isolate cuts node off from every other cluster node, both ways; workers
// still reach it.
func (c *RedisCluster) Isolate(ctx context.Context, node string) error {
	j, _, err := c.node(node)
	if err != nil {
		return err
	}
	names, senders := c.isolation(j)
	return c.cut("isolate-"+node, names, senders)
}

// Rejoin undoes Isolate.
func (c *RedisCluster) Rejoin(ctx context.Context, node string) error {
	return c.restore(ctx, "isolate-"+node)
}

// CutMaster cuts master off from every other cluster node (see Isolate),
// cuts the slots in stay off from the other nodes and every other slot off
// from master, and then has master's replica take its slots over at once
// (CLUSTER FAILOVER TAKEOVER: no agreement with the cut master or a vote of
// the other masters). The takeover stands for the failover the cluster
// would make by itself after cluster-node-timeout, made deterministic and
// early: the old master keeps taking writes until it has missed the
// majority for cluster-node-timeout, so both masters serve the slots.
func (c *RedisCluster) CutMaster(ctx context.Context, master string, stay []int) error {
	j, _, err := c.node(master)
	if err != nil {
		return err
	}
	ns, err := c.view(ctx, c.nodes[j])
	if err != nil {
		return fmt.Errorf("view of %s: %w", master, err)
	}
	slot, replica := -1, ""
	for _, n := range ns {
		if n.id == c.ids[j] && len(n.slots) > 0 {
			slot = n.slots[0][0]
		}
		if strings.Contains(n.flags, "slave") && n.master == c.ids[j] {
			for i, id := range c.ids {
				if id == n.id && c.nodes[i].Running() {
					replica = c.nodes[i].Name
				}
			}
		}
	}
	if slot < 0 || replica == "" {
		return fmt.Errorf("%s is no master with slots and a running replica", master)
	}
	names, senders := c.isolation(j)
	if err := c.cut("failover", append(names, c.NodeSet.SplitLinks(j, stay, nil)...), senders); err != nil {
		return err
	}
	c.Mu.Lock()
	c.fo = clusterFailover{old: master, replica: replica, slot: slot}
	c.Mu.Unlock()
	_, r, _ := c.node(replica)
	if err := redisDo(ctx, r.Addr(), "CLUSTER", "FAILOVER", "TAKEOVER"); err != nil {
		return fmt.Errorf("%s takes over from %s: %w", replica, master, err)
	}
	return nil
}

// HealMaster restores every link CutMaster cut.
func (c *RedisCluster) HealMaster(ctx context.Context) error { return c.restore(ctx, "failover") }

// WaitPromotion waits until a majority of the nodes other than old name
// another master for the slots old served when it was cut, and returns it.
func (c *RedisCluster) WaitPromotion(ctx context.Context, old string, timeout time.Duration) (string, error) {
	c.Mu.Lock()
	fo := c.fo
	c.Mu.Unlock()
	slot := 0
	if fo.old == old {
		slot = fo.slot
	}
	return waitPromotion(ctx, old, timeout, "the cluster", func(ctx context.Context) (string, error) { return c.owner(ctx, slot, old) })
}

// WaitReplica polls node (directly) until it is a replica with its master

// FailoverWords says what a failover did in Redis Cluster's words: the
// master is cut from every other node, its replica takes its slots over.
func (c *RedisCluster) FailoverWords() clusters.FailoverWords {
	return clusters.FailoverWords{
		Cut: func(master string) string {
			return "cut master " + master + " off from every other cluster node (cluster bus and replication)"
		},
		Promoted: func(old, promoted string, after time.Duration) string {
			return fmt.Sprintf("promoted replica %s, which took over %s's slots (CLUSTER FAILOVER TAKEOVER), after %.1f s", promoted, old, after.Seconds())
		},
		Rejoined: func(old string, after time.Duration) string {
			return fmt.Sprintf("%s learned of the takeover and rejoined as a replica after %.1f s, and its resync dropped its writes since the cut", old, after.Seconds())
		},
	}
}

// link up: a healed old master has learned of the takeover and resynced.
func (c *RedisCluster) WaitReplica(ctx context.Context, node string, timeout time.Duration) error {
	_, r, err := c.node(node)
	if err != nil {
		return err
	}
	return waitReplica(ctx, r, timeout)
}

// Kill stops every proxy to a node (connections refused) and SIGKILLs it.
func (c *RedisCluster) Kill(ctx context.Context, node string) error { return c.NodeSet.Kill(ctx, node) }

// Restart starts a killed node on its old ports (its nodes.conf keeps its
// id, its role and the cluster it knew) and re-enables its proxies.
func (c *RedisCluster) Restart(ctx context.Context, node string) error {
	return c.NodeSet.Restart(ctx, node)
}

// Teardown stops the proxies and every server Setup started, and removes
// the data directory. It is idempotent.
func (c *RedisCluster) Teardown(ctx context.Context) error {
	if !c.MarkTornDown() {
		return nil
	}
	c.CloseProxies()
	if c.gateName != "" {
		busGates.Delete(c.gateName)
	}
	errs := make([]error, len(c.nodes)+1)
	var wg sync.WaitGroup
	for i, r := range append(append([]*RedisServer(nil), c.nodes...), c.storage) {
		if r != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = r.Stop(ctx)
			}()
		}
	}
	wg.Wait()
	return errors.Join(append(errs, c.RemoveTemp("rcluster-"))...)
}
