package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

// setPXAcquire sets the lock key only if it is absent, with a lease, and on
// success increments the key's token counter and returns the new token as
// the fencing token; it returns 0 when the lock is held.
var setPXAcquire = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`)

// compareAndDelete deletes the lock key only if it still holds our owner value.
var compareAndDelete = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// scriptClient is the client a script-based lock runs on: a single-node or
// failover client, or Redis Cluster's cluster client.
type scriptClient interface {
	redis.Scripter
	Close() error
}

// setPX is the redis-set-px and redis-set-px-del designs: SET NX PX with a
// token, released by compare-and-delete or by plain DEL.
type setPX struct {
	c        scriptClient
	cfg      Config
	rng      *rand.Rand
	plainDel bool
	// tokenKey names key's token counter (key + ":token" when nil).
	tokenKey func(key string) string
}

func newSetPX(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	c, err := newLockClient(cfg, "redis-set-px")
	if err != nil {
		return nil, err
	}
	return &setPX{c: c, cfg: cfg, rng: rng}, nil
}

func newSetPXDel(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	l, err := newSetPX(cfg, rng, nil)
	if err != nil {
		return nil, err
	}
	l.(*setPX).plainDel = true
	return l, nil
}

func (l *setPX) Acquire(ctx context.Context, key string) (Grant, error) {
	return retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		owner := newOwner(l.cfg.Process, l.rng)
		tok, err := l.trySet(ctx, key, owner)
		return Grant{Owner: owner, Token: tok}, tok > 0, err
	})
}

// trySet runs the acquire script once: the new token, or 0 when another
// client holds key.
func (l *setPX) trySet(ctx context.Context, key, owner string) (int64, error) {
	tk := key + ":token"
	if l.tokenKey != nil {
		tk = l.tokenKey(key)
	}
	tok, err := setPXAcquire.Run(ctx, l.c, []string{key, tk}, owner, l.cfg.LeaseMS).Int64()
	if err != nil {
		return 0, fmt.Errorf("acquire %s: %w", key, err)
	}
	return tok, nil
}

func (l *setPX) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	if l.plainDel {
		return releaseByDel(ctx, l.c, key, g)
	}
	n, err := compareAndDelete.Run(ctx, l.c, []string{key}, g.Owner).Int64()
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", key, err)
	}
	return &history.Value{Released: history.Bool(n == 1)}, nil
}

func (l *setPX) Close() error { return l.c.Close() }
