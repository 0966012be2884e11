package history

import "time"

// FServerRelease is an observer's record that a lock service itself let a
// lock go: a key expired or was deleted, a lease or session expired, a lock
// node was deleted. The controller's observer watches each lock node on its
// own direct connection (no proxy, outside every fault), and records each
// release as a lone info op of NemesisProcess: Key is the lock, Time is when
// the controller heard of it, Value.Release says how and when the server
// did it, Value.Owner (and Value.Token where the observer knows it) name the
// grant it ended, Value.Nodes the node. A probe observation (Release.Probe)
// has no Key: it measures how late the observer hears of a release.
const FServerRelease = "server-release"

// The ways a server releases a lock (Release.How).
const (
	// ReleaseExpired: the key's time to live ran out (Redis PX, a
	// watchdog that stopped renewing).
	ReleaseExpired = "expired"
	// ReleaseDeleted: a client deleted the key (the holder's own release,
	// or a plain DEL of another's key).
	ReleaseDeleted = "deleted"
	// ReleaseLease: the lock key went with its lease or session (an etcd
	// lease revoked or expired, a ZooKeeper ephemeral node).
	ReleaseLease = "lease-ended"
	// ReleaseSessionEnded: the database session that held the lock is gone
	// from the server (ended, timed out, or the server restarted), and its
	// locks went with it.
	ReleaseSessionEnded = "session-ended"
	// ReleaseOverwritten: a client wrote over the key, which named another
	// holder (a lock whose keys have no time to live and change hands by
	// GETSET, as redis-setnx-getset's do, once a client judged its time
	// passed).
	ReleaseOverwritten = "overwritten"
	// ReleaseFailoverLost: a failover promoted a replica that did not have
	// the lock key another node still held: the grant was lost with the
	// old master.
	ReleaseFailoverLost = "failover-lost"
)

// Release is what an observer saw of one release (Value.Release).
type Release struct {
	// How is one of the Release* ways above.
	How string `json:"how"`
	// ServerTime is the release's instant on the server's own wall clock
	// (a key's expiry time), zero when the server does not say.
	ServerTime time.Time `json:"server_time,omitzero"`
	// At is the release's instant on the history's clock, estimated from
	// ServerTime and the server clock's offset that the observer measured,
	// or, when the observer reported it later than it heard of it (etcd's,
	// once it knows whether the lease went with the key), when it heard;
	// 0 otherwise, and the op's Time is then the best bound (the release
	// came at most Lag before it).
	At time.Duration `json:"at,omitempty"`
	// Lease names the lease or session the lock went with ("lease
	// 0x694d..."), for services that have one.
	Lease string `json:"lease,omitempty"`
	// Probe marks the observer's own probe key, which it set to expire so
	// as to measure Lag; such an op names no lock.
	Probe bool `json:"probe,omitempty"`
	// Lag is, on a probe, how long after the probe's release the observer
	// heard of it: the observer's precision.
	Lag time.Duration `json:"lag,omitempty"`
}

// ReleaseAt returns when the server released the lock, on the history's
// clock: Release.At when the observer could say, else the op's Time (when
// the controller heard of it). ok is false for an op that is not a server
// release.
func (op *Op) ReleaseAt() (at time.Duration, ok bool) {
	if op.F != FServerRelease {
		return 0, false
	}
	r := op.Value.Ext().Release // Ext: zero for a nil Value
	if r == nil {
		return 0, false
	}
	if a := r.At; a > 0 {
		return a, true
	}
	return op.Time, true
}
