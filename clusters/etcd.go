package clusters

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// etcdReadyWait bounds the wait for an etcd member to serve after a start.
const etcdReadyWait = 30 * time.Second

// Raft timing of the members: etcd's defaults. A 50 ms heartbeat and a
// 500 ms election timeout (which would allow one-second leases) made the
// members elect a new leader every second or two on the shared two-core
// machine (load average 30-50), and every election stalled the clients'
// keepalives long enough to end their sessions with no fault at all. With
// these, etcd raises any lease TTL below 1.5 election timeouts to 2 s
// (rounded up to whole seconds): see workloads.EtcdTTL.
const (
	etcdHeartbeatMS = 100
	etcdElectionMS  = 1000
)

// LookEtcd returns the path of etcd, or an error naming the Debian package
// to install.
func LookEtcd() (string, error) {
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", fmt.Errorf("%w: etcd not found in PATH: install the Debian package etcd-server (scripts/deps.sh does)", ErrMissingBinary)
	}
	return p, nil
}

// EtcdVersion returns the version `etcd --version` prints ("3.4.23"), or
// "" when etcd is missing.
func EtcdVersion() string {
	bin, err := LookEtcd()
	if err != nil {
		return ""
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "etcd Version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// EtcdConfig describes a local etcd cluster.
type EtcdConfig struct {
	// Members is the cluster size, 3 by default.
	Members int
	// Workers is the number of worker slots; each slot gets its own proxy
	// to each member's client port.
	Workers int
	// LogDir receives one log per member.
	LogDir string
}

// etcdMember is one etcd server.
type etcdMember struct {
	id           int
	name         string
	client, peer int          // the ports it listens on
	front        net.Listener // its advertised peer URL: the peer demultiplexer
	dir, logPath string
	mu           sync.Mutex
	proc         *Proc
	log          *os.File
}

func (m *etcdMember) clientAddr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.client))
}
func (m *etcdMember) peerAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.peer)) }

func (m *etcdMember) running() *Proc {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil || m.proc.Exited() {
		return nil
	}
	return m.proc
}

// Etcd is a Cluster of local etcd members plus a redis-server storage node
// for the protected resource. Every worker-to-member link goes through its
// own Toxiproxy proxy, and so does every member-to-member link, one proxy
// per ordered pair.
//
// etcd members dial each other at the peer URLs the cluster's membership
// lists, the same for every member, so a member's advertised peer URL
// cannot name a different proxy for each peer as ZooKeeper's per-server
// config does. Instead the advertised URL is a small demultiplexer in front
// of the member: it finds which member dialed (the process that owns the
// connecting socket, from /proc) and forwards the connection through the
// Toxiproxy proxy of that pair. So a member can be cut off from its peers
// both ways, as ZooKeeper's can.
//
// Etcd is not a Clocker: the clock shim cannot move an etcd member's clock.
// etcd is a Go program, and the Go runtime reads the clock through the vDSO,
// not through the libc clock_gettime or gettimeofday the shim replaces
// (measured: under a one-hour shim offset etcd's own log timestamps did not
// move), and etcd 3.4 times leases on Go's monotonic clock anyway. A clock
// nemesis against etcd is refused at setup (exit 3) rather than run as a
// fault that touches nothing and reads as valid.
type Etcd struct {
	cfg     EtcdConfig
	bin     string
	tmp     string
	members []*etcdMember
	storage *RedisServer
	proxyLg *os.File
	demuxWG sync.WaitGroup
	// memberLinks gives Partition, Heal, Isolate and Rejoin.
	memberLinks

	mu       sync.Mutex
	torn     bool
	slotAddr [][]string
	ids      map[uint64]string // member id -> name, learned from status
}

var (
	_ Topology    = (*Etcd)(nil)
	_ Killer      = (*Etcd)(nil)
	_ Partitioner = (*Etcd)(nil)
	_ Primary     = (*Etcd)(nil)
	_ Isolator    = (*Etcd)(nil)
	_ Pauser      = (*Etcd)(nil)
)

