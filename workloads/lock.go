package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/lookups"
	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Grant is what a successful acquire returns.
type Grant struct {
	// Owner is the unique value the client stored as the lock's owner.
	Owner string
	// Token is the fencing token, 0 when the design has none.
	Token int64
	// Detail is what the client wants the history to show of the grant
	// (e.g. a reentrant lock's depth), "" for nothing.
	Detail string
	// Nodes are the lock nodes that granted the lock, for designs that ask
	// several (RedLock); nil otherwise.
	Nodes []string
	// Backend is the server's id of the database session whose statement
	// took the lock (history.Value.Backend), 0 when the design has none.
	Backend int64
}

// Lock is a lock client as one worker process uses it.
type Lock interface {
	// Acquire takes the lock named key, retrying until the acquire timeout.
	Acquire(ctx context.Context, key string) (Grant, error)
	// Release gives the lock back and reports what it observed.
	Release(ctx context.Context, key string, g Grant) (*history.Value, error)
	// Close releases the client's connections.
	Close() error
}

// Validator is a lock client that knows when it may have lost a lock it was
// granted (a ZooKeeper session suspended or expired). The worker asks it
// right before each protected access, as Curator advises.
type Validator interface {
	// Valid returns an error when the lock on key may no longer be held.
	Valid(key string) error
}

// Sectioner is a design that runs the critical section itself instead of
// the worker's Resource: a design with no lock, such as an optimistic
// transaction, whose safety lives in how it touches the resource. The
// worker calls it, when the design's Lock implements it, with the same
// arguments as Resource.CriticalSection and records what it returns the
// same way; it must keep the resource on the storage node (RegisterKey) so
// the checkers read the same ops as for every other design.
type Sectioner interface {
	// CriticalSection runs one critical section on the resource guarded by
	// key; see Resource.CriticalSection.
	CriticalSection(ctx context.Context, key string, token int64, check func() error) (*history.Value, error)
}

// Design describes one lock design lockcheck can test.
type Design struct {
	// Name is the --lock name.
	Name string
	// Summary is the one line `check list` prints.
	Summary string
	// Service names the lock service the design needs ("redis").
	Service string
	// LockNodes is how many lock service nodes the design uses.
	LockNodes int
	// Tokens reports whether the design hands out monotonic fencing tokens.
	Tokens bool
	// ZxidTokens marks tokens that are ZooKeeper zxids (a lock node's
	// czxid): the stories print them as epoch:counter.
	ZxidTokens bool
	// NoLock marks a design that takes no lock at all (acquire grants at
	// once): its holds overlap by design, so the mutual-exclusion checkers
	// (mutex, overlap) do not judge it; the resource checkers do.
	NoLock bool
	// StockOnLock keeps the inventory's stock on the lock service's master
	// instead of the storage node: a design that takes no lock but is
	// itself the data store (WATCH/MULTI/EXEC), so a failover of the lock
	// service can lose its writes.
	StockOnLock bool
	// Workloads are the workloads the design runs; nil means every one
	// but those a design must list (Workload.Listed).
	Workloads []string
	// SessionHeld reports that the lock lives as long as the client's
	// database session (an advisory lock, GET_LOCK, a row lock in an open
	// transaction): a holder gone silent loses it when the server ends the
	// session after its session timeout, not when a lease runs out.
	SessionHeld bool
	// SessionTTL, when set, is the lease the lock service really applies
	// for --lease (etcd grants leases in whole seconds); nil means --lease
	// itself. The nemeses and the exercise checker judge faults against it.
	SessionTTL func(lease time.Duration) time.Duration
	// Guarded marks a design whose critical section keeps the register on
	// the lock service and writes it only in a transaction that still finds
	// the lock held (etcd's guarded write): it is judged as a fenced run
	// is, by the resource checkers.
	Guarded bool
	// Renews reports whether the client renews its lease while it holds
	// the lock (a watchdog), so a held lock does not expire on its own.
	Renews bool
	// WrittenOver, when set, marks a design whose lock keys have no time
	// to live on the server and pass from holder to holder by being
	// written over (SETNX, then GETSET once a client judges the stored
	// time passed): the release observer watches writes of the keys too.
	// It reports whether writing the value next over the value old took
	// the lock from old's holder; a write that lost the race for it (it
	// only moved the time) did not.
	WrittenOver func(old, next string) bool
	// Library names the Go client library the design wraps
	// (libraries.Library), which check run --library-version can link at
	// another version; "" for a design built on lockcheck's own recipe or
	// with its own Worker.
	Library string
	// New builds a client for one worker; events reports what the client
	// notices on its own (session events) into the history. It is nil for
	// a design with its own Worker.
	New func(cfg Config, rng *rand.Rand, events func(detail string)) (Lock, error)
	// Worker, when set, is the command of the design's own worker, a lock
	// library in another language that ships with lockcheck: the
	// interpreter and the bundled file it runs (see package workers, which
	// resolves the file), e.g. {"python3", "python/redis_py_lock.py"}. The
	// controller runs it instead of `check worker` unless --worker-cmd is
	// given.
	Worker []string
	// Plain, for a design with its own Worker, is the command of a plain
	// loop in the worker's language: the same library called as its users
	// call it, with no harness, which `check bench` compares with the
	// harness (resolved like Worker). It reads {"seconds": S, "workers":
	// [CONFIG, ...]} on stdin, runs one thread per worker config, and
	// prints {"grants": N}. nil when there is none.
	Plain []string
}

