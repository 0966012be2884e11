package etcd

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

	"github.com/lockcheck/lockcheck/clusters"
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

// Look returns the path of etcd, or an error naming the Debian package
// to install.
func Look() (string, error) {
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", fmt.Errorf("%w: etcd not found in PATH: install the Debian package etcd-server (scripts/deps.sh does)", clusters.ErrMissingBinary)
	}
	return p, nil
}

// Version returns the version the installed etcd's `etcd --version`
// prints ("3.4.23"), or "" when etcd is missing.
func Version() string {
	bin, err := Look()
	if err != nil {
		return ""
	}
	return versionOf(bin)
}

// etcdVersionOf returns the version `BIN --version` prints, or "".
func versionOf(bin string) string {
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

// Config describes a local etcd cluster.
type Config struct {
	// Members is the cluster size, 3 by default.
	Members int
	// Workers is the number of worker slots; each slot gets its own proxy
	// to each member's client port.
	Workers int
	// LogDir receives one log per member.
	LogDir string
	// Server is the etcd binary to run (a version built from the Go
	// module); "" means the installed etcd (Look).
	Server string
}

// etcdMember is one etcd server.
type etcdMember struct {
	*clusters.Member
	peer  int          // the peer port it listens on
	front net.Listener // its advertised peer URL: the peer demultiplexer
	// existing says the member was added to a running cluster (with an
	// empty data dir: RestartEmpty), so it starts with
	// --initial-cluster-state existing.
	existing bool
}

func (m *etcdMember) peerAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.peer)) }

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
type Cluster struct {
	cfg     Config
	bin     string
	members []*etcdMember
	demuxWG sync.WaitGroup
	// Ensemble gives Kill, Restart, PauseNode, ResumeNode, Partition, Heal,
	// Isolate and Rejoin.
	clusters.Ensemble

	ids map[uint64]string // member id -> name, learned from status (under mu)
}

// New returns an unstarted cluster.
func New(cfg Config) *Cluster {
	cfg.Members, cfg.Workers = clusters.EnsembleSize(cfg.Members, cfg.Workers)
	e := &Cluster{cfg: cfg, ids: make(map[uint64]string)}
	e.Init("etcd member", cfg.LogDir, true, func(from, to int) []string { return []string{etcdPeerProxy(from, to)} })
	return e
}

func etcdPeerProxy(from, to int) string { return fmt.Sprintf("etcd%d-etcd%d-peer", from, to) }

// Setup starts the members and the storage node and returns once every
// member answers a status request naming the same leader. On error,
// whatever was started is stopped. A port taken by someone else between
// choosing it and etcd binding it is retried with fresh ports.
func (e *Cluster) Setup(ctx context.Context) error {
	return e.RetrySetup(ctx, e.setupOnce, func() { e.members, e.ids = nil, make(map[uint64]string) })
}

func (e *Cluster) setupOnce(ctx context.Context) (err error) {
	if e.bin = e.cfg.Server; e.bin == "" {
		if e.bin, err = Look(); err != nil {
			return err
		}
	}
	return e.SetUp(ctx, "etcd-", e.Teardown, func() (err error) {
		for i := 1; i <= e.cfg.Members; i++ {
			m := &etcdMember{}
			if m.Member, err = e.AddMember("etcd", i, &m.peer); err != nil {
				return err
			}
			if m.front, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				return fmt.Errorf("listen for %s's peers: %w", m.Name, err)
			}
			if err := os.MkdirAll(m.Dir, 0o755); err != nil {
				return fmt.Errorf("create %s dir: %w", m.Name, err)
			}
			e.members = append(e.members, m)
		}
		// This attempt's members: a setup retried (a port taken) starts
		// again from none, while the connections this attempt's
		// demultiplexers accepted may still be looking for their dialer.
		members := e.members
		for _, to := range members {
			for _, from := range members {
				if from.ID != to.ID {
					if _, err := e.Proxies.Add(etcdPeerProxy(from.ID, to.ID), to.peerAddr()); err != nil {
						return err
					}
				}
			}
			e.demuxWG.Add(1)
			go e.demux(to, members)
		}
		return e.Launch(ctx, e.cfg.Workers, false, func(ctx context.Context, i int) error { return e.startMember(ctx, e.members[i]) },
			e.waitReady)
	})
}

