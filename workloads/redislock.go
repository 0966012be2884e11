package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bsm/redislock"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/libraries"
	"github.com/redis/go-redis/v9"
)

func init() {
	libraries.Register(libraries.Library{Name: "redislock", Summary: "github.com/bsm/redislock, a single-instance Redis lock with a TTL and Refresh",
		Modules: []string{"github.com/bsm/redislock"}})
	register(Design{Name: "redislock", Service: "redis", Library: "redislock", LockNodes: 1, Tokens: false, New: newRedislock,
		Summary: "the library github.com/bsm/redislock: Obtain(key, lease) with LimitRetry(LinearBackoff(--retry)) " +
			"up to --acquire-timeout, Release; no watchdog (Refresh), no fencing token"})
}

// redislockLock wraps bsm/redislock as its users call it: one
// redislock.Client over the go-redis client, Obtain with a linear retry
// strategy limited to the acquire timeout, Release on the returned Lock.
// The library's "token" is its random owner value (Options.Token; here
// the process's owner string), not a fencing token: the design has none.
// No Refresh watchdog: the critical section is far shorter than the lease,
// and a redislock user refreshes only around work that may outlast it.
type redislockLock struct {
	cfg Config
	rng *rand.Rand
	c   *redis.Client
	rl  *redislock.Client

	held heldLocks[*redislock.Lock]
}

var _ Lock = (*redislockLock)(nil)

func newRedislock(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	c, err := newLockClient(cfg, "redislock")
	if err != nil {
		return nil, err
	}
	return &redislockLock{cfg: cfg, rng: rng, c: c, rl: redislock.New(c)}, nil
}

// Acquire obtains key. ErrNotObtained (the retries ran out while the lock
// was held) is a certain failure; a Redis error is classified as any other
// (a timeout is unknown). The context's deadline is a little beyond the
// retries' end, so it ends an acquire only when a command hung.
func (l *redislockLock) Acquire(ctx context.Context, key string) (Grant, error) {
	owner := newOwner(l.cfg.Process, l.rng)
	retry := ms(l.cfg.RetryMS)
	var strategy redislock.RetryStrategy = redislock.NoRetry()
	if retry > 0 {
		strategy = redislock.LimitRetry(redislock.LinearBackoff(retry), int(ms(l.cfg.AcquireTimeoutMS)/retry))
	}
	ctx, cancel := context.WithTimeout(ctx, ms(l.cfg.AcquireTimeoutMS)+l.cfg.OpTimeout()+time.Second)
	defer cancel()
	lk, err := l.rl.Obtain(ctx, key, l.cfg.Lease(), &redislock.Options{RetryStrategy: strategy, Token: owner})
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		return Grant{}, fmt.Errorf("acquire %s: %w (%v)", key, ErrNotAcquired, err)
	case err != nil:
		return Grant{}, fmt.Errorf("acquire %s: %w", key, err)
	}
	l.held.put(key, lk)
	return Grant{Owner: lk.Token()}, nil
}

// Release releases the key's Lock: ErrLockNotHeld means the key had
// expired or was another owner's (released false).
func (l *redislockLock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	lk, err := l.held.take(key)
	if err != nil {
		return nil, err
	}
	err = lk.Release(ctx)
	switch {
	case err == nil:
		return &history.Value{Released: history.Bool(true)}, nil
	case errors.Is(err, redislock.ErrLockNotHeld):
		return &history.Value{Released: history.Bool(false)}, nil
	}
	return nil, fmt.Errorf("release %s: %w", key, err)
}

// Close closes the client.
func (l *redislockLock) Close() error { return l.c.Close() }
