package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/libraries"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func init() {
	libraries.Register(libraries.Library{Name: "etcd-client", Summary: "etcd's Go client and its concurrency package (Session, Mutex)",
		Modules: []string{"go.etcd.io/etcd/client/v3", "go.etcd.io/etcd/api/v3", "go.etcd.io/etcd/client/pkg/v3"},
		Tried:   []string{"v3.6.16", "v3.7.3"}})
	register(Design{
		Name: "etcd-mutex", Service: "etcd", LockNodes: 3, Tokens: true, Renews: true, New: newEtcdMutex, Library: "etcd-client",
		SessionTTL: EtcdTTL,
		Summary:    "etcd concurrency.Mutex on a concurrency.Session (lease kept alive by the client; TTL = --lease rounded up to whole seconds, at least 2 s); token = the lock key's create revision",
	})
}

// etcdMutex is the etcd-mutex design: etcd's own lock recipe
// (go.etcd.io/etcd/client/v3/concurrency). Each worker has one session, a
// lease the client keeps alive in the background; a lock is a key
// etcdRoot+key+"/"+lease created with that lease, and the waiter whose key
// has the lowest create revision holds the lock. The fencing token is the
// lock key's create revision. When the lease ends (not renewed for its TTL:
// the holder was paused or cut off), etcd deletes the key and the next
// waiter holds the lock, while the old holder learns it only when its
// session's Done channel closes; the worker asks before each protected
// access, as Curator advises ZooKeeper clients to.
type etcdMutex struct {
	es  *etcdSession
	cfg Config
	// held maps a key to the lock taken on it.
	held heldLocks[*etcdHeld]
}

// etcdHeld is one granted lock: the mutex and the session it lives in.
type etcdHeld struct {
	m   *concurrency.Mutex
	s   *concurrency.Session
	rev int64 // the lock key's create revision
}

var (
	_ Lock      = (*etcdMutex)(nil)
	_ Validator = (*etcdMutex)(nil)
)

func newEtcdMutex(cfg Config, _ *rand.Rand, events func(string)) (Lock, error) {
	es, err := newEtcdSession(cfg, events)
	if err != nil {
		return nil, err
	}
	return &etcdMutex{es: es, cfg: cfg}, nil
}

// Acquire waits for the lock at most the acquire timeout (Mutex.Lock with
// a context that ends then). A wait that times out removes the waiter's
// key: once the client has confirmed that (the mutex forgot its key), the
// lock was certainly not taken (ErrNotAcquired); otherwise the outcome is
// unknown.
func (l *etcdMutex) Acquire(ctx context.Context, key string) (Grant, error) {
	_, busy := l.held.get(key)
	if busy {
		return Grant{}, Definite(fmt.Errorf("acquire %s: this client already holds it", key))
	}
	s, err := l.es.session(ctx)
	if err != nil {
		return Grant{}, fmt.Errorf("acquire %s: %w", key, err)
	}
	m := concurrency.NewMutex(s, etcdRoot+key)
	wait := ms(l.cfg.AcquireTimeoutMS)
	var rev int64
	err = bounded(ctx, wait+l.es.timeout(), func(cctx context.Context) error {
		lctx, cancel := context.WithTimeout(cctx, wait)
		defer cancel()
		if err := m.Lock(lctx); err != nil {
			return err
		}
		// The key's create revision is the token; the mutex keeps it
		// private, so read it back.
		resp, err := l.es.c.Get(cctx, m.Key())
		if err != nil {
			return undefinite(fmt.Errorf("read back the lock key: %w", err))
		}
		if len(resp.Kvs) == 0 {
			return concurrency.ErrSessionExpired
		}
		rev = resp.Kvs[0].CreateRevision
		return nil
	})
	switch {
	case err == nil:
	case errors.Is(err, concurrency.ErrSessionExpired):
		return Grant{}, Definite(fmt.Errorf("acquire %s: %w", key, err))
	case errors.Is(err, context.DeadlineExceeded) && m.Key() == "\x00":
		// Mutex.Lock deleted its waiting key after the wait timed out.
		return Grant{}, ErrNotAcquired
	default:
		return Grant{}, fmt.Errorf("acquire %s: %w", key, err)
	}
	l.held.put(key, &etcdHeld{m: m, s: s, rev: rev})
	return Grant{Owner: m.Key(), Token: rev, Detail: fmt.Sprintf("lease 0x%x", int64(s.Lease()))}, nil
}

// Valid reports whether the session that was granted key still has its
// lease.
func (l *etcdMutex) Valid(key string) error {
	h, err := l.held.held(key)
	if err != nil {
		return err
	}
	return valid(h.s)
}

// Release deletes the lock key if it is still ours (a transaction on its
// create revision, the mutex's IsOwner comparison), and reports whether it
// was.
func (l *etcdMutex) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	h, ok := l.held.pop(key)
	if !ok {
		return &history.Value{Released: history.Bool(false)}, nil
	}
	var resp *clientv3.TxnResponse
	err := bounded(ctx, l.es.timeout(), func(cctx context.Context) (err error) {
		resp, err = l.es.c.Txn(cctx).If(h.m.IsOwner()).Then(clientv3.OpDelete(h.m.Key())).Commit()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", key, err)
	}
	return &history.Value{Released: history.Bool(resp.Succeeded)}, nil
}

// Close ends the session (revoking its lease) and the client.
func (l *etcdMutex) Close() error {
	l.es.close()
	return nil
}
