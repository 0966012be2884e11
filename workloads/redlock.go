package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(Design{Name: "redlock", Service: "redis", LockNodes: 5, Tokens: false, New: newRedlock,
		Summary: "RedLock over five independent masters: SET NX PX on each with a short per-node timeout, granted on a majority " +
			"within the validity time (lease - elapsed - drift, on the client's clock), released on all; no fencing token (--fencing is refused)"})
}

// redlockDrift is the clock drift allowance of the redis.io algorithm: 1 % of
// the lease plus 2 ms for the granularity of the servers' expiry.
func redlockDrift(lease time.Duration) time.Duration { return lease/100 + 2*time.Millisecond }

// redlockValidity is how long a lock taken with lease, after an acquire round
// that took elapsed by the client's clock, may still be used: lease - elapsed
// - drift. The lock is granted only when this is positive.
func redlockValidity(lease, elapsed time.Duration) time.Duration {
	return lease - elapsed - redlockDrift(lease)
}

// redlockNodeTimeout is how long one node may take to answer one request
// (a tenth of the lease, at least 5 ms, at most the op timeout), so that a
// node that is down or cut off costs a small part of the validity time.
func redlockNodeTimeout(cfg Config) time.Duration {
	d := cfg.Lease() / 10
	d = max(d, 5*time.Millisecond)
	if op := cfg.OpTimeout(); op > 0 {
		d = min(d, op)
	}
	return d
}

// redlock is the RedLock algorithm of the redis.io distributed-locks page,
// over independent masters (each its own redis-server, none replicating):
//
//  1. read the client's clock (start);
//  2. SET key owner NX PX lease on every node in parallel, each with a short
//     timeout, and count the nodes that set it;
//  3. read the clock again: validity = lease - (now - start) - drift;
//  4. the lock is granted when a majority set the key and validity > 0;
//     otherwise the key is deleted on every node (compare-and-delete) and the
//     client retries after a random delay.
//
// Release is compare-and-delete on every node. The clock is the worker's
// client clock (Clock), which a clock-client nemesis can skew, since the
// validity arithmetic is the client's. RedLock hands out no monotonic
// fencing token: Grant.Token is 0.
//
// A pause of the client while the replies to step 2 are in flight is caught
// by step 3 (the elapsed time includes the pause), which is antirez's answer
// to Kleppmann; a pause after step 4 is not, and nothing in the algorithm can
// catch it. Valid re-checks the validity deadline on the client's clock, so
// the worker refuses a read or write once the validity has passed; a pause
// between the last check and the write still writes late.
type redlock struct {
	cfg     Config
	rng     *rand.Rand
	clock   *Clock
	nodes   []*redis.Client
	names   []string
	timeout time.Duration

	mu    sync.Mutex
	until map[string]time.Time // key -> end of validity, by the client's clock
}

var (
	_ Lock      = (*redlock)(nil)
	_ Validator = (*redlock)(nil)
)

func newRedlock(cfg Config, rng *rand.Rand, _ func(string)) (Lock, error) {
	if len(cfg.LockAddrs) < 1 {
		return nil, errors.New("redlock needs at least one lock node address (five in the design)")
	}
	if cfg.LeaseMS <= 0 {
		return nil, fmt.Errorf("redlock lease %d ms: want more than 0", cfg.LeaseMS)
	}
	l := &redlock{cfg: cfg, rng: rng, clock: NewClock(cfg.ClockFile), timeout: redlockNodeTimeout(cfg),
		until: make(map[string]time.Time)}
	for j, addr := range cfg.LockAddrs {
		l.nodes = append(l.nodes, newRedisClient(addr, l.timeout))
		l.names = append(l.names, fmt.Sprintf("lock%d", j))
	}
	return l, nil
}

// quorum is the majority of the nodes.
func (l *redlock) quorum() int { return len(l.nodes)/2 + 1 }

// each runs f on every node in parallel, each under its own timeout, and
// returns the per-node results and errors.
func (l *redlock) each(ctx context.Context, timeout time.Duration, f func(ctx context.Context, c *redis.Client) (bool, error)) ([]bool, []error) {
	ok := make([]bool, len(l.nodes))
	errs := make([]error, len(l.nodes))
	var wg sync.WaitGroup
	for j, c := range l.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			ok[j], errs[j] = f(nctx, c)
		}()
	}
	wg.Wait()
	return ok, errs
}

