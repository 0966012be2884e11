package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

// setNXExpire is the redis-setnx-expire design: SETNX, then PEXPIRE as a
// second command (a crash between the two leaves a key with no TTL), then
// INCR of the token counter; released by plain DEL.
type setNXExpire struct {
	c      *redis.Client
	cfg    Config
	rng    *rand.Rand
	events func(string)
}

func newSetNXExpire(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	c, err := newLockClient(cfg, "redis-setnx-expire")
	if err != nil {
		return nil, err
	}
	return &setNXExpire{c: c, cfg: cfg, rng: rng, events: events}, nil
}

func (l *setNXExpire) Acquire(ctx context.Context, key string) (Grant, error) {
	return retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		owner := newOwner(l.cfg.Process, l.rng)
		ok, err := l.c.SetNX(ctx, key, owner, 0).Result()
		if err != nil {
			return Grant{}, false, fmt.Errorf("acquire %s: SETNX: %w", key, err)
		}
		if !ok {
			return Grant{}, false, nil
		}
		// From here on the key is ours: any error leaves the outcome unknown.
		// A worker killed at this failpoint leaves the key with no TTL.
		failpoint(ctx, l.cfg, l.events, FailpointSetNXExpire, "between SETNX and PEXPIRE of "+key+" (the key has no TTL yet)")
		if err := l.c.PExpire(ctx, key, l.cfg.Lease()).Err(); err != nil {
			return Grant{}, false, fmt.Errorf("acquire %s: PEXPIRE after SETNX: %w", key, undefinite(err))
		}
		tok, err := l.c.Incr(ctx, key+":token").Result()
		if err != nil {
			return Grant{}, false, fmt.Errorf("acquire %s: INCR token: %w", key, undefinite(err))
		}
		return Grant{Owner: owner, Token: tok}, true, nil
	})
}

func (l *setNXExpire) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	return releaseByDel(ctx, l.c, key, g)
}

func (l *setNXExpire) Close() error { return l.c.Close() }
