package clusters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Member is one numbered server of a replicated service (a ZooKeeper
// server, an etcd Member): a local process that a restart replaces, and
// the log every start appends to.
type Member struct {
	ID           int
	Name         string
	Client       int // the client port
	Dir, LogPath string
	ServerProc
}

// ClientAddr is the address clients dial the member at.
func (m *Member) ClientAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.Client)) }

// Running reports whether the member's server process is alive.
func (m *Member) Running() bool { return m.RunningProc() != nil }

// Ensemble is what the replicated services of numbered members (ZooKeeper,
// etcd) share: the members, a redis-server storage node, one proxy from
// every worker slot to every member, and proxies for the links between
// each ordered pair of members. Cutting a worker off (Partition, Heal),
// cutting a member off from its peers (Isolate, Rejoin), killing,
// restarting and pausing a member are the same for every such service;
// each gives its members, how to start one, and its peer proxies' names.
// A service embeds it.
type Ensemble struct {
	logDir  string
	servers []*Member // in member order
	storage StorageNode
	// peer names the proxies that carry member from's traffic to member to.
	peer func(from, to int) []string
	// runningOnly: pausing or resuming a member whose process has exited
	// fails as for one not running (see localServer).
	runningOnly bool
	// held holds the peer proxies a fault stopped (Isolate, CutPeers): a
	// link stays cut until the last fault that cut it lets go (under mu).
	held HeldCuts
	Local
	// Faults kills and restarts a member (its clients' proxies stopped
	// while it is down; a restart waits until it serves again), pauses and
	// resumes it (SIGSTOP, SIGCONT), cuts and heals a worker slot's links.
	Faults
}

// Replicated is what every ensemble offers the nemeses; each service that
// embeds one checks itself against it (var _ Replicated = ...).
type Replicated interface {
	Topology
	Killer
	Partitioner
	Primary
	Isolator
	Pauser
}

// Init readies an ensemble embedded in a service's struct: members of the
// kind named, logs under logDir, member-to-member traffic through the
// proxies peer names, and the Faults over its own node set (so it must be
// called on the ensemble where it stays).
func (e *Ensemble) Init(kind, logDir string, runningOnly bool, peer func(from, to int) []string) {
	e.logDir, e.runningOnly, e.peer = logDir, runningOnly, peer
	e.NodeSet = NodeSet{Kind: kind}
	e.Faults = FaultsOf(&e.NodeSet)
}

// EnsembleSize returns members and workers with their defaults: three
// members and one worker slot.
func EnsembleSize(members, workers int) (int, int) {
	if members < 1 {
		members = 3
	}
	return members, max(workers, 1)
}

// Local is what every topology of Local server processes keeps: its data
// directory, its proxies and their log, its lock nodes' set, and whether
// it is torn down (mu guards torn and whatever else the topology says).
type Local struct {
	DataDir  string
	Proxies  *Proxies
	ProxyLog *os.File
	NodeSet  NodeSet

	Mu   sync.Mutex
	torn bool
}

// SetUp makes the data directory (its name holds prefix) and runs start;
// when either fails, teardown stops whatever was started.
func (l *Local) SetUp(ctx context.Context, prefix string, teardown func(context.Context) error, start func() error) (err error) {
	defer func() {
		if err != nil {
			_ = teardown(context.WithoutCancel(ctx))
		}
	}()
	if l.DataDir, err = TempDir(prefix); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	return start()
}

// OpenProxies opens the proxies, their log in logDir (see OpenProxies).
func (l *Local) OpenProxies(logDir string) (err error) {
	l.Proxies, l.ProxyLog, err = OpenProxies(logDir)
	return err
}

// MarkTornDown marks the topology torn down and reports whether it was not
// yet: a teardown is done once.
func (l *Local) MarkTornDown() bool {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if l.torn {
		return false
	}
	l.torn = true
	return true
}

