package clusters

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Node is one server of a cluster.
type Node struct {
	// Name identifies the node in nemesis ops and logs, e.g. "lock0".
	Name string
	// Role is what the node is for: "lock" (a lock service node) or
	// "storage" (the protected resource, which no nemesis touches).
	Role string
	// Addr is the node's real address, host:port on loopback.
	Addr string
}

// Cluster is a set of server processes that a test runs against.
type Cluster interface {
	// Setup starts every node and returns once all of them answer.
	Setup(ctx context.Context) error
	// Teardown stops every process Setup started. It is idempotent.
	Teardown(ctx context.Context) error
	// Nodes lists the cluster's nodes.
	Nodes() []Node
}

// Killer is a cluster whose nodes can be crashed and restarted.
type Killer interface {
	// Kill crashes the node (SIGKILL) and refuses connections to it.
	Kill(ctx context.Context, node string) error
	// Restart starts a killed node again and waits until it answers.
	Restart(ctx context.Context, node string) error
}

// Partitioner is a cluster whose client links can be cut.
type Partitioner interface {
	// Partition makes every link of worker slot to the lock nodes drop all
	// traffic in both directions (connections hang).
	Partition(ctx context.Context, slot int) error
	// Heal undoes Partition for slot; healing a healthy slot is a no-op.
	Heal(ctx context.Context, slot int) error
}

// NodePartitioner is a cluster whose worker slots can be cut off from some
// lock nodes while they still reach the others (a partial partition, as in
// Kleppmann's RedLock timeline).
type NodePartitioner interface {
	// PartitionNodes makes worker slot's links to the named lock nodes drop
	// all traffic both ways; its links to the other nodes stay up.
	PartitionNodes(ctx context.Context, slot int, nodes []string) error
	// Heal restores every link of slot.
	Heal(ctx context.Context, slot int) error
}

// ErrUnsupported is returned for a capability a cluster does not have.
var ErrUnsupported = errors.New("not supported by this cluster")

// ErrMissingBinary is wrapped by errors about a server binary that is not
// installed.
var ErrMissingBinary = errors.New("missing binary")

// Primary is a cluster with a leader the nemesis can find.
type Primary interface {
	// Leader returns the name of the current leader node.
	Leader(ctx context.Context) (string, error)
}

// Isolator is a cluster whose nodes can be cut off from their peers.
type Isolator interface {
	// Isolate cuts node's links to every other server, both ways.
	Isolate(ctx context.Context, node string) error
	// Rejoin restores them.
	Rejoin(ctx context.Context, node string) error
}

// Pauser is a cluster whose server processes can be paused.
type Pauser interface {
	// PauseNode stops the node's process (SIGSTOP).
	PauseNode(ctx context.Context, node string) error
	// ResumeNode continues it (SIGCONT).
	ResumeNode(ctx context.Context, node string) error
}

// LogFiler is a cluster whose servers keep a write-ahead log in files of
// their own, apart from their database: the stall-log nemesis holds only
// the fsyncs of those files, so a raft server's log writes stop while its
// database and its client service go on.
type LogFiler interface {
	// LogFiles returns the paths of node's log files and of the
	// directories that hold them, as they are now.
	LogFiles(node string) ([]string, error)
}

// Clocker is a cluster whose lock nodes' wall clocks can be moved at run
// time (the clock shim, see clockshim.go): CLOCK_REALTIME, gettimeofday and
// time move; CLOCK_MONOTONIC does not.
type Clocker interface {
	// SetClockOffset makes node's wall clock read real time + offset from
	// now on (offset 0 puts it back).
	SetClockOffset(ctx context.Context, node string, offset time.Duration) error
}

// Parted is a cluster made of parts that are different lock services side
// by side (the combined Redis + ZooKeeper topology), so that a nemesis can
// aim at one part.
type Parted interface {
	// PartNodes returns the names of the lock nodes of the named part (the
	// service's own names for them), nil for a part the cluster does not
	// have.
	PartNodes(part string) []string
}

// Login is how a client logs in to a service's lock nodes: the user, its
// password ("" for none) and the database to connect to.
type Login struct {
	User, Password, Database string
	// Pooled says the address is a connection pooler (PgBouncer) that may
	// run a client's consecutive statements on different server sessions:
	// a client must not keep prepared statements on the server.
	Pooled bool
}

// LoginNeeder is a cluster whose lock nodes need a login (a database
// server): the controller sends it to every worker in the open request.
type LoginNeeder interface {
	// Login returns the login the cluster's lock nodes accept.
	Login() Login
}

