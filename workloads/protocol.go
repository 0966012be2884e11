package workloads

import (
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// ProtocolVersion is the version of the worker protocol described in
// docs/worker-protocol.md. The controller sends it in the open request and a
// worker must refuse a version it does not speak.
const ProtocolVersion = 2

// Request operation names beyond the history's acquire, release and cs.
const (
	FOpen  = "open"
	FClose = "close"
)

// Request is one line the controller writes to a worker's stdin.
type Request struct {
	// ID is unique per worker and echoed in the reply.
	ID int64 `json:"id"`
	// F is open, acquire, release, cs or close.
	F string `json:"f"`
	// Key is the lock name for acquire, release and cs.
	Key string `json:"key,omitempty"`
	// Value carries the grant (token, owner) for release and cs.
	Value *history.Value `json:"value,omitempty"`
	// Config is sent with open only.
	Config *Config `json:"config,omitempty"`
	// Then, on an acquire, asks a worker whose open reply listed it in
	// Reply.Then to go on at once when the acquire is granted: ThenCS runs
	// the first critical section with the grant, as an application does,
	// and replies to it as to a cs request with id ID+1; ThenCSRelease
	// also releases the lock once that critical section has replied ok or
	// fail, and replies to the release as to a release request with id
	// ID+2. An acquire that is not granted gets its own reply only.
	Then string `json:"then,omitempty"`
}

// ThenCS is the Request.Then that runs a critical section right after a
// grant.
const ThenCS = "cs"

// ThenCSRelease is the Request.Then that runs a critical section right
// after a grant and then releases the lock, unless the critical section's
// outcome is unknown (info).
const ThenCSRelease = "cs+release"

// ThenSteps returns how many requests then stands for, each with an id
// of its own after the request's: 0 for none.
func ThenSteps(then string) int {
	if then == "" {
		return 0
	}
	return strings.Count(then, "+") + 1
}

// Reply is one line a worker writes to stdout for each request. A line with
// Event set and no ID is not a reply but an event the lock client reported
// on its own (protocol 2), such as a ZooKeeper session event.
type Reply struct {
	ID int64 `json:"id"`
	// Event names an unsolicited event ("session"); Value.Detail says what.
	Event string `json:"event,omitempty"`
	// Type is ok, fail (certainly no effect) or info (unknown effect).
	Type history.Type `json:"type"`
	// Value is what the operation observed.
	Value *history.Value `json:"value,omitempty"`
	// Error explains fail and info.
	Error string `json:"error,omitempty"`
	// Protocol is the worker's protocol version, in the reply to open.
	Protocol int `json:"protocol,omitempty"`
	// Then, in the reply to open, lists the Request.Then values the
	// worker carries out; a worker that omits it is sent none.
	Then []string `json:"then,omitempty"`
}

// Config is everything a worker needs to build its lock client and resource.
type Config struct {
	Protocol int    `json:"protocol"`
	Lock     string `json:"lock"`
	// Process is the logical process id this worker serves.
	Process int `json:"process"`
	// Seed seeds the worker's randomness (owner ids, retry jitter).
	Seed uint64 `json:"seed"`
	// LockAddrs are the addresses of the lock nodes (through this worker's
	// own proxies).
	LockAddrs []string `json:"lock_addrs"`
	// StorageAddr is the protected resource's storage node.
	StorageAddr string `json:"storage_addr"`
	// LeaseMS is the lock's lease (time to live) in milliseconds; for
	// ZooKeeper locks, the session timeout.
	LeaseMS int64 `json:"lease_ms"`
	// AcquireTimeoutMS bounds how long acquire keeps retrying before it fails.
	AcquireTimeoutMS int64 `json:"acquire_timeout_ms"`
	// RetryMS is the mean pause between acquire attempts.
	RetryMS int64 `json:"retry_ms"`
	// ThinkMS is how long a critical section waits between read and write.
	ThinkMS int64 `json:"think_ms"`
	// OpTimeoutMS is the dial, read and write timeout of one command.
	OpTimeoutMS int64 `json:"op_timeout_ms"`
	// Fencing makes the critical section pass the lock's token to the
	// resource, which refuses tokens older than the newest it has seen.
	Fencing bool `json:"fencing"`

	// DiscoveryAddrs, when set, are the servers through which the worker
	// finds the current lock master (Redis Sentinels, for go-redis's
	// failover client), MasterName the monitored master's name; LockAddrs
	// is then unused.
	DiscoveryAddrs []string `json:"discovery_addrs,omitempty"`
	MasterName     string   `json:"master_name,omitempty"`
	// AddrMap maps an address a lock service announces (a Sentinel's
	// master or replica address) to this worker's own proxy for it, so
	// every link of the worker can be cut on its own.
	AddrMap map[string]string `json:"addr_map,omitempty"`
	// ClockFile is this worker's client clock file (see Clock): the offset
	// and rate a clock-client nemesis sets. "" means the real clock.
	ClockFile string `json:"clock_file,omitempty"`
	// Workload is "register" (read, think, write read+1; the default) or
	// "inventory" (read the stock, think, sell one item when above zero).
	Workload string `json:"workload,omitempty"`
	// Stock is the inventory workload's initial stock per key.
	Stock int64 `json:"stock,omitempty"`
	// Report names the marks the worker reports as events, on top of
	// its lock client's own, so that a fault can fire at them (the
	// controller asks only for those a trigger names): ReportWrite, each
	// critical section's write as it is sent; ReportRenewal, each lease
	// renewal its lock client makes. A worker that cannot report one
	// ignores it (a fault bound to it then never fires, and says so).
	Report []string `json:"report,omitempty"`
	// Failpoint names a place in a lock client where the worker stops for
	// a while and reports it with an event, so a crash nemesis can land
	// there ("" for none; see docs/worker-protocol.md).
	Failpoint string `json:"failpoint,omitempty"`
	// User, Password and Database are how a worker logs in to a database
	// lock service (PostgreSQL, MariaDB): its user, that user's password
	// ("" for none) and the database to use; "" for other services.
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Database string `json:"database,omitempty"`
	// Pooled says lock_addrs[0] is a connection pooler (PgBouncer) that may
	// run consecutive statements on different server sessions: the worker
	// must not rely on prepared statements kept by the server.
	Pooled bool `json:"pooled,omitempty"`
	// SessionName is the application name the worker gives its database
	// connections (PostgreSQL application_name, MariaDB program_name), so
	// the session-kill nemesis can find the sessions of a lock holder;
	// "" means lockcheck-p<process>.
	SessionName string `json:"session_name,omitempty"`
}

// The marks a worker reports when Config.Report names them
// (history.MarkName gives a mark's name from its event's detail).
const (
	ReportWrite   = history.MarkWrite
	ReportRenewal = history.MarkRenewal
)

// Reports says whether the worker is to report the mark name.
func (c Config) Reports(name string) bool { return slices.Contains(c.Report, name) }

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// Lease returns LeaseMS as a duration.
func (c Config) Lease() time.Duration { return ms(c.LeaseMS) }

// OpTimeout returns OpTimeoutMS as a duration.
func (c Config) OpTimeout() time.Duration { return ms(c.OpTimeoutMS) }
