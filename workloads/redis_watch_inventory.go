package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(Design{
		Name: "redis-watch-inventory", Service: "redis", LockNodes: 1, NoLock: true, StockOnLock: true,
		Workloads: []string{WorkloadInventory}, New: newWatchInventory,
		Summary: "no lock: WATCH stock, GET, MULTI DECR EXEC, retried when EXEC aborts (the seckill example); inventory workload only, judged by the inventory checker",
	})
}

// watchAttempts bounds the optimistic transactions one critical section
// tries before it gives up (with no effect: every attempt aborted).
const watchAttempts = 100

// watchInventory is the redis-watch-inventory design: it takes no lock.
// Acquire grants at once, Release does nothing, and the critical section
// is an optimistic transaction on the stock, kept on the lock service's
// master (the Redis the seckill example sells from, so a failover can lose
// its sales; on the Sentinel topology the client follows the master): WATCH the
// stock key, GET it, think, and when it is above zero MULTI DECR EXEC. EXEC
// aborts when another client changed the stock after the WATCH, and the
// section starts over, at most watchAttempts times. Redis runs EXEC
// atomically, so on one master no sale is lost and none is oversold.
type watchInventory struct {
	c     *redis.Client
	cfg   Config
	rng   *rand.Rand
	think time.Duration
}

var (
	_ Lock      = (*watchInventory)(nil)
	_ Sectioner = (*watchInventory)(nil)
)

func newWatchInventory(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	c, err := newLockClient(cfg, "redis-watch-inventory")
	if err != nil {
		return nil, err
	}
	return &watchInventory{c: c, cfg: cfg, rng: rng, think: ms(cfg.ThinkMS)}, nil
}

// Acquire grants at once: there is no lock. The owner is unique as for
// every design; the token is 0.
func (l *watchInventory) Acquire(_ context.Context, _ string) (Grant, error) {
	return Grant{Owner: newOwner(l.cfg.Process, l.rng)}, nil
}

// Release does nothing: there is no lock to give back.
func (l *watchInventory) Release(context.Context, string, Grant) (*history.Value, error) {
	return &history.Value{Extra: &history.Extra{Detail: "no lock to release"}}, nil
}

// Close closes the connection to the lock service.
func (l *watchInventory) Close() error { return l.c.Close() }

// errAborted means EXEC found the watched stock changed and ran nothing.
var errAborted = errors.New("stock changed after WATCH")

// CriticalSection sells one item with an optimistic transaction. The value
// has Read = the stock the committed attempt saw and Wrote = what DECR
// returned, or Detail SoldOut when the stock was zero; Detail counts the
// aborted attempts. An error before EXEC was sent had no effect (fail); an
// error in EXEC's round trip is ambiguous (info).
func (l *watchInventory) CriticalSection(ctx context.Context, key string, token int64, check func() error) (*history.Value, error) {
	k := RegisterKey(key)
	aborted := 0
	for attempt := 0; attempt < watchAttempts; attempt++ {
		if check != nil {
			if err := check(); err != nil {
				return &history.Value{Token: token}, Definite(err)
			}
		}
		val := &history.Value{Token: token}
		execSent := false
		err := l.c.Watch(ctx, func(tx *redis.Tx) error {
			n, err := tx.Get(ctx, k).Int64()
			if err != nil && !errors.Is(err, redis.Nil) {
				return Definite(fmt.Errorf("read %s: %w", k, err))
			}
			val.Read = history.Int64(n)
			if n <= 0 {
				val.Mut().Detail = SoldOut
				return nil
			}
			if err := think(ctx, l.think); err != nil {
				return err
			}
			var decr *redis.IntCmd
			execSent = true
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				decr = p.Decr(ctx, k)
				return nil
			})
			if errors.Is(err, redis.TxFailedErr) {
				return errAborted
			}
			if err != nil {
				return fmt.Errorf("MULTI DECR %s EXEC: %w", k, err)
			}
			val.Wrote = history.Int64(decr.Val())
			return nil
		}, k)
		switch {
		case errors.Is(err, errAborted):
			aborted++
			continue
		case err != nil && !execSent:
			return val, Definite(err)
		case err != nil:
			return val, err
		}
		if aborted > 0 {
			detail := plural(aborted, "aborted transaction")
			if val.Ext().Detail != "" {
				detail = val.Ext().Detail + " after " + detail
			} else {
				detail = "sold after " + detail
			}
			val.Mut().Detail = detail
		}
		return val, nil
	}
	return &history.Value{Token: token}, Definite(fmt.Errorf("%d transactions on %s aborted: the stock kept changing", aborted, k))
}

// plural renders "1 aborted transaction", "3 aborted transactions".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
