// The external topology (--cluster external): lock servers the user runs
// and lockcheck does not start, reached through lockcheck's proxies.

package clusters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// ExternalConfig describes lock servers someone else runs: their
// addresses and roles, the commands that stop and start them, and the
// worker slots that reach them.
type ExternalConfig struct {
	// Addrs are the lock servers' addresses, host:port, one per lock node
	// (--external HOST:PORT,...): servers lock0, lock1, ... with no
	// commands. Servers, when given, replace them.
	Addrs []string
	// Servers are the servers of a topology file, lock servers and the
	// others their service needs (Sentinels, replicas).
	Servers []ExternalServer
	// Login is the database login the workers get (zero for none).
	Login Login
	// MasterName is the name the failover managers know the master by.
	MasterName string
	// CommandTimeout bounds each control command (default 30 s).
	CommandTimeout time.Duration
	// Workers is the number of worker slots; each slot gets its own proxy
	// to each server.
	Workers int
	// LogDir receives the proxies' and the storage node's logs.
	LogDir string
}

// ExternalServer is one server of an external topology.
type ExternalServer struct {
	// Name names it in the history and in its commands' {name}.
	Name string
	// Role is what it is for: RoleLock (a lock server, the default) or a
	// role its service names (a Sentinel, a replica).
	Role string
	// Addr is where lockcheck reaches it, host:port.
	Addr string
	// Announce is the address the service names it by to clients (a
	// Sentinel's answer, a cluster's map) when that is not Addr.
	Announce string
	// Commands are its control commands by word (ControlWords).
	Commands Commands
}

// RoleLock is the role of a server that grants locks.
const RoleLock = "lock"

// defaultCommandTimeout bounds a control command when the topology file
// sets no timeout.
const defaultCommandTimeout = 30 * time.Second

// External is a Topology of lock servers lockcheck does not run: its
// workers reach them through a proxy per worker slot and server, so that
// the faults of the client's side apply (a slot's links cut, slowed,
// refused or made lossy; the workers paused, killed or their clocks
// moved), and the storage node of the protected resource is a local
// redis-server as in every run. Its servers are faulted only through the
// control commands the user gives for them (Commanded): a kill runs the
// kill command, a pause the stop command; a fault whose command is
// missing is refused (see Lacks and Limits).
type External struct {
	cfg     ExternalConfig
	storage StorageNode
	Local
	// Others holds the servers that grant no lock (Sentinels, replicas),
	// each with a proxy per worker slot too.
	Others NodeSet
	ran    commandLog
	Faults
}

var (
	_ Topology        = (*External)(nil)
	_ Partitioner     = (*External)(nil)
	_ NodePartitioner = (*External)(nil)
	_ LinkToxicker    = (*External)(nil)
	_ Limited         = (*External)(nil)
	_ Killer          = (*External)(nil)
	_ Wiper           = (*External)(nil)
	_ Pauser          = (*External)(nil)
	_ Commanded       = (*External)(nil)
	_ CommandTaker    = (*External)(nil)
)

// Limited is a cluster that can say why a fault it does not support
// (ErrUnsupported) does not apply to it.
type Limited interface {
	// Limits says which faults the cluster supports, and why no others.
	Limits() string
}

// NewExternal returns an unstarted external topology.
func NewExternal(cfg ExternalConfig) *External {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = defaultCommandTimeout
	}
	if len(cfg.Servers) == 0 {
		for i, a := range cfg.Addrs {
			cfg.Servers = append(cfg.Servers, ExternalServer{Name: "lock" + strconv.Itoa(i), Role: RoleLock, Addr: a})
		}
	}
	for i := range cfg.Servers {
		if cfg.Servers[i].Role == "" {
			cfg.Servers[i].Role = RoleLock
		}
	}
	e := &External{cfg: cfg, Local: Local{NodeSet: NodeSet{Kind: "lock server"}}, Others: NodeSet{Kind: "server"}}
	e.Faults = FaultsOf(&e.NodeSet)
	return e
}

// Config returns the topology's config, its defaults filled in.
func (e *External) Config() ExternalConfig { return e.cfg }

// externalDial bounds the check that each server answers.
const externalDial = 3 * time.Second

// Setup checks that every server accepts a connection, then starts the
// storage node and the proxies. On error, whatever was started is stopped.
func (e *External) Setup(ctx context.Context) error {
	if len(e.cfg.Servers) == 0 {
		return errors.New("--cluster external: no lock server address (give them with --external HOST:PORT,... or a topology file)")
	}
	for _, srv := range e.cfg.Servers {
		d := net.Dialer{Timeout: externalDial}
		c, err := d.DialContext(ctx, "tcp", srv.Addr)
		if err != nil {
			return fmt.Errorf("--cluster external: %s server %s (%s) does not answer: %w", srv.Role, srv.Name, srv.Addr, err)
		}
		c.Close()
	}
	if err := LookStorage(); err != nil {
		return err
	}
	return e.SetUp(ctx, "external-", e.Teardown, func() error {
		if err := os.MkdirAll(e.cfg.LogDir, 0o755); err != nil {
			return fmt.Errorf("create log dir: %w", err)
		}
		var err error
		if e.storage, err = StartStorage(ctx, e.DataDir, e.cfg.LogDir); err != nil {
			return err
		}
		if err := e.OpenProxies(e.cfg.LogDir); err != nil {
			return err
		}
		var lock, others []SetNode
		for _, srv := range e.cfg.Servers {
			n := SetNode{Name: srv.Name, Addr: srv.Addr, Server: commandServer{name: srv.Name, addr: srv.Addr,
				cmds: srv.Commands, timeout: e.cfg.CommandTimeout, log: &e.ran}}
			if srv.Role == RoleLock {
				lock = append(lock, n)
			} else {
				others = append(others, n)
			}
		}
		if err := e.NodeSet.Link(e.Proxies, e.cfg.Workers, lock); err != nil {
			return err
		}
		return e.Others.Link(e.Proxies, e.cfg.Workers, others)
	})
}