// NewEtcd returns an unstarted cluster.
func NewEtcd(cfg EtcdConfig) *Etcd {
	if cfg.Members < 1 {
		cfg.Members = 3
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	e := &Etcd{cfg: cfg, ids: make(map[uint64]string)}
	e.memberLinks = memberLinks{workers: cfg.Workers, client: etcdClientProxy,
		memberIDs: func() []int {
			ids := make([]int, len(e.members))
			for i, m := range e.members {
				ids[i] = m.id
			}
			return ids
		},
		idOf: func(name string) (int, error) {
			m, err := e.member(name)
			if err != nil {
				return 0, err
			}
			return m.id, nil
		},
		peer: func(from, to int) []string { return []string{etcdPeerProxy(from, to)} }}
	return e
}

func etcdClientProxy(slot, id int) string { return fmt.Sprintf("w%d-etcd%d", slot, id) }
func etcdPeerProxy(from, to int) string   { return fmt.Sprintf("etcd%d-etcd%d-peer", from, to) }

// Setup starts the members and the storage node and returns once every
// member answers a status request naming the same leader. On error,
// whatever was started is stopped. A port taken by someone else between
// choosing it and etcd binding it is retried with fresh ports.
func (e *Etcd) Setup(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = e.setupOnce(ctx); err == nil || !errors.Is(err, errPortInUse) {
			return err
		}
		e.mu.Lock()
		e.torn, e.members, e.storage, e.proxies, e.proxyLg, e.slotAddr = false, nil, nil, nil, nil, nil
		e.ids = make(map[uint64]string)
		e.mu.Unlock()
	}
	return err
}

func (e *Etcd) setupOnce(ctx context.Context) (err error) {
	if e.bin, err = LookEtcd(); err != nil {
		return err
	}
	if _, err := LookRedis(); err != nil {
		return err
	}
	if e.tmp, err = TempDir("etcd-"); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	defer func() {
		if err != nil {
			_ = e.Teardown(context.WithoutCancel(ctx))
		}
	}()
	if e.proxies, e.proxyLg, err = OpenProxies(e.cfg.LogDir); err != nil {
		return err
	}
	for i := 1; i <= e.cfg.Members; i++ {
		m := &etcdMember{id: i, name: fmt.Sprintf("etcd%d", i), dir: filepath.Join(e.tmp, fmt.Sprintf("etcd%d", i)),
			logPath: filepath.Join(e.cfg.LogDir, fmt.Sprintf("etcd%d.log", i))}
		_ = os.Remove(m.logPath) // a retried setup starts a fresh log
		for _, p := range []*int{&m.client, &m.peer} {
			if *p, err = FreePort(); err != nil {
				return err
			}
		}
		if m.front, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return fmt.Errorf("listen for %s's peers: %w", m.name, err)
		}
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return fmt.Errorf("create %s dir: %w", m.name, err)
		}
		e.members = append(e.members, m)
	}
	for _, to := range e.members {
		for _, from := range e.members {
			if from.id != to.id {
				if _, err := e.proxies.Add(etcdPeerProxy(from.id, to.id), to.peerAddr()); err != nil {
					return err
				}
			}
		}
		e.demuxWG.Add(1)
		go e.demux(to)
	}
	for _, m := range e.members {
		if err := e.startMember(ctx, m); err != nil {
			return err
		}
	}
	if err := e.waitReady(ctx, e.members, etcdReadyWait); err != nil {
		return err
	}
	e.storage = &RedisServer{Name: "storage", Dir: filepath.Join(e.tmp, "storage"),
		LogPath: filepath.Join(e.cfg.LogDir, "storage.log")}
	if err := e.storage.Start(ctx); err != nil {
		return err
	}
	e.slotAddr = make([][]string, e.cfg.Workers)
	for slot := 0; slot < e.cfg.Workers; slot++ {
		for _, m := range e.members {
			addr, err := e.proxies.Add(etcdClientProxy(slot, m.id), m.clientAddr())
			if err != nil {
				return err
			}
			e.slotAddr[slot] = append(e.slotAddr[slot], addr)
		}
	}
	return nil
}

// initialCluster is the --initial-cluster flag: every member at its
// advertised (demultiplexer) peer URL.
func (e *Etcd) initialCluster() string {
	var parts []string
	for _, m := range e.members {
		parts = append(parts, m.name+"=http://"+m.front.Addr().String())
	}
	return strings.Join(parts, ",")
}

// startMember starts one member in its own process group. A member started
// again finds its data dir and rejoins with it.
func (e *Etcd) startMember(ctx context.Context, m *etcdMember) error {
	log, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s log: %w", m.name, err)
	}
	client := "http://" + m.clientAddr()
	argv := []string{e.bin, "--name", m.name, "--data-dir", filepath.Join(m.dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", "http://" + m.peerAddr(),
		"--initial-advertise-peer-urls", "http://" + m.front.Addr().String(),
		"--initial-cluster", e.initialCluster(), "--initial-cluster-state", "new",
		"--initial-cluster-token", filepath.Base(e.tmp),
		"--heartbeat-interval", strconv.Itoa(etcdHeartbeatMS), "--election-timeout", strconv.Itoa(etcdElectionMS),
		"--logger", "zap", "--log-outputs", "stderr", "--enable-v2=false"}
	proc, err := StartProcEnv(ctx, m.name, argv, nil, m.dir, log)
	if err != nil {
		log.Close()
		return err
	}
	m.mu.Lock()
	m.proc, m.log = proc, log
	m.mu.Unlock()
	return nil
}