// FaultVerber is a cluster whose server faults are not the local signals
// (a container topology: `docker pause`, `docker kill`), and that names
// them so the history says what was done.
type FaultVerber interface {
	// FaultVerb returns the words for fault ("pause", "kill", "isolate"),
	// or "" for the nemesis's own.
	FaultVerb(fault string) string
}

// SessionName is the application name (PostgreSQL application_name, the
// MariaDB connection attribute program_name) that the worker serving
// process gives its database connections, so a nemesis can find the
// sessions of a lock holder on the server. The controller sends it to the
// worker in its config.
func SessionName(process int) string { return "lockcheck-p" + strconv.Itoa(process) }

// SessionKiller is a cluster whose database server can end a client's
// sessions while the client goes on (pg_terminate_backend, KILL
// CONNECTION): the server then releases every lock the session held.
type SessionKiller interface {
	// KillSessions ends every session whose application name is name and
	// returns the server's ids of the sessions it ended (none is no error).
	KillSessions(ctx context.Context, name string) ([]int64, error)
}

// Promoter is a cluster whose master a failover manager (the sentinels)
// replaces by promoting a replica when the master is lost.
type Promoter interface {
	// CutMaster cuts master off from its replicas and its failover
	// managers, and splits the worker slots with it: the slots in stay
	// still reach master and nothing else, every other slot reaches
	// everything but master. Clients on both sides keep running.
	CutMaster(ctx context.Context, master string, stay []int) error
	// HealMaster restores every link CutMaster cut. It is idempotent.
	HealMaster(ctx context.Context) error
	// WaitPromotion waits at most timeout until the failover managers
	// agree on a master other than old, and returns it.
	WaitPromotion(ctx context.Context, old string, timeout time.Duration) (string, error)
	// WaitReplica waits at most timeout until node is a replica in sync
	// with a master (an old master has been demoted and resynced).
	WaitReplica(ctx context.Context, node string, timeout time.Duration) error
	// FailoverWords says in the service's own words what its failover
	// did, for the details of the failover's ops in the history.
	FailoverWords() FailoverWords
}

// FailoverWords are a Promoter's words for what its failover did.
type FailoverWords struct {
	// Cut says what CutMaster did to master: "cut master redis0 off from
	// replicas and sentinels".
	Cut func(master string) string
	// Promoted says which replica replaced old, by whom and after how
	// long: "sentinels promoted redis1 after 0.4 s".
	Promoted func(old, promoted string, after time.Duration) string
	// Rejoined says how old, healed of a cut, became a replica after how
	// long: "the sentinels demoted redis0 to a replica after 1.2 s, and
	// its resync dropped its writes since the cut".
	Rejoined func(old string, after time.Duration) string
}

// KeyPrimary is a cluster whose keys live on different masters: the
// leader a fault on a key's lock must hit is the master of that key.
type KeyPrimary interface {
	// KeyLeader returns the name of the master that serves key.
	KeyLeader(ctx context.Context, key string) (string, error)
}

// WorkerLinks is what a worker of one slot needs to reach a topology's lock
// nodes beyond their addresses (Topology.LockAddrs): the login of a
// database, the Sentinels that name the master, and the map of every
// address the service announces to the slot's own proxy for it. The
// controller of a run and `check conformance` send the same fields in the
// worker protocol's open request.
type WorkerLinks struct {
	// Login is the database login, zero for a service with none.
	Login Login
	// DiscoveryAddrs and MasterName: the slot's links to the servers that
	// name the current master (Redis Sentinels) and the master's name, for
	// a topology whose workers find the master through them (the worker
	// protocol's discovery_addrs and master_name).
	DiscoveryAddrs []string
	MasterName     string
	// AddrMap maps every address the service announces to the slot's own
	// proxy for it (Sentinel, Redis Cluster); nil for a service that
	// announces none.
	AddrMap map[string]string
}

// Linker is a topology whose workers need more than the lock nodes'
// addresses and a login to reach them (the Sentinels that name the master,
// the map of every address the service announces).
type Linker interface {
	// WorkerLinks returns what a worker of slot needs beyond the lock
	// nodes' addresses; its Login is not used (LoginNeeder gives it).
	WorkerLinks(slot int) WorkerLinks
}

// LinksOf returns what a worker of slot needs to reach c's lock nodes
// beyond their addresses.
func LinksOf(c Cluster, slot int) WorkerLinks {
	var l WorkerLinks
	if k, ok := c.(Linker); ok {
		l = k.WorkerLinks(slot)
	}
	l.Login = Login{}
	if n, ok := c.(LoginNeeder); ok {
		l.Login = n.Login()
	}
	return l
}