// CloseProxies stops the proxies and closes their log.
func (l *Local) CloseProxies() {
	if l.Proxies != nil {
		l.Proxies.Close()
	}
	if l.ProxyLog != nil {
		l.ProxyLog.Close()
	}
}

// RemoveTemp removes the data directory, when it is one of this run's
// (its name holds prefix).
func (l *Local) RemoveTemp(prefix string) error {
	if l.DataDir != "" && strings.Contains(l.DataDir, TempPrefix+prefix) {
		return os.RemoveAll(l.DataDir)
	}
	return nil
}

// RetrySetup runs once up to three times while it fails on a port that
// someone else took between choosing it and the server binding it;
// before each new try, reset forgets what the failed one made (once tears
// down what it started when it fails).
func (e *Ensemble) RetrySetup(ctx context.Context, once func(context.Context) error, reset func()) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = once(ctx); err == nil || !errors.Is(err, ErrPortInUse) {
			return err
		}
		e.Mu.Lock()
		e.torn, e.servers, e.storage, e.Proxies, e.ProxyLog = false, nil, nil, nil, nil
		e.NodeSet = NodeSet{Kind: e.NodeSet.Kind}
		reset()
		e.Mu.Unlock()
	}
	return err
}

// SetUp looks for the storage node's server, then makes the data
// directory and the proxies and runs start (see local.SetUp).
func (e *Ensemble) SetUp(ctx context.Context, prefix string, teardown func(context.Context) error, start func() error) error {
	if err := LookStorage(); err != nil {
		return err
	}
	return e.Local.SetUp(ctx, prefix, teardown, func() error {
		if err := e.OpenProxies(e.logDir); err != nil {
			return err
		}
		return start()
	})
}

// AddMember makes member id (named prefix<id>) with its data directory, its log
// and free ports for its client port and each of ports.
func (e *Ensemble) AddMember(prefix string, id int, ports ...*int) (*Member, error) {
	name := prefix + strconv.Itoa(id)
	m := &Member{ID: id, Name: name, Dir: filepath.Join(e.DataDir, name), LogPath: filepath.Join(e.logDir, name+".log")}
	_ = os.Remove(m.LogPath) // a retried setup starts a fresh log
	for _, p := range append([]*int{&m.Client}, ports...) {
		var err error
		if *p, err = FreePort(); err != nil {
			return nil, err
		}
	}
	e.servers = append(e.servers, m)
	return m, nil
}

// Launch starts every member (start i starts member i), waits until they
// serve, starts the storage node unless noStorage, and links the members
// into the set: a restart starts a member again and waits until it serves.
func (e *Ensemble) Launch(ctx context.Context, workers int, noStorage bool, start func(ctx context.Context, i int) error,
	wait func(ctx context.Context, ms []*Member) error) error {
	for i := range e.servers {
		if err := start(ctx, i); err != nil {
			return err
		}
	}
	if err := wait(ctx, e.servers); err != nil {
		return err
	}
	if !noStorage {
		var err error
		if e.storage, err = StartStorage(ctx, e.DataDir, e.logDir); err != nil {
			return err
		}
	}
	nodes := make([]SetNode, len(e.servers))
	for i, m := range e.servers {
		restart := func(ctx context.Context) error {
			if err := start(ctx, i); err != nil {
				return err
			}
			return wait(ctx, []*Member{m})
		}
		nodes[i] = SetNode{Name: m.Name, Addr: m.ClientAddr(),
			Server: LocalServer{Name: m.Name, Proc: &m.ServerProc, Start: restart, CloseLogAfterKill: true, RunningOnly: e.runningOnly}}
	}
	return e.NodeSet.Link(e.Proxies, workers, nodes)
}

// StartMember starts argv as member m's process in its own process group.
func StartMember(ctx context.Context, m *Member, argv, env []string) error {
	_, err := m.StartLogged(ctx, m.Name, m.LogPath, argv, env, m.Dir)
	return err
}

