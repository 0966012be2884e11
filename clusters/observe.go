package clusters

import (
	"context"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// ReleaseObserver is a topology whose lock servers can tell the controller
// when they themselves let a lock go (a key expired or deleted, a lease
// ended): the server's side of a lost lock, which a worker's history only
// shows by inference. It is an optional capability, found by type
// assertion like Killer; a topology without it records no observations.
type ReleaseObserver interface {
	// ObserveReleases watches every lock node on connections of its own,
	// straight to the server's real address: no proxy, so no partition or
	// proxy fault of the run reaches them, and no worker's paused process
	// holds them. It returns once it is watching (a release from then on is
	// reported), and calls cfg.Report for each release of one of cfg.Keys
	// and for each probe until stop is called; stop waits for its
	// goroutines and closes its connections.
	ObserveReleases(ctx context.Context, cfg ObserveConfig) (stop func(), err error)
}

// ObserveConfig is what an observer needs of the run.
type ObserveConfig struct {
	// Keys are the run's lock keys; releases of other keys are not
	// reported.
	Keys []string
	// Now is the history's clock (history.Recorder.Now), on which an
	// observer places a release whose server instant it can tell.
	Now func() time.Duration
	// Report records one observation: key is the lock ("" for a probe),
	// v carries Release, Owner (and Token when the observer knows it) and
	// Nodes. It may be called from several goroutines.
	Report func(key string, v *history.Value)
	// Probe is how often the observer measures its lag with a probe that
	// the server must release (a key with a short TTL); 0 means never.
	Probe time.Duration
	// TookOver, when set, asks an observer to watch writes of the keys
	// too: the design passes its lock from holder to holder by writing
	// over the key (workloads.Design.WrittenOver), and a write whose value
	// took the lock from the holder the old value named
	// (TookOver(old, new)) is that holder's release
	// (history.ReleaseOverwritten).
	TookOver func(old, next string) bool
	// Read, when set (by tests), is called with a lock key each time the
	// observer has read what holds it, so that a test can wait for that
	// instead of sleeping.
	Read func(key string)
	// LeaseProof, when set (by tests), is how long etcd's observer waits
	// for a lease to show it lives (default 100 ms).
	LeaseProof time.Duration
}

// Probes is a channel that ticks every cfg.Probe (nil, never ready, when
// there are no probes) and the function that stops it.
func (cfg *ObserveConfig) Probes() (<-chan time.Time, func()) {
	if cfg.Probe <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(cfg.Probe)
	return t.C, t.Stop
}

// DidRead calls cfg.Read, if set.
func (cfg *ObserveConfig) DidRead(key string) {
	if cfg.Read != nil {
		cfg.Read(key)
	}
}

// ProbeTTL is the time to live of an observer's probe key: short, so that
// a probe costs the server nothing, and long enough to be set and read
// back before it expires.
const ProbeTTL = 100 * time.Millisecond

// KeySet returns keys as a set.
func KeySet(keys []string) map[string]bool {
	s := make(map[string]bool, len(keys))
	for _, k := range keys {
		s[k] = true
	}
	return s
}