// demux accepts the peer connections to member to and forwards each
// through the proxy of the pair (dialing member, to). A connection from a
// process that is no member is closed.
func (e *Etcd) demux(to *etcdMember) {
	defer e.demuxWG.Done()
	for {
		c, err := to.front.Accept()
		if err != nil {
			return
		}
		go e.forward(c, to)
	}
}

func (e *Etcd) forward(c net.Conn, to *etcdMember) {
	from := e.dialer(c)
	if from == nil || from.id == to.id {
		if e.proxyLg != nil {
			fmt.Fprintf(e.proxyLg, "%s etcd peer demux: closed a connection to %s from %s: not from another member\n",
				time.Now().Format(time.RFC3339Nano), to.name, c.RemoteAddr())
		}
		c.Close()
		return
	}
	p, err := e.proxies.get(etcdPeerProxy(from.id, to.id))
	if err != nil {
		c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.Listen, time.Second)
	if err != nil {
		c.Close() // the link is down: the peer sees its connection refused
		return
	}
	splice(c, up)
}

// splice copies both ways between a and b until either side ends, then
// closes both.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		buf := make([]byte, 32*1024)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	a.Close()
	b.Close()
	<-done
}

// dialer returns the member whose process owns the other end of c, a
// connection accepted on loopback, or nil.
func (e *Etcd) dialer(c net.Conn) *etcdMember {
	ra, ok1 := c.RemoteAddr().(*net.TCPAddr)
	la, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return nil
	}
	inode := socketInode(ra.Port, la.Port)
	if inode == "" {
		return nil
	}
	want := "socket:[" + inode + "]"
	for _, m := range e.members {
		p := m.running()
		if p == nil {
			continue
		}
		fdDir := fmt.Sprintf("/proc/%d/fd", p.Pid())
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && l == want {
				return m
			}
		}
	}
	return nil
}

// socketInode returns the inode of the IPv4 loopback socket whose local port
// is local and whose remote port is remote, from /proc/net/tcp, or "".
func socketInode(local, remote int) string {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	l := fmt.Sprintf("0100007F:%04X", local)
	r := fmt.Sprintf("0100007F:%04X", remote)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == l && f[2] == r {
			return f[9]
		}
	}
	return ""
}

// etcdStatus is what a member's status endpoint reports.
type etcdStatus struct {
	member, leader uint64
}

