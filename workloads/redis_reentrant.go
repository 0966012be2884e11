package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(Design{Name: "redis-reentrant", Service: "redis", LockNodes: 1, Tokens: true, Renews: true, New: newReentrant,
		Summary: "Redisson RLock: a hash {uuid:thread -> hold count} taken by the exists/hincrby/pexpire Lua, " +
			"entered twice per grant (depth 2), released by hincrby -1 and DEL at zero; watchdog renewal; token INCR on the outer acquire"})
}

// reentrantDepth is how often the workload enters the lock per grant: an
// outer acquire and one re-entry.
const reentrantDepth = 2

// reentrantAcquire is Redisson's RLock tryLockInnerAsync: take a free lock
// (a hash whose one field is the owner, valued by its hold count), or enter
// it again when it is ours, setting the lease either way; otherwise return the
// lock's remaining time to live. Where Redisson returns nil on success, this
// returns {1, token} for a fresh grant (with the INCR of the token counter in
// the same script) and {2, hold count} for a re-entry; a held lock gives
// {0, pttl}.
var reentrantAcquire = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {1, redis.call('INCR', KEYS[2])}
end
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  local n = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {2, n}
end
return {0, redis.call('PTTL', KEYS[1])}`)

// reentrantRelease is Redisson's RLock unlockInnerAsync without the publish
// (waiters here poll): nil when the lock is not ours, 0 when we still hold it
// (count above zero, lease set again), 1 when the last hold is gone and the
// key deleted.
var reentrantRelease = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local n = redis.call('HINCRBY', KEYS[1], ARGV[2], -1)
if n > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 0
end
redis.call('DEL', KEYS[1])
return 1`)

// renewHashOwned is Redisson's renewExpirationAsync: extend the lease while
// the hash still has our owner field.
var renewHashOwned = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
return 0`)

// reentrant is the redis-reentrant design. The owner is Redisson's
// "uuid:threadId": a fresh uuid per grant (Redisson's is per client; a fresh
// one keeps every grant's owner unique in the history) and, as the thread,
// the worker's process id. Like redis-watchdog, it is not a Validator.
type reentrant struct {
	c   *redis.Client
	cfg Config
	rng *rand.Rand
	wd  *watchdog
}

func newReentrant(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	c, err := newLockClient(cfg, "redis-reentrant")
	if err != nil {
		return nil, err
	}
	return &reentrant{c: c, cfg: cfg, rng: rng, wd: newWatchdog(c, cfg, renewHashOwned, events)}, nil
}

// uuid returns a random version-4 style uuid drawn from the worker's seeded
// source.
func uuid(rng *rand.Rand) string {
	a, b := rng.Uint64(), rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xfff, 0x8000|(b>>48)&0x3fff, b&0xffffffffffff)
}

// enter runs the acquire script once: kind 1 is a fresh grant (n the token),
// 2 a re-entry (n the hold count), 0 a lock held by another (n its pttl).
func (l *reentrant) enter(ctx context.Context, key, owner string) (kind, n int64, err error) {
	res, err := reentrantAcquire.Run(ctx, l.c, []string{key, key + ":token"}, l.cfg.LeaseMS, owner).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("acquire script returned %v", res)
	}
	return res[0], res[1], nil
}

// Acquire takes the lock (retrying while another owner holds it), starts the
// watchdog, and enters the lock a second time, which must succeed at once.
func (l *reentrant) Acquire(ctx context.Context, key string) (Grant, error) {
	g, err := retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		owner := fmt.Sprintf("%s:%d", uuid(l.rng), l.cfg.Process)
		kind, n, err := l.enter(ctx, key, owner)
		if err != nil {
			return Grant{}, false, fmt.Errorf("acquire %s: %w", key, err)
		}
		if kind != 1 {
			return Grant{}, false, nil
		}
		return Grant{Owner: owner, Token: n}, true, nil
	})
	if err != nil {
		return Grant{}, err
	}
	l.wd.start(key, g.Owner)
	// The inner acquire. The outer one holds the lock, so whatever goes
	// wrong here leaves the grant's state unknown (info): the controller
	// then retires this worker, and the lease runs out.
	kind, n, err := l.enter(ctx, key, g.Owner)
	switch {
	case err != nil:
		return Grant{}, undefinite(fmt.Errorf("acquire %s: re-entry (depth 2) after the grant of token %d: %w", key, g.Token, err))
	case kind != 2 || n != reentrantDepth:
		return Grant{}, undefinite(fmt.Errorf("acquire %s: re-entry (depth 2) after the grant of token %d refused: script gave {%d, %d}", key, g.Token, kind, n))
	}
	g.Detail = fmt.Sprintf("depth %d", n)
	return g, nil
}

// Release leaves the lock as often as Acquire entered it: the first exit
// must leave it held (count 1), the last deletes it.
func (l *reentrant) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	renewed := l.wd.stop(key, g.Owner)
	for depth := reentrantDepth; depth > 0; depth-- {
		n, err := reentrantRelease.Run(ctx, l.c, []string{key}, l.cfg.LeaseMS, g.Owner).Int64()
		if errors.Is(err, redis.Nil) {
			// Not ours (any more): the lease ran out, perhaps another holds it.
			return &history.Value{
				Released: history.Bool(false),
				Extra:    &history.Extra{Detail: fmt.Sprintf("not held at depth %d; %s", depth, renewedDetail(renewed))},
			}, nil
		}
		if err != nil {
			if depth < reentrantDepth {
				err = undefinite(err) // the first exit took effect
			}
			return nil, fmt.Errorf("release %s at depth %d: %w", key, depth, err)
		}
		// Every exit but the last leaves the lock held (0); the last deletes
		// it (1).
		want := int64(0)
		if depth == 1 {
			want = 1
		}
		if n != want {
			return nil, undefinite(fmt.Errorf("release %s at depth %d: script gave %d, want %d", key, depth, n, want))
		}
	}
	return &history.Value{
		Released: history.Bool(true),
		Extra:    &history.Extra{Detail: fmt.Sprintf("released from depth %d; %s", reentrantDepth, renewedDetail(renewed))},
	}, nil
}

func (l *reentrant) Close() error {
	l.wd.close()
	return l.c.Close()
}
