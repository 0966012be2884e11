// Command etcd is a kit worker for etcd's concurrency.Mutex on a session
// whose lease the client keeps alive, as etcd's examples use it; the
// fencing token is the lock key's create revision.
//
//	go build -o etcd-worker ./kit/examples/etcd
//	check conformance --lock etcd-mutex --worker-cmd ./etcd-worker
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/lockcheck/lockcheck/kit"
)

type lock struct {
	c   *clientv3.Client
	cfg kit.Config
	mu  sync.Mutex
	s   *concurrency.Session
	m   map[string]*concurrency.Mutex
}

// session returns the live session, a new one when the last is gone.
func (l *lock) session(ctx context.Context) (*concurrency.Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		select {
		case <-l.s.Done():
			l.s = nil
		default:
			return l.s, nil
		}
	}
	// The lease is granted within the caller's bound; the session then
	// keeps it alive in the background until it is closed or lost.
	ttl := int64((l.cfg.Lease() + time.Second - 1) / time.Second)
	lease, err := l.c.Grant(ctx, max(ttl, 2))
	if err != nil {
		return nil, err
	}
	s, err := concurrency.NewSession(l.c, concurrency.WithLease(lease.ID))
	if err != nil {
		return nil, err
	}
	l.s = s
	return s, nil
}

func (l *lock) Acquire(ctx context.Context, key string) (kit.Grant, error) {
	s, err := l.session(ctx)
	if err != nil {
		return kit.Grant{}, err
	}
	m := concurrency.NewMutex(s, "/kit-lock/"+key)
	if err := m.Lock(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			// Lock gave up waiting; its key may stay queued until the
			// session ends, so the outcome is not certain: info.
			return kit.Grant{}, fmt.Errorf("waited out the acquire timeout: %w", err)
		}
		return kit.Grant{}, err
	}
	l.mu.Lock()
	l.m[key] = m
	l.mu.Unlock()
	return kit.Grant{Owner: fmt.Sprintf("p%d-%s-%x", l.cfg.Process, m.Key(), s.Lease()), Token: m.Header().Revision}, nil
}

func (l *lock) Release(ctx context.Context, key string, _ kit.Grant) (bool, error) {
	l.mu.Lock()
	m := l.m[key]
	delete(l.m, key)
	l.mu.Unlock()
	if m == nil {
		return false, nil
	}
	return true, m.Unlock(ctx)
}

func (l *lock) Close() error {
	if l.s != nil {
		l.s.Close()
	}
	return l.c.Close()
}

func main() {
	kit.Main(func(ctx context.Context, cfg kit.Config) (kit.Lock, error) {
		c, err := clientv3.New(clientv3.Config{Endpoints: cfg.LockAddrs, DialTimeout: cfg.OpTimeout(), Logger: nil})
		if err != nil {
			return nil, err
		}
		return &lock{c: c, cfg: cfg, m: map[string]*concurrency.Mutex{}}, nil
	})
}
