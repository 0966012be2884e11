package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// etcdRoot is the prefix of every etcd lock; a lock named key keeps its
// waiters' keys under etcdRoot + key + "/".
const etcdRoot = "/lockcheck/"

// etcdRegisterRoot is the prefix of the registers the guarded design keeps
// in etcd: outside every lock's prefix.
const etcdRegisterRoot = "/lockcheck-register/"

// errEtcdTimeout means an etcd call did not return in time; its effect is
// unknown.
var errEtcdTimeout = errors.New("etcd call timed out")

// EtcdMinTTL is the shortest lease the etcd service grants: etcd raises a
// TTL below 1.5 election timeouts (1 s on the etcd service) to that,
// rounded up to whole seconds.
const EtcdMinTTL = 2 * time.Second

// EtcdTTL is the session TTL the etcd designs get for a lease: etcd leases
// are whole seconds, so the lease is rounded up, and at least EtcdMinTTL.
func EtcdTTL(lease time.Duration) time.Duration {
	ttl := (lease + time.Second - 1) / time.Second * time.Second
	return max(ttl, EtcdMinTTL)
}

// etcdSession is one etcd client with the concurrency.Session whose lease
// keeps its locks. The client library renews the lease in the background;
// when it can no longer (the lease expired or went unrenewed for its TTL)
// the session's Done channel closes and its locks are lost. A lost session
// is reported as an event and replaced by a new one at the next acquire.
type etcdSession struct {
	c      *clientv3.Client
	cfg    Config
	ttl    time.Duration
	events func(string)

	mu      sync.Mutex
	s       *concurrency.Session
	closing bool
}

// newEtcdSession connects to the members and opens a first session.
func newEtcdSession(cfg Config, events func(string)) (*etcdSession, error) {
	timeout := max(cfg.OpTimeout(), time.Second)
	c, err := clientv3.New(clientv3.Config{
		Endpoints: cfg.LockAddrs, DialTimeout: timeout,
		DialKeepAliveTime: timeout, DialKeepAliveTimeout: timeout,
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to etcd: %w", err)
	}
	es := &etcdSession{c: c, cfg: cfg, ttl: EtcdTTL(cfg.Lease()), events: events}
	if cfg.Reports(ReportRenewal) && events != nil {
		reportRenewals(c, events)
	}
	// The first lease may wait for the connection to come up, on a loaded
	// machine longer than one call's timeout.
	if _, err := es.grantWithin(context.Background(), etcdOpenWait); err != nil {
		c.Close()
		return nil, err
	}
	return es, nil
}

// timeout is how long one etcd call may take before its effect is unknown.
func (es *etcdSession) timeout() time.Duration { return max(es.cfg.OpTimeout(), time.Second) }

// etcdOpenWait bounds how long a new worker waits for its first lease, as
// a ZooKeeper worker waits for its first session: less than the
// controller's 10 s wait for the worker's open.
const etcdOpenWait = 8 * time.Second

// session returns the live session, opening a new one (a new lease) when
// there is none or the last one is done.
func (es *etcdSession) session(ctx context.Context) (*concurrency.Session, error) {
	return es.grantWithin(ctx, es.timeout())
}

// grantWithin is session, waiting at most wait for a new lease.
func (es *etcdSession) grantWithin(ctx context.Context, wait time.Duration) (*concurrency.Session, error) {
	es.mu.Lock()
	s := es.s
	es.mu.Unlock()
	if s != nil {
		select {
		case <-s.Done():
		default:
			return s, nil
		}
	}
	gctx, cancel := context.WithTimeout(ctx, wait)
	grant, err := es.c.Grant(gctx, int64(es.ttl/time.Second))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("grant an etcd lease: %w", err)
	}
	// The session's context outlives this call: it keeps the lease alive.
	s, err = concurrency.NewSession(es.c, concurrency.WithLease(grant.ID), concurrency.WithTTL(int(es.ttl/time.Second)))
	if err != nil {
		return nil, fmt.Errorf("open an etcd session: %w", err)
	}
	es.mu.Lock()
	es.s = s
	es.mu.Unlock()
	es.report(fmt.Sprintf("lease 0x%x granted (TTL %s)", int64(grant.ID), time.Duration(grant.TTL)*time.Second))
	go es.watch(s)
	return s, nil
}

// watch reports the end of a session's lease as an event: the locks it
// kept are lost.
func (es *etcdSession) watch(s *concurrency.Session) {
	<-s.Done()
	es.mu.Lock()
	closing := es.closing
	es.mu.Unlock()
	if !closing {
		es.report(fmt.Sprintf("lease 0x%x expired: lock lost", int64(s.Lease())))
	}
}

func (es *etcdSession) report(detail string) {
	if es.events != nil {
		es.events(detail)
	}
}

// valid reports whether session s, which was granted a lock, still keeps
// it: its lease has not ended.
func valid(s *concurrency.Session) error {
	select {
	case <-s.Done():
		return fmt.Errorf("lock lost: etcd lease 0x%x expired", int64(s.Lease()))
	default:
		return nil
	}
}

// bounded runs f with a context that ends after d, and gives up waiting for
// it a moment later: some client calls (the mutex's clean-up after a
// failed wait) use a context of their own and would wait through a
// partition.
func bounded(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, d)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- f(cctx)
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d + time.Second):
		cancel()
		return errEtcdTimeout
	}
}

func (es *etcdSession) close() {
	es.mu.Lock()
	es.closing = true
	s := es.s
	es.mu.Unlock()
	if s != nil {
		_ = bounded(context.Background(), es.timeout(), func(context.Context) error { return s.Close() })
	}
	_ = es.c.Close()
}
