package etcd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

var _ clusters.ReleaseObserver = (*Cluster)(nil)

// etcdLockRoot is the prefix under which the etcd lock designs keep their
// keys ("/lockcheck/k0/<lease>"), and etcdProbeKey the observer's probe,
// under it but in no lock's prefix.
const (
	etcdLockRoot = "/lockcheck/"
	etcdProbeKey = etcdLockRoot + ".observer-probe"
)

// ObserveReleases implements ReleaseObserver for etcd: a watch on the lock
// prefix from a client of the controller's own, dialled straight to every
// member's client port. The etcd designs lock with concurrency.Mutex: each
// client that wants lock k puts a key of its own under "/lockcheck/k/", and
// the one with the lowest create revision holds the lock while the others
// wait. The deletion of the holder's key is a release: it was deleted
// (history.ReleaseDeleted: the holder's own release) when the same lease
// puts a key again soon after (etcd refuses a put with a lease that is
// gone), as a holder does when it next asks for a lock; else it went with
// its lease (history.ReleaseLease) when the lease is gone once leaseProof
// has passed and the observer asks etcd. So a run's ordinary releases cost
// etcd no request of the observer's (one each cost 7.5 % of check bench's
// grants); such a release is reported up to leaseProof after the observer
// heard of it, with Release.At set to when it did. A waiter's key that goes (it gave up, or its lease ended)
// released nothing and is not reported, nor asked about. etcd's events
// carry no time: a release is placed where the observer heard it, and the
// probe (a put of the probe key, heard through the same watch) bounds how
// late that is.
func (e *Cluster) ObserveReleases(ctx context.Context, cfg clusters.ObserveConfig) (func(), error) {
	var eps []string
	for _, n := range e.Nodes() {
		if n.Role == "lock" {
			eps = append(eps, n.Addr)
		}
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("observe etcd: %w", err)
	}
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	// The keys already there, and the watch from the revision after them,
	// so that nothing between now and its first response is missed.
	get, err := c.Get(ctx, etcdLockRoot, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		cancel()
		c.Close()
		return nil, fmt.Errorf("observe etcd: read the lock keys: %w", err)
	}
	o := &etcdObserver{c: c, cfg: cfg, keys: clusters.KeySet(cfg.Keys), sent: -1, queues: map[string]map[string]int64{}, stop: make(chan struct{}),
		proof: cmp.Or(cfg.LeaseProof, leaseProof)}
	for _, kv := range get.Kvs {
		o.created(string(kv.Key), kv.CreateRevision)
	}
	wch := c.Watch(ctx, etcdLockRoot, clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(get.Header.Revision+1))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		o.run(ctx, wch)
	}()
	return func() {
		close(o.stop)
		wg.Wait()
		cancel()
		c.Close()
	}, nil
}

// leaseProof is how long the observer waits, after a holder's key with a
// lease was deleted, for that lease to put a key again before it asks etcd
// whether the lease is gone.
const leaseProof = 100 * time.Millisecond

// settleAtStop bounds what the stop spends asking about the releases
// still pending; one whose question gets no answer is reported deleted,
// as when etcd does not answer during the run.
const settleAtStop = 2 * time.Second

// etcdRelease is a holder's deleted key not yet reported: whether its
// lease went with it is not known yet.
type etcdRelease struct {
	lock  string
	v     *history.Value
	lease int64
	due   time.Time // when to ask etcd
}

// etcdObserver turns an etcd watch into observations.
type etcdObserver struct {
	c    *clientv3.Client
	cfg  clusters.ObserveConfig
	keys map[string]bool
	// sent is when the probe in flight was sent, -1 when none is.
	sent time.Duration
	// queues are, by lock, the keys under its prefix with their create
	// revisions: the holder's and its waiters'.
	queues map[string]map[string]int64
	// pending are the releases waiting for their lease to show it lives.
	pending []etcdRelease
	// stop, closed by the stop function, makes run report what is
	// pending and return.
	stop chan struct{}
	// proof is how long a release waits for its lease (leaseProof).
	proof time.Duration
}

// created notes a new key under a lock's prefix (a client that wants the
// lock), with its create revision.
func (o *etcdObserver) created(key string, rev int64) {
	lock, ok := etcdLockOf(key)
	if !ok || !o.keys[lock] {
		return
	}
	q := o.queues[lock]
	if q == nil {
		q = map[string]int64{}
		o.queues[lock] = q
	}
	q[key] = rev
}