// pollStop wraps an error that ends a Poll at once.
type pollStop struct{ err error }

func (s pollStop) Error() string { return s.err.Error() }

// WaitServing waits at most timeout until serving says every member of ms
// serves. A member that has exited ends the wait at once (errPortInUse
// when its log says portInUse); at timeout the error names the members
// not serving yet, and what they lack ("not serving").
func (e *Ensemble) WaitServing(ctx context.Context, what string, ms []*Member, timeout time.Duration, portInUse, lack string,
	serving func(*Member) bool) error {
	return Poll(ctx, timeout, func() error {
		var notReady []string
		for _, m := range ms {
			if m.RunningProc() == nil {
				if b, _ := os.ReadFile(m.LogPath); strings.Contains(string(b), portInUse) {
					return pollStop{fmt.Errorf("%s exited during start-up: %w (log %s)", m.Name, ErrPortInUse, m.LogPath)}
				}
				return pollStop{fmt.Errorf("%s exited during start-up (log %s)", m.Name, m.LogPath)}
			}
			if !serving(m) {
				notReady = append(notReady, m.Name)
			}
		}
		if len(notReady) > 0 {
			return fmt.Errorf("%s %s (logs in %s)", strings.Join(notReady, ", "), lack, e.logDir)
		}
		return nil
	}, what)
}

// Nodes lists the members, then the storage node.
func (e *Ensemble) Nodes() []Node {
	var members []Node
	for _, m := range e.servers {
		members = append(members, Node{Name: m.Name, Role: "lock", Addr: m.ClientAddr()})
	}
	return append(members, StorageNodeOf(e.storage)...)
}

// LockAddrs returns the proxy addresses worker slot uses, one per member.
func (e *Ensemble) LockAddrs(slot int) []string { return e.NodeSet.LockAddrs(slot) }

// StorageAddr returns the storage node's address, "" without one.
func (e *Ensemble) StorageAddr() string {
	if e.storage == nil {
		return ""
	}
	return e.storage.Addr()
}

// Pids returns the pids of the running server processes, by node name.
func (e *Ensemble) Pids() map[string]int {
	pids := make(map[string]int)
	for _, m := range e.servers {
		if pid := m.Pid(); pid != 0 {
			pids[m.Name] = pid
		}
	}
	return StoragePid(pids, e.storage)
}

// peerLinks applies f to the proxies of every link between the member
// named name and its peers, both ways.
func (e *Ensemble) peerLinks(name string, f func([]string) error) error {
	i, err := e.NodeSet.Index(name)
	if err != nil {
		return err
	}
	id := e.servers[i].ID
	var links []string
	for _, p := range e.servers {
		if p.ID != id {
			links = append(links, e.peer(id, p.ID)...)
			links = append(links, e.peer(p.ID, id)...)
		}
	}
	return f(links)
}

// Isolate cuts a member off from its peers, both ways; clients still reach
// it. Peer links are cut by stopping their proxies: open connections close
// and new ones are refused, as when the SYN never arrives (see ZooKeeper for
// why a timeout toxic would not do).
func (e *Ensemble) Isolate(ctx context.Context, name string) error {
	return e.peerLinks(name, func(links []string) error {
		e.Mu.Lock()
		defer e.Mu.Unlock()
		return e.Proxies.DisableAll(e.heldLinks().Hold("isolate-"+name, links))
	})
}

// Rejoin restores the links Isolate cut that no other fault holds cut.
func (e *Ensemble) Rejoin(ctx context.Context, name string) error {
	return e.peerLinks(name, func(links []string) error {
		e.Mu.Lock()
		defer e.Mu.Unlock()
		return e.Proxies.EnableAll(e.heldLinks().Drop("isolate-"+name, links))
	})
}