// initialCluster is the --initial-cluster flag: every member at its
// advertised (demultiplexer) peer URL.
func (e *Cluster) initialCluster() string {
	var parts []string
	for _, m := range e.members {
		parts = append(parts, m.Name+"=http://"+m.front.Addr().String())
	}
	return strings.Join(parts, ",")
}

// startMember starts one member in its own process group. A member started
// again finds its data dir and rejoins with it.
func (e *Cluster) startMember(ctx context.Context, m *etcdMember) error {
	client := "http://" + m.ClientAddr()
	state := "new"
	if m.existing {
		state = "existing"
	}
	argv := []string{e.bin, "--name", m.Name, "--data-dir", filepath.Join(m.Dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", "http://" + m.peerAddr(),
		"--initial-advertise-peer-urls", "http://" + m.front.Addr().String(),
		"--initial-cluster", e.initialCluster(), "--initial-cluster-state", state,
		"--initial-cluster-token", filepath.Base(e.DataDir),
		"--heartbeat-interval", strconv.Itoa(etcdHeartbeatMS), "--election-timeout", strconv.Itoa(etcdElectionMS),
		"--logger", "zap", "--log-outputs", "stderr"} // v2 is off by default from 3.4 on; 3.6 has no --enable-v2
	return clusters.StartMember(ctx, m.Member, argv, nil)
}

// demux accepts the peer connections to member to and forwards each
// through the proxy of the pair (dialing member, to), the dialer one of
// members. A connection from a process that is no member is closed.
func (e *Cluster) demux(to *etcdMember, members []*etcdMember) {
	defer e.demuxWG.Done()
	for {
		c, err := to.front.Accept()
		if err != nil {
			return
		}
		go e.forward(c, to, members)
	}
}

func (e *Cluster) forward(c net.Conn, to *etcdMember, members []*etcdMember) {
	from := dialer(c, members)
	if from == nil || from.ID == to.ID {
		if e.ProxyLog != nil {
			fmt.Fprintf(e.ProxyLog, "%s etcd peer demux: closed a connection to %s from %s: not from another member\n",
				time.Now().Format(time.RFC3339Nano), to.Name, c.RemoteAddr())
		}
		c.Close()
		return
	}
	listen, err := e.Proxies.ListenAddr(etcdPeerProxy(from.ID, to.ID))
	if err != nil {
		c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", listen, time.Second)
	if err != nil {
		c.Close() // the link is down: the peer sees its connection refused
		return
	}
	clusters.Splice(c, up)
}

// dialer returns the member of members whose process owns the other end
// of c, a connection accepted on loopback, or nil.
func dialer(c net.Conn, members []*etcdMember) *etcdMember {
	i := clusters.DialingProcess(c, len(members), func(i int) int { return members[i].Pid() })
	if i < 0 {
		return nil
	}
	return members[i]
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
func (e *Cluster) waitReady(ctx context.Context, ms []*clusters.Member) error {
	return e.WaitServing(ctx, "etcd", ms, etcdReadyWait, "address already in use", "has no leader", func(m *clusters.Member) bool {
		st, err := status(ctx, m.ClientAddr())
		if err != nil || st.leader == 0 {
			return false
		}
		e.Mu.Lock()
		e.ids[st.member] = m.Name
		e.Mu.Unlock()
		return true
	})
}

// Leader returns the member the first answering member names as leader.
// A member isolated from its peers may still believe it leads; the
// majority's answer wins.
func (e *Cluster) Leader(ctx context.Context) (string, error) {
	votes := make(map[uint64]int)
	for _, m := range e.members {
		if !m.Running() {
			continue
		}
		if st, err := status(ctx, m.ClientAddr()); err == nil && st.leader != 0 {
			votes[st.leader]++
		}
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	for id, n := range votes {
		if name, ok := e.ids[id]; ok && 2*n > len(e.members) {
			return name, nil
		}
	}
	return "", errors.New("no etcd leader that a majority of members agree on")
}

// Teardown stops the peer demultiplexers, the proxies, every member and the
// storage node, and removes the data directory. It is idempotent.
func (e *Cluster) Teardown(ctx context.Context) error {
	return e.TeardownWith(ctx, "etcd-", func() {
		for _, m := range e.members {
			if m.front != nil {
				m.front.Close()
			}
		}
	}, e.demuxWG.Wait)
}
