package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/docker/libkv/store"
	"github.com/docker/libkv/store/zookeeper"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/libraries"
)

func init() {
	libraries.Register(libraries.Library{Name: "libkv", Summary: "github.com/docker/libkv, Docker's key-value store abstraction, and its ZooKeeper store's lock (built on samuel/go-zookeeper)",
		Modules: []string{"github.com/docker/libkv"}, Tried: []string{"v0.2.1"}})
	register(Design{Name: "libkv-zk-lock", Service: "zookeeper", Library: "libkv", LockNodes: 3, New: newLibkvZKLock,
		Summary: "the library github.com/docker/libkv's ZooKeeper store: NewLock(key, value)/Lock(stopChan)/Unlock, whose Lock returns the " +
			"channel libkv closes when the lock is lost; the worker checks it before each access, as libkv documents; no fencing token; --lease is the session timeout"})
}

// libkvZKLock wraps libkv's ZooKeeper lock as its users call it: one
// store per worker (zookeeper.New, its session timeout from
// store.Config.ConnectionTimeout), a new Locker per acquire
// (NewLock(key, &store.LockOptions{Value: owner})), Lock(stopChan) and
// Unlock. libkv's Lock returns a channel that, by the Locker interface's
// contract, is closed when the lock is lost; the worker asks it before
// each access (Valid). The ZooKeeper store never closes it
// (docker/libkv#156, open): a holder whose session expired keeps
// writing. Lock has no timeout and ignores its stopChan, so the wrapper
// waits at most the acquire timeout and then reports the acquire unknown
// (info): the library's node stays in line.
type libkvZKLock struct {
	kv   store.Store
	cfg  Config
	rng  *rand.Rand
	held heldLocks[*libkvHeld]
}

// libkvHeld is one granted lock: the Locker and the channel its Lock
// returned.
type libkvHeld struct {
	l    store.Locker
	lost <-chan struct{}
}

var (
	_ Lock      = (*libkvZKLock)(nil)
	_ Validator = (*libkvZKLock)(nil)
)

func newLibkvZKLock(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	if len(cfg.LockAddrs) == 0 {
		return nil, Definite(errors.New("libkv-zk-lock needs the ZooKeeper servers' addresses"))
	}
	kv, err := zookeeper.New(cfg.LockAddrs, &store.Config{ConnectionTimeout: cfg.Lease()})
	if err != nil {
		return nil, Definite(fmt.Errorf("libkv zookeeper store: %w", err))
	}
	return &libkvZKLock{kv: kv, cfg: cfg, rng: rng}, nil
}

// Acquire runs Lock for at most the acquire timeout.
func (l *libkvZKLock) Acquire(ctx context.Context, key string) (Grant, error) {
	owner := newOwner(l.cfg.Process, l.rng)
	lk, err := l.kv.NewLock("lockcheck/"+key, &store.LockOptions{Value: []byte(owner)})
	if err != nil {
		return Grant{}, Definite(fmt.Errorf("acquire %s: NewLock: %w", key, err))
	}
	type result struct {
		lost <-chan struct{}
		err  error
	}
	done := make(chan result, 1)
	go func() {
		lost, err := lk.Lock(nil)
		done <- result{lost, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(ms(l.cfg.AcquireTimeoutMS)):
		return Grant{}, undefinite(fmt.Errorf("acquire %s: libkv's Lock still waiting after %s (it has no timeout; its node stays in line)",
			key, ms(l.cfg.AcquireTimeoutMS)))
	case <-ctx.Done():
		return Grant{}, undefinite(fmt.Errorf("acquire %s: %w while libkv's Lock waits", key, ctx.Err()))
	}
	if r.err != nil {
		return Grant{}, undefinite(fmt.Errorf("acquire %s: %w", key, r.err)) // our node may stay in line
	}
	l.held.put(key, &libkvHeld{l: lk, lost: r.lost})
	return Grant{Owner: owner}, nil
}

// Valid asks the channel Lock returned whether the lock was lost.
func (l *libkvZKLock) Valid(key string) error {
	h, err := l.held.held(key)
	if err != nil {
		return err
	}
	select {
	case <-h.lost:
		return errors.New("libkv closed the lock's channel: lock lost")
	default:
		return nil
	}
}

// Release runs Unlock; an error from it is unknown (info): the node may
// be gone or not.
func (l *libkvZKLock) Release(_ context.Context, key string, _ Grant) (*history.Value, error) {
	h, err := l.held.take(key)
	if err != nil {
		return nil, err
	}
	if err := h.l.Unlock(); err != nil {
		return nil, undefinite(fmt.Errorf("release %s: %w", key, err))
	}
	return &history.Value{Released: history.Bool(true)}, nil
}

// Close closes the store's connection.
func (l *libkvZKLock) Close() error {
	l.kv.Close()
	return nil
}