// TeardownWith runs first, stops the proxies and every member, runs stopped,
// stops the storage node and removes the data directory, whose name holds
// prefix. It is idempotent.
func (e *Ensemble) TeardownWith(ctx context.Context, prefix string, first, stopped func()) error {
	if !e.MarkTornDown() {
		return nil
	}
	first()
	if e.Proxies != nil {
		e.Proxies.Close()
	}
	var errs []error
	for _, m := range e.servers {
		errs = append(errs, m.StopProc(ctx, 5*time.Second))
	}
	stopped()
	if e.ProxyLog != nil {
		e.ProxyLog.Close()
	}
	return errors.Join(append(errs, StopStorage(ctx, e.storage), e.RemoveTemp(prefix))...)
}

// PeerCutter is a cluster whose servers' links to one another can be cut
// pair by pair, so that a fault can give them any shape (a minority cut
// from the majority, a bridge, a ring, links cut one at a time), where an
// Isolator only cuts one server off from all the others.
type PeerCutter interface {
	// PeerNodes names the servers that talk to one another, in order.
	PeerNodes() []string
	// CutPeers cuts, on behalf of by (a fault's name), the links between
	// each named pair of servers, both ways: their connections to each
	// other close and new ones are refused; clients still reach both.
	CutPeers(ctx context.Context, by string, pairs [][2]string) error
	// HealPeers lets go of by's cuts of the named pairs, or of every cut
	// by made when pairs is nil; a link is restored once no fault holds
	// it cut. Healing what is not cut is a no-op.
	HealPeers(ctx context.Context, by string, pairs [][2]string) error
}

// PeerLinkAddrs returns where the proxies that carry member from's
// connections to member to listen (etcd: one; ZooKeeper: quorum and
// election), so that a test can send real traffic over one peer link.
func (e *Ensemble) PeerLinkAddrs(from, to string) ([]string, error) {
	i, err := e.NodeSet.Index(from)
	if err != nil {
		return nil, err
	}
	j, err := e.NodeSet.Index(to)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, name := range e.peer(e.servers[i].ID, e.servers[j].ID) {
		addr, err := e.Proxies.ListenAddr(name)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, addr)
	}
	return addrs, nil
}

// PeerNodes names the members, in member order.
func (e *Ensemble) PeerNodes() []string {
	names := make([]string, len(e.servers))
	for i, m := range e.servers {
		names[i] = m.Name
	}
	return names
}

// pairLinks names the proxies of the links between each pair of members,
// both ways.
func (e *Ensemble) pairLinks(pairs [][2]string) ([]string, error) {
	var links []string
	for _, p := range pairs {
		i, err := e.NodeSet.Index(p[0])
		if err != nil {
			return nil, err
		}
		j, err := e.NodeSet.Index(p[1])
		if err != nil {
			return nil, err
		}
		if i == j {
			return nil, fmt.Errorf("cut %s from itself: a pair needs two members", p[0])
		}
		a, b := e.servers[i].ID, e.servers[j].ID
		links = append(append(links, e.peer(a, b)...), e.peer(b, a)...)
	}
	return links, nil
}

// CutPeers stops the proxies of the links between each pair, both ways
// (see Isolate for why a stopped proxy rather than a timeout toxic).
func (e *Ensemble) CutPeers(ctx context.Context, by string, pairs [][2]string) error {
	links, err := e.pairLinks(pairs)
	if err != nil {
		return err
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Proxies.DisableAll(e.heldLinks().Hold(by, links))
}

// HealPeers starts again the proxies CutPeers stopped for by that no
// other fault holds stopped.
func (e *Ensemble) HealPeers(ctx context.Context, by string, pairs [][2]string) error {
	var links []string
	if pairs != nil {
		var err error
		if links, err = e.pairLinks(pairs); err != nil {
			return err
		}
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Proxies.EnableAll(e.heldLinks().Drop(by, links))
}

// heldLinks returns the faults that hold the peer proxies stopped (under
// mu).
func (e *Ensemble) heldLinks() HeldCuts {
	if e.held == nil {
		e.held = make(HeldCuts)
	}
	return e.held
}