// Acquire runs acquire rounds until one is granted or the acquire timeout.
func (l *redlock) Acquire(ctx context.Context, key string) (Grant, error) {
	return retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		return l.round(ctx, key)
	})
}

// round is one acquire attempt: steps 1 to 4.
func (l *redlock) round(ctx context.Context, key string) (Grant, bool, error) {
	owner := newOwner(l.cfg.Process, l.rng)
	lease := l.cfg.Lease()
	start := l.clock.Now()
	set, _ := l.each(ctx, l.timeout, func(ctx context.Context, c *redis.Client) (bool, error) {
		return c.SetNX(ctx, key, owner, lease).Result()
	})
	validity := redlockValidity(lease, l.clock.Now().Sub(start))
	var granted []string
	for j, ok := range set {
		if ok {
			granted = append(granted, l.names[j])
		}
	}
	if len(granted) >= l.quorum() && validity > 0 {
		l.mu.Lock()
		l.until[key] = start.Add(lease - redlockDrift(lease))
		l.mu.Unlock()
		return Grant{Owner: owner, Nodes: granted}, true, nil
	}
	// Not granted: undo the minority (or the late majority) on every node,
	// including those that timed out, where the SET may have landed.
	l.deleteAll(context.WithoutCancel(ctx), l.timeout, key, owner)
	if err := ctx.Err(); err != nil {
		return Grant{}, false, Definite(err)
	}
	return Grant{}, false, nil
}

// deleteAll runs compare-and-delete on every node, each within timeout, and
// returns the nodes that deleted the owner's key and the errors of those that
// did not answer.
func (l *redlock) deleteAll(ctx context.Context, timeout time.Duration, key, owner string) ([]string, []error) {
	del, errs := l.each(ctx, timeout, func(ctx context.Context, c *redis.Client) (bool, error) {
		n, err := compareAndDelete.Run(ctx, c, []string{key}, owner).Int64()
		return n == 1, err
	})
	var deleted []string
	for j, ok := range del {
		if ok {
			deleted = append(deleted, l.names[j])
		}
	}
	return deleted, errs
}

// Release deletes the owner's key on every node, each within the op timeout
// (a release is not racing the validity time). Released is true when a
// majority still held it; Nodes are the nodes that did. It fails only when
// no node answered.
func (l *redlock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	l.mu.Lock()
	delete(l.until, key)
	l.mu.Unlock()
	deleted, errs := l.deleteAll(ctx, max(l.cfg.OpTimeout(), l.timeout), key, g.Owner)
	answered := 0
	for _, err := range errs {
		if err == nil {
			answered++
		}
	}
	if answered == 0 {
		err := fmt.Errorf("release %s: no node answered: %w", key, joinLine(errs))
		if allDefinite(errs) {
			return nil, Definite(err)
		}
		return nil, undefinite(err)
	}
	sort.Strings(deleted)
	return &history.Value{Released: history.Bool(len(deleted) >= l.quorum()), Extra: &history.Extra{Nodes: deleted}}, nil
}

// joinLine joins errs into one error whose message is one line.
func joinLine(errs []error) error {
	var msgs []string
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	return lineError{msg: strings.Join(msgs, "; "), errs: errs}
}

// lineError is errors.Join with its messages on one line.
type lineError struct {
	msg  string
	errs []error
}

func (e lineError) Error() string   { return e.msg }
func (e lineError) Unwrap() []error { return e.errs }

// allDefinite reports whether every error certainly had no effect.
func allDefinite(errs []error) bool {
	for _, err := range errs {
		if Classify(err) != history.Fail {
			return false
		}
	}
	return true
}

// Valid returns an error once the validity time of the lock on key has
// passed by the client's clock, or when the client holds no grant for key.
func (l *redlock) Valid(key string) error {
	l.mu.Lock()
	until, ok := l.until[key]
	l.mu.Unlock()
	if !ok {
		return fmt.Errorf("redlock holds no grant for %s", key)
	}
	if now := l.clock.Now(); !now.Before(until) {
		return fmt.Errorf("redlock validity of %s passed %s ago by the client's clock", key, now.Sub(until).Round(time.Millisecond))
	}
	return nil
}

// Close closes the connections to every node.
func (l *redlock) Close() error {
	var errs []error
	for _, c := range l.nodes {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