// deleted removes a deleted key from its lock's queue and reports whether
// it was the holder's: no other key of that lock was created before it
// (concurrency.Mutex grants the lock to the lowest create revision).
func (o *etcdObserver) deleted(lock, key string, rev int64) bool {
	q := o.queues[lock]
	if r, ok := q[key]; ok {
		rev = r
	}
	delete(q, key)
	for _, r := range q {
		if r < rev {
			return false
		}
	}
	return true
}

// run handles the watch's events until ctx ends or stop is closed, sends
// a probe every cfg.Probe, and reports each pending release once its lease
// showed it lives or once it is due.
func (o *etcdObserver) run(ctx context.Context, wch clientv3.WatchChan) {
	tick, stopTick := o.cfg.Probes()
	defer stopTick()
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	for {
		if len(o.pending) > 0 {
			due.Reset(time.Until(o.pending[0].due))
		}
		select {
		case <-ctx.Done():
			return
		case <-o.stop:
			// Bounded as a whole: with etcd down, each lock's question
			// would wait its own second.
			sctx, cancel := context.WithTimeout(ctx, settleAtStop)
			o.settle(sctx, time.Time{})
			cancel()
			return
		case <-due.C:
			o.settle(ctx, time.Now())
		case <-tick:
			if o.sent < 0 {
				o.sent = o.cfg.Now()
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				if _, err := o.c.Put(pctx, etcdProbeKey, "1"); err != nil {
					o.sent = -1
				}
				cancel()
			}
		case resp, ok := <-wch:
			if !ok {
				return
			}
			for _, ev := range resp.Events {
				o.event(ctx, ev)
			}
		}
	}
}

// event handles one watch event.
func (o *etcdObserver) event(ctx context.Context, ev *clientv3.Event) {
	key := string(ev.Kv.Key)
	if key == etcdProbeKey {
		if ev.Type == clientv3.EventTypePut && o.sent >= 0 {
			heard := o.cfg.Now()
			o.cfg.Report("", &history.Value{Extra: &history.Extra{Release: &history.Release{How: history.ReleaseDeleted, Probe: true, At: o.sent, Lag: heard - o.sent}}})
			o.sent = -1
		}
		return
	}
	lock, ok := etcdLockOf(key)
	if !ok || !o.keys[lock] {
		return
	}
	if ev.IsCreate() {
		o.created(key, ev.Kv.CreateRevision)
		o.leaseLives(ev.Kv.Lease)
		return
	}
	if ev.Type != clientv3.EventTypeDelete {
		return
	}
	var rev int64
	if ev.PrevKv != nil {
		rev = ev.PrevKv.CreateRevision
	}
	if !o.deleted(lock, key, rev) {
		return // a waiter's key: it never held the lock
	}
	v := &history.Value{Owner: key, Extra: &history.Extra{Release: &history.Release{How: history.ReleaseDeleted}}}
	if p := ev.PrevKv; p != nil {
		v.Token = p.CreateRevision
		if p.Lease != 0 {
			v.Release.Lease = fmt.Sprintf("lease 0x%x", p.Lease)
			v.Release.At = max(o.cfg.Now(), 1)
			o.pending = append(o.pending, etcdRelease{lock: lock, v: v, lease: p.Lease, due: time.Now().Add(o.proof)})
			return
		}
	}
	o.cfg.Report(lock, v)
}

// leaseLives reports, as deleted by their holder, the pending releases of
// lease, which has just put a key: it was not gone when they were deleted.
func (o *etcdObserver) leaseLives(lease int64) {
	if lease == 0 {
		return
	}
	o.pending = slices.DeleteFunc(o.pending, func(r etcdRelease) bool {
		if r.lease == lease {
			o.cfg.Report(r.lock, r.v)
		}
		return r.lease == lease
	})
}

// settle reports the pending releases due by now (all of them when now is
// zero), asking etcd whether each one's lease is gone.
func (o *etcdObserver) settle(ctx context.Context, now time.Time) {
	n := 0
	for _, r := range o.pending {
		if !now.IsZero() && r.due.After(now) {
			break
		}
		if o.leaseGone(ctx, clientv3.LeaseID(r.lease)) {
			r.v.Release.How = history.ReleaseLease
		}
		o.cfg.Report(r.lock, r.v)
		n++
	}
	o.pending = o.pending[n:]
}

// leaseGone reports whether etcd no longer has the lease (expired or
// revoked).
func (o *etcdObserver) leaseGone(ctx context.Context, id clientv3.LeaseID) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	r, err := o.c.TimeToLive(ctx, id)
	return err == nil && r.TTL < 0
}

// etcdLockOf returns the lock key of an etcd lock design's key
// ("/lockcheck/k0/694d..." is lock k0's).
func etcdLockOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, etcdLockRoot)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", false
	}
	return rest[:i], true
}