// status asks the member at addr (its real client address) for its status
// through etcd's JSON gateway.
func status(ctx context.Context, addr string) (etcdStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v3/maintenance/status", bytes.NewReader([]byte("{}")))
	if err != nil {
		return etcdStatus{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return etcdStatus{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return etcdStatus{}, fmt.Errorf("status %s: %s", addr, resp.Status)
	}
	var body struct {
		Header struct {
			MemberID json.Number `json:"member_id"`
		} `json:"header"`
		Leader json.Number `json:"leader"`
	}
	d := json.NewDecoder(resp.Body)
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		return etcdStatus{}, fmt.Errorf("status %s: %w", addr, err)
	}
	member, err1 := strconv.ParseUint(string(body.Header.MemberID), 10, 64)
	leader, err2 := strconv.ParseUint(string(body.Leader), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return etcdStatus{}, fmt.Errorf("status %s: %w", addr, err)
	}
	return etcdStatus{member: member, leader: leader}, nil
}

// waitReady waits until every member in ms answers a status request that
// names a leader.
func (e *Etcd) waitReady(ctx context.Context, ms []*etcdMember, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var notReady []string
		for _, m := range ms {
			if m.running() == nil {
				if b, _ := os.ReadFile(m.logPath); strings.Contains(string(b), "address already in use") {
					return fmt.Errorf("%s exited during start-up: %w (log %s)", m.name, errPortInUse, m.logPath)
				}
				return fmt.Errorf("%s exited during start-up (log %s)", m.name, m.logPath)
			}
			st, err := status(ctx, m.clientAddr())
			if err != nil || st.leader == 0 {
				notReady = append(notReady, m.name)
				continue
			}
			e.mu.Lock()
			e.ids[st.member] = m.name
			e.mu.Unlock()
		}
		if len(notReady) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd not ready within %s: %s has no leader (logs in %s)", timeout, strings.Join(notReady, ", "), e.cfg.LogDir)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Nodes lists the members, then the storage node.
func (e *Etcd) Nodes() []Node {
	var nodes []Node
	for _, m := range e.members {
		nodes = append(nodes, Node{Name: m.name, Role: "lock", Addr: m.clientAddr()})
	}
	if e.storage != nil {
		nodes = append(nodes, Node{Name: "storage", Role: "storage", Addr: e.storage.Addr()})
	}
	return nodes
}

// LockAddrs returns the proxy addresses worker slot uses, one per member.
func (e *Etcd) LockAddrs(slot int) []string { return append([]string(nil), e.slotAddr[slot]...) }

// StorageAddr returns the storage node's address.
func (e *Etcd) StorageAddr() string { return e.storage.Addr() }

func (e *Etcd) member(name string) (*etcdMember, error) {
	for _, m := range e.members {
		if m.name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no etcd member named %q", name)
}

// Leader returns the member the first answering member names as leader.
// A member isolated from its peers may still believe it leads; the
// majority's answer wins.
func (e *Etcd) Leader(ctx context.Context) (string, error) {
	votes := make(map[uint64]int)
	for _, m := range e.members {
		if m.running() == nil {
			continue
		}
		if st, err := status(ctx, m.clientAddr()); err == nil && st.leader != 0 {
			votes[st.leader]++
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, n := range votes {
		if name, ok := e.ids[id]; ok && 2*n > len(e.members) {
			return name, nil
		}
	}
	return "", errors.New("no etcd leader that a majority of members agree on")
}

// Kill stops the clients' proxies to a member, so its connections close and
// new ones are refused, and SIGKILLs it.
func (e *Etcd) Kill(ctx context.Context, name string) error {
	m, err := e.member(name)
	if err != nil {
		return err
	}
	if err := e.proxies.DisableAll(e.clientLinks(m.id)); err != nil {
		return err
	}
	if p := m.running(); p != nil {
		if err := p.Kill(); err != nil {
			return fmt.Errorf("kill %s: %w", name, err)
		}
	}
	m.mu.Lock()
	if m.log != nil {
		m.log.Close()
	}
	m.mu.Unlock()
	return nil
}

// Restart starts a killed member with its old data, waits until it answers
// with a leader, then lets clients reach it.
func (e *Etcd) Restart(ctx context.Context, name string) error {
	m, err := e.member(name)
	if err != nil {
		return err
	}
	if m.running() == nil {
		if err := e.startMember(ctx, m); err != nil {
			return fmt.Errorf("restart %s: %w", name, err)
		}
		if err := e.waitReady(ctx, []*etcdMember{m}, etcdReadyWait); err != nil {
			return fmt.Errorf("restart %s: %w", name, err)
		}
	}
	return e.proxies.EnableAll(e.clientLinks(m.id))
}

// PauseNode stops a member with SIGSTOP.
func (e *Etcd) PauseNode(ctx context.Context, name string) error { return e.signal(name, true) }

// ResumeNode continues a paused member with SIGCONT.
func (e *Etcd) ResumeNode(ctx context.Context, name string) error { return e.signal(name, false) }

func (e *Etcd) signal(name string, stop bool) error {
	m, err := e.member(name)
	if err != nil {
		return err
	}
	p := m.running()
	if p == nil {
		return fmt.Errorf("%s is not running", name)
	}
	if stop {
		return p.Signal(sigStop)
	}
	return p.Signal(sigCont)
}

// Pids returns the pids of the running server processes, by node name.
func (e *Etcd) Pids() map[string]int {
	pids := make(map[string]int)
	for _, m := range e.members {
		if p := m.running(); p != nil {
			pids[m.name] = p.Pid()
		}
	}
	if e.storage != nil {
		if pid := e.storage.Pid(); pid != 0 {
			pids["storage"] = pid
		}
	}
	return pids
}

// Teardown stops the peer demultiplexers, the proxies, every member and the
// storage node, and removes the data directory. It is idempotent.
func (e *Etcd) Teardown(ctx context.Context) error {
	e.mu.Lock()
	if e.torn {
		e.mu.Unlock()
		return nil
	}
	e.torn = true
	e.mu.Unlock()
	for _, m := range e.members {
		if m.front != nil {
			m.front.Close()
		}
	}
	if e.proxies != nil {
		e.proxies.Close()
	}
	var errs []error
	for _, m := range e.members {
		m.mu.Lock()
		p, log := m.proc, m.log
		m.mu.Unlock()
		if p != nil {
			errs = append(errs, p.Stop(ctx, 5*time.Second))
		}
		if log != nil {
			log.Close()
		}
	}
	e.demuxWG.Wait()
	if e.proxyLg != nil {
		e.proxyLg.Close()
	}
	if e.storage != nil {
		errs = append(errs, e.storage.Stop(ctx))
	}
	if e.tmp != "" && strings.Contains(e.tmp, "lockcheck-etcd-") {
		errs = append(errs, os.RemoveAll(e.tmp))
	}
	return errors.Join(errs...)
}