// Teardown closes the proxies and stops the storage node; the lock
// servers are the user's, and are left running.
func (e *External) Teardown(ctx context.Context) error {
	if !e.MarkTornDown() {
		return nil
	}
	e.CloseProxies()
	return errors.Join(StopStorage(ctx, e.storage), e.RemoveTemp("external-"))
}

// Nodes lists the servers (their own addresses) with their roles, then
// the storage node.
func (e *External) Nodes() []Node {
	var nodes []Node
	for _, srv := range e.cfg.Servers {
		nodes = append(nodes, Node{Name: srv.Name, Role: srv.Role, Addr: srv.Addr})
	}
	return append(nodes, StorageNodeOf(e.storage)...)
}

// Login returns the database login the topology file gives (LoginNeeder
// through the services' external forms that need one).
func (e *External) Login() Login { return e.cfg.Login }

// Lacks returns a *MissingCommand when some lock server has no command
// for one of words (Commanded).
func (e *External) Lacks(fault string, words ...string) error {
	var missing []string
	var nodes []string
	for _, srv := range e.cfg.Servers {
		if srv.Role != RoleLock {
			continue
		}
		if l := lacking(srv.Commands, words); len(l) > 0 {
			nodes = append(nodes, srv.Name)
			for _, w := range l {
				if !slices.Contains(missing, w) {
					missing = append(missing, w)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if len(nodes) == e.cfg.LockServers() {
		nodes = nil // every lock server lacks them: the message need not list them
	}
	return &MissingCommand{Fault: fault, Words: missing, Nodes: nodes}
}

// LockServers counts the servers of role RoleLock (an empty role is
// RoleLock).
func (c ExternalConfig) LockServers() int {
	n := 0
	for _, srv := range c.Servers {
		if srv.Role == RoleLock || srv.Role == "" {
			n++
		}
	}
	return n
}

// TakeCommands removes and returns the control commands run on nodes
// (CommandTaker).
func (e *External) TakeCommands(nodes []string) []history.Command { return e.ran.take(nodes) }

// LockAddrs returns worker slot's proxy addresses, one per lock server.
func (e *External) LockAddrs(slot int) []string { return e.NodeSet.LockAddrs(slot) }

// StorageAddr returns the storage node's address.
func (e *External) StorageAddr() string { return e.storage.Addr() }

// Partition cuts every link of a worker slot to the servers.
func (e *External) Partition(ctx context.Context, slot int) error {
	return errors.Join(e.NodeSet.Partition(ctx, slot), e.Others.Partition(ctx, slot))
}

// Heal restores every link of a worker slot.
func (e *External) Heal(ctx context.Context, slot int) error {
	return errors.Join(e.NodeSet.Heal(ctx, slot), e.Others.Heal(ctx, slot))
}

// PartitionNodes cuts worker slot's links to the named lock servers only.
func (e *External) PartitionNodes(ctx context.Context, slot int, nodes []string) error {
	return e.NodeSet.PartitionNodes(ctx, slot, nodes)
}

// SetLinkToxics sets fault's toxics on a worker slot's links.
func (e *External) SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error {
	return e.NodeSet.SetLinkToxics(ctx, slot, fault, ts)
}

// Limits says what --cluster external can fault.
func (e *External) Limits() string {
	return "--cluster external reaches servers lockcheck does not run: it faults the client's side " +
		"(the workers: pause, crash, their clocks; their links: partition and the link faults such as latency, reply-loss, refuse), " +
		"and the servers only through the control commands a topology file gives (kill, start, stop, continue; docs/your-lock.md)"
}

// LedExternal is an External whose leader is known: its one lock server,
// or the one its service's servers name (the master a Sentinel names), so
// the faults of a leader (pause-leader) strike it.
type LedExternal struct {
	*External
	leader func(ctx context.Context) (string, error)
}

var _ Primary = (*LedExternal)(nil)

// Led returns e with its leader found by leader; nil leader means e's
// first lock server, for a topology of one.
func (e *External) Led(leader func(ctx context.Context) (string, error)) *LedExternal {
	if leader == nil {
		leader = func(context.Context) (string, error) {
			for _, srv := range e.cfg.Servers {
				if srv.Role == RoleLock {
					return srv.Name, nil
				}
			}
			return "", errors.New("no lock server")
		}
	}
	return &LedExternal{External: e, leader: leader}
}

// Leader returns the name of the lock server that leads.
func (l *LedExternal) Leader(ctx context.Context) (string, error) { return l.leader(ctx) }

// FaultVerb names the server faults as the control commands they run
// (FaultVerber): "ran the kill command on".
func (e *External) FaultVerb(fault string) string {
	return map[string]string{"kill": "ran the kill command on", "pause": "ran the stop command on"}[fault]
}

// RestartEmpty stops the proxies to the named lock server, runs its
// restart-without-data command, waits until it accepts connections and
// starts its proxies again (Wiper).
func (e *External) RestartEmpty(ctx context.Context, name string) error {
	s := &e.NodeSet
	i, err := s.Index(name)
	if err != nil {
		return err
	}
	srv, ok := s.nodes[i].Server.(commandServer)
	if !ok {
		return fmt.Errorf("%s: not a server of the topology file", name)
	}
	if err := s.proxies.DisableAll(s.nodeLinks(i)); err != nil {
		return err
	}
	err = srv.waitAccepting(ctx, CmdRestartEmpty)
	return errors.Join(err, s.proxies.EnableAll(s.nodeLinks(i)))
}
