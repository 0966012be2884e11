package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(Design{Name: "redis-setnx-getset", Service: "redis", LockNodes: 1, Tokens: true, WrittenOver: tookOver, New: newSetNXGetSet,
		Summary: "the old SETNX docs pattern: SETNX key <expiry timestamp by the client's clock>; when the stored time has passed, GETSET and check the old value; release by plain DEL (+ INCR token)"})
}

// setNXGetSet is the redis-setnx-getset design, the lock of the SETNX
// command page's "Handling deadlocks" section (before SET NX PX existed):
//
//  1. SETNX key <now + lease + 1 ms>: set, the lock is ours.
//  2. Otherwise GET key: while the stored time has not passed by this
//     client's clock, the lock is held; retry later.
//  3. It has passed: GETSET key <now + lease + 1 ms>. When the old value
//     GETSET returns is still a passed time, the lock is ours; otherwise
//     another client's GETSET came first, and ours only moved its expiry.
//
// The key never has a TTL in Redis: every expiry is judged on a client's
// clock (Config.ClockFile), so a server clock jump changes nothing and a
// client clock that runs ahead takes a live lock (M5). Release is a plain
// DEL, which can delete a successor's key (M4).
//
// The stored value is "<expiry_ms>:p<process>.<n>:<over_ms>": the expiry
// timestamp first, so any client parses it by its integer prefix; then this
// acquire's identity (the owner); then the expiry it judged passed (0 for a
// SETNX), which names the takeover the value belongs to.
type setNXGetSet struct {
	c     *redis.Client
	cfg   Config
	rng   *rand.Rand
	clock *Clock
	n     int64
}

func newSetNXGetSet(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	c, err := newLockClient(cfg, "redis-setnx-getset")
	if err != nil {
		return nil, err
	}
	return &setNXGetSet{c: c, cfg: cfg, rng: rng, clock: NewClock(cfg.ClockFile)}, nil
}

// lockValue is the parsed value of a setnx-getset lock key.
type lockValue struct {
	expiry int64  // ms since the epoch, by the writer's clock
	owner  string // the whole value, as the grant's owner
	over   int64  // the expiry the writer judged passed; 0 for SETNX
}

// parseLockValue parses a lock key's value; a value that is only a number
// (another implementation's) is an expiry with no takeover.
func parseLockValue(s string) (lockValue, error) {
	head, rest, _ := strings.Cut(s, ":")
	exp, err := strconv.ParseInt(head, 10, 64)
	if err != nil {
		return lockValue{}, fmt.Errorf("lock value %q: no expiry timestamp: %w", s, err)
	}
	v := lockValue{expiry: exp, owner: s}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		v.over, _ = strconv.ParseInt(rest[i+1:], 10, 64)
	}
	return v, nil
}

// tookOver reports whether the lock value next, written over old, took the
// lock from old's holder: next names old's expiry as the one it judged
// passed. A GETSET that lost the race to the same passed expiry also
// writes over the winner's value, naming the loser's own expiry, but takes
// nothing: the winner holds the lock until that time passes.
func tookOver(old, next string) bool {
	o, err1 := parseLockValue(old)
	n, err2 := parseLockValue(next)
	return err1 == nil && err2 == nil && n.over != 0 && n.over == o.expiry
}

// value returns a new lock value expiring a lease from now by the client's
// clock, taking over the expiry over.
func (l *setNXGetSet) value(over int64) (string, int64) {
	l.n++
	exp := l.clock.Now().UnixMilli() + l.cfg.LeaseMS + 1
	return fmt.Sprintf("%d:p%d.%d:%d", exp, l.cfg.Process, l.n, over), exp
}

func (l *setNXGetSet) Acquire(ctx context.Context, key string) (Grant, error) {
	return retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		owner, _ := l.value(0)
		ok, err := l.c.SetNX(ctx, key, owner, 0).Result()
		if err != nil {
			return Grant{}, false, fmt.Errorf("acquire %s: SETNX: %w", key, err)
		}
		if !ok {
			// Held: has the holder's time passed, by our clock?
			cur, err := l.c.Get(ctx, key).Result()
			if errors.Is(err, redis.Nil) {
				return Grant{}, false, nil // released meanwhile: try again
			}
			if err != nil {
				return Grant{}, false, fmt.Errorf("acquire %s: GET: %w", key, Definite(err))
			}
			held, err := parseLockValue(cur)
			if err != nil {
				return Grant{}, false, Definite(fmt.Errorf("acquire %s: %w", key, err))
			}
			if held.expiry >= l.clock.Now().UnixMilli() {
				return Grant{}, false, nil
			}
			owner, _ = l.value(held.expiry)
			old, err := l.c.GetSet(ctx, key, owner).Result()
			switch {
			case errors.Is(err, redis.Nil):
				// Deleted between GET and GETSET: our value is set over
				// nothing, so the lock is ours.
			case err != nil:
				// GETSET may have written our value: unknown.
				return Grant{}, false, fmt.Errorf("acquire %s: GETSET: %w", key, err)
			default:
				prev, err := parseLockValue(old)
				if err != nil || prev.expiry >= l.clock.Now().UnixMilli() {
					// Another client's GETSET came first; ours only
					// moved the expiry of its lock a little.
					return Grant{}, false, nil
				}
			}
		}
		// From here on the key is ours: any error leaves the outcome unknown.
		tok, err := l.c.Incr(ctx, key+":token").Result()
		if err != nil {
			return Grant{}, false, fmt.Errorf("acquire %s: INCR token: %w", key, undefinite(err))
		}
		return Grant{Owner: owner, Token: tok}, true, nil
	})
}

// Release deletes the key with a plain DEL. The value it deleted is ours, a
// successor's (a plain DEL does not check; reported as DeletedOwner), or the
// value of a client that lost the GETSET race of our own takeover (same
// "over" expiry): that overwrite only moved our expiry, so the key was ours.
func (l *setNXGetSet) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	v, err := releaseByDel(ctx, l.c, key, g)
	if err != nil {
		return v, err
	}
	deleted := v.Ext().DeletedOwner
	if deleted == "" || deleted == g.Owner {
		return v, nil
	}
	mine, err1 := parseLockValue(g.Owner)
	got, err2 := parseLockValue(deleted)
	if err1 == nil && err2 == nil && mine.over != 0 && got.over == mine.over {
		return &history.Value{
			Released: history.Bool(true),
			Extra:    &history.Extra{Detail: "value " + deleted + " of a client that lost our GETSET race"},
		}, nil
	}
	return v, nil
}

func (l *setNXGetSet) Close() error { return l.c.Close() }