// Designs returns every known lock design, sorted by name.
func Designs() []Design {
	ds := []Design{
		{Name: "redis-set-px", Service: "redis", LockNodes: 1, Tokens: true, New: newSetPX,
			Summary: "SET key owner NX PX lease (+ INCR token in the same script); release by Lua compare-and-delete"},
		{Name: "redis-set-px-del", Service: "redis", LockNodes: 1, Tokens: true, New: newSetPXDel,
			Summary: "the same acquire; release by plain DEL, which can delete another holder's key"},
		{Name: "redis-setnx-expire", Service: "redis", LockNodes: 1, Tokens: true, New: newSetNXExpire,
			Summary: "SETNX then PEXPIRE as two commands (+ INCR token); release by plain DEL"},
		{Name: "zk-ephemeral", Service: "zookeeper", Library: "go-zookeeper", LockNodes: 3, Tokens: true, ZxidTokens: true, New: newZKEphemeral,
			Summary: "ZooKeeper ephemeral node per key, waiters watch it and retry (herd); token = czxid; --lease is the session timeout"},
		{Name: "zk-sequential", Service: "zookeeper", Library: "go-zookeeper", LockNodes: 3, Tokens: true, ZxidTokens: true, New: newZKSequential,
			Summary: "Curator InterProcessMutex recipe: protected ephemeral-sequential children, watch the predecessor; token = czxid; --lease is the session timeout"},
	}
	ds = append(ds, registered...)
	sort.Slice(ds, func(i, j int) bool { return ds[i].Name < ds[j].Name })
	return ds
}

// registered holds the designs that register themselves from their own file.
var registered []Design

// register adds a design to Designs; each design file calls it from init, so
// adding a design touches no shared list.
func register(d Design) { Register(d) }

// Register adds a design to Designs; each design's file calls it from
// init. A design registered twice, or with no name, service or client
// (New or Worker), is a programming error and panics.
func Register(d Design) {
	if d.Name == "" || d.Service == "" || d.New == nil && len(d.Worker) == 0 {
		panic(fmt.Sprintf("workloads: design %q: name, service and a client (New or Worker) are required", d.Name))
	}
	for _, o := range registered {
		if o.Name == d.Name {
			panic(fmt.Sprintf("workloads: design %q registered twice", d.Name))
		}
	}
	registered = append(registered, d)
}

// FindDesign returns the design called name, or an error listing the known
// designs.
func FindDesign(name string) (Design, error) {
	lookups.Count("design")
	var names []string
	for _, d := range Designs() {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Design{}, suggest.Unknown("lock", name, names)
}

// EffectiveLease returns the lease the lock service applies for the
// test's lease (see SessionTTL).
func (d Design) EffectiveLease(lease time.Duration) time.Duration {
	if d.SessionTTL == nil {
		return lease
	}
	return d.SessionTTL(lease)
}

// newOwner returns a unique owner value for one acquire.
func newOwner(process int, rng *rand.Rand) string {
	return fmt.Sprintf("p%d-%016x", process, rng.Uint64())
}

// retryLoop calls try until it grants the lock, fails, or the acquire timeout
// passes, sleeping a jittered retry interval between attempts.
func retryLoop(ctx context.Context, cfg Config, rng *rand.Rand, try func(context.Context) (Grant, bool, error)) (Grant, error) {
	deadline := time.Now().Add(ms(cfg.AcquireTimeoutMS))
	for {
		g, ok, err := try(ctx)
		if err != nil {
			return Grant{}, err
		}
		if ok {
			return g, nil
		}
		wait := ms(cfg.RetryMS)
		if wait > 0 {
			wait = wait/2 + time.Duration(rng.Int64N(int64(wait)))
		}
		if time.Now().Add(wait).After(deadline) {
			return Grant{}, ErrNotAcquired
		}
		select {
		case <-ctx.Done():
			return Grant{}, Definite(ctx.Err())
		case <-time.After(wait):
		}
	}
}

// LibraryDesigns names the designs that wrap the Go client library called
// name (Design.Library), or any library when name is "".
func LibraryDesigns(name string) []string {
	var out []string
	for _, d := range Designs() {
		if d.Library != "" && (name == "" || d.Library == name) {
			out = append(out, d.Name)
		}
	}
	return out
}
