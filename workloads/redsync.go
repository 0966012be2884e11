package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/libraries"
	"github.com/redis/go-redis/v9"
)

func init() {
	libraries.Register(libraries.Library{Name: "redsync", Summary: "github.com/go-redsync/redsync, the Go Redlock implementation (one or several masters)",
		Modules: []string{"github.com/go-redsync/redsync/v4"}})
	register(Design{Name: "redsync", Service: "redis", Library: "redsync", LockNodes: 1, Tokens: false, New: newRedsync,
		Summary: "the library github.com/go-redsync/redsync/v4 (goredis v9 pool) on one node: Mutex.LockContext with " +
			"WithExpiry(lease), tries and delay from --acquire-timeout and --retry, UnlockContext; checks Until() before each " +
			"access; no fencing token"})
	register(Design{Name: "redsync-redlock", Service: "redis", Library: "redsync", LockNodes: 5, Tokens: false, New: newRedsync,
		Summary: "the same library in its RedLock mode: one goredis pool per node over the five redlock masters, " +
			"granted on a majority within the validity time; no fencing token"})
}

// redsyncLock wraps go-redsync as its users call it: one Redsync over one
// goredis v9 pool per lock node, a new Mutex per acquire (named after the
// key), LockContext with the library's own retry loop, UnlockContext to
// release. The options map the test's parameters onto the library's:
// WithExpiry(lease), WithTries(acquire timeout / retry + 1) and a retry
// delay jittered around --retry; the drift and timeout factors keep the
// library's defaults (0.01 and 0.05 of the expiry). The owner value comes
// from WithGenValueFunc so the history's owners name the process. No
// watchdog: the critical section is far shorter than the lease, and a
// redsync user extends (Mutex.Extend) only around work that may outlast it.
// The library's Until() is the validity deadline it computed on the
// client's clock; Valid checks it before each access, as the library
// advises instead of the deprecated Mutex.Valid.
type redsyncLock struct {
	cfg     Config
	rng     *rand.Rand
	rs      *redsync.Redsync
	clients []*redis.Client

	held heldLocks[*redsync.Mutex]
}

var (
	_ Lock      = (*redsyncLock)(nil)
	_ Validator = (*redsyncLock)(nil)
)

func newRedsync(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	if cfg.LeaseMS <= 0 {
		return nil, fmt.Errorf("redsync lease %d ms: want more than 0", cfg.LeaseMS)
	}
	l := &redsyncLock{cfg: cfg, rng: rng}
	var pools []redsyncredis.Pool
	if len(cfg.DiscoveryAddrs) > 0 {
		c := newFailoverClient(cfg)
		l.clients = append(l.clients, c)
		pools = append(pools, goredis.NewPool(c))
	} else {
		if len(cfg.LockAddrs) < 1 {
			return nil, errors.New("redsync needs at least one lock node address")
		}
		for _, addr := range cfg.LockAddrs {
			c := newRedisClient(addr, cfg.OpTimeout())
			l.clients = append(l.clients, c)
			pools = append(pools, goredis.NewPool(c))
		}
	}
	l.rs = redsync.New(pools...)
	return l, nil
}

// options are the Mutex options of one acquire.
func (l *redsyncLock) options(owner string) []redsync.Option {
	retry := ms(l.cfg.RetryMS)
	tries := 1
	if retry > 0 {
		tries = int(ms(l.cfg.AcquireTimeoutMS)/retry) + 1
	}
	return []redsync.Option{
		redsync.WithExpiry(l.cfg.Lease()),
		redsync.WithTries(tries),
		redsync.WithRetryDelayFunc(func(int) time.Duration {
			if retry <= 0 {
				return 0
			}
			return retry/2 + time.Duration(l.rng.Int64N(int64(retry)))
		}),
		redsync.WithGenValueFunc(func() (string, error) { return owner, nil }),
	}
}

// Acquire locks a new Mutex named key.
func (l *redsyncLock) Acquire(ctx context.Context, key string) (Grant, error) {
	owner := newOwner(l.cfg.Process, l.rng)
	m := l.rs.NewMutex(key, l.options(owner)...)
	if err := m.LockContext(ctx); err != nil {
		return Grant{}, redsyncLockError(key, err)
	}
	l.held.put(key, m)
	return Grant{Owner: m.Value()}, nil
}

// redsyncLockError translates a failed LockContext: ErrFailed (every try
// found the lock taken) and ErrTaken (a majority of nodes hold another
// owner's key) are certain failures; a failure that carries Redis errors is
// certain only when every node's error is (a refused connection, an error
// reply), else unknown: a SET NX whose reply was lost may have landed, and
// the library's undo may not have reached that node.
func redsyncLockError(key string, err error) error {
	var taken *redsync.ErrTaken
	switch {
	case errors.Is(err, redsync.ErrFailed), errors.As(err, &taken):
		return fmt.Errorf("acquire %s: %w (%v)", key, ErrNotAcquired, err)
	}
	werr := fmt.Errorf("acquire %s: %w", key, err)
	for _, e := range leafErrors(err) {
		var re *redsync.RedisError
		if errors.As(e, &re) && Classify(re.Err) != history.Fail {
			return undefinite(werr)
		}
	}
	return Definite(werr)
}

// leafErrors flattens errors.Join trees into their leaves.
func leafErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// Release unlocks the key's Mutex. Released is the library's answer (a
// majority deleted our value); a node that did not answer counts as not
// answered, one that found the key expired or another owner's as answered.
// It fails only when no node answered: for certain when every node refused.
func (l *redsyncLock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	m, err := l.held.take(key)
	if err != nil {
		return nil, err
	}
	released, err := m.UnlockContext(ctx)
	if released {
		return &history.Value{Released: history.Bool(true)}, nil
	}
	unanswered, definite := 0, true
	for _, e := range leafErrors(err) {
		var re *redsync.RedisError
		if errors.As(e, &re) {
			unanswered++
			definite = definite && Classify(re.Err) == history.Fail
		}
	}
	if err != nil && unanswered >= len(l.clients) {
		werr := fmt.Errorf("release %s: %w", key, err)
		if definite {
			return nil, Definite(werr)
		}
		return nil, undefinite(werr)
	}
	v := &history.Value{Released: history.Bool(false)}
	if err != nil {
		v.Mut().Detail = err.Error()
	}
	return v, nil
}

// Valid returns an error once the Mutex's Until() has passed.
func (l *redsyncLock) Valid(key string) error {
	m, ok := l.held.get(key)
	if !ok {
		return fmt.Errorf("redsync holds no mutex for %s", key)
	}
	if now := time.Now(); !now.Before(m.Until()) {
		return fmt.Errorf("redsync mutex %s expired %s ago (Until)", key, now.Sub(m.Until()).Round(time.Millisecond))
	}
	return nil
}

// Close closes every pool's client.
func (l *redsyncLock) Close() error {
	var errs []error
	for _, c := range l.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
