package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(Design{Name: "redis-watchdog", Service: "redis", LockNodes: 1, Tokens: true, Renews: true, New: newWatchdogLock,
		Summary: "Redisson-style: SET NX PX (+ INCR token), Lua compare-and-delete release, and a watchdog goroutine " +
			"that renews the lease (--lease, Redisson's 30 s) every lease/3 while the key holds this owner; " +
			"a refused or failed renewal stops it and the work goes on"})
}

// renewOwned extends the lease of a SET NX PX lock only while the key still
// holds our owner value; it returns 1 when it renewed.
var renewOwned = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[2] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 0`)

// watchdog renews the leases of the locks a worker holds, in the background,
// as Redisson's lock watchdog does: every lease/3 it runs a renewal script
// that extends the lease only while the lock still belongs to this owner. A
// renewal that is refused (the lock is someone else's, or gone) or that fails
// (a timeout, a refused connection) stops the renewals of that lock for good
// and is reported as an event; the holder is not told otherwise and goes on
// with its work, as with Redisson. A pause nemesis stops the watchdog's
// goroutine with the rest of the process, which is the point.
//
// The renewals of a lock last from its grant to its release (or the worker's
// end): the controller bounds how long a lock is held.
type watchdog struct {
	c      *redis.Client
	cfg    Config
	renew  *redis.Script // KEYS[1] lock key; ARGV[1] lease ms, ARGV[2] owner; 1 when renewed
	events func(string)

	mu      sync.Mutex
	running map[string]*renewal // lock key -> the renewals of the grant held on it
}

// renewal is the watchdog of one grant.
type renewal struct {
	owner   string
	stop    chan struct{}
	mu      sync.Mutex
	renewed int       // how many renewals the server accepted
	last    time.Time // when the grant or the last accepted renewal was known
	ended   bool      // a renewal was refused or failed, and reported
}

func newWatchdog(c *redis.Client, cfg Config, renew *redis.Script, events func(string)) *watchdog {
	if events == nil {
		events = func(string) {}
	}
	return &watchdog{c: c, cfg: cfg, renew: renew, events: events, running: make(map[string]*renewal)}
}

// period is how often a lease is renewed: a third of it, as in Redisson
// (internalLockLeaseTime / 3).
func (w *watchdog) period() time.Duration {
	return max(w.cfg.Lease()/3, time.Millisecond)
}

// start begins renewing the lease of key, granted to owner.
func (w *watchdog) start(key, owner string) {
	rn := &renewal{owner: owner, stop: make(chan struct{}), last: time.Now()}
	w.mu.Lock()
	if old := w.running[key]; old != nil {
		close(old.stop)
	}
	w.running[key] = rn
	w.mu.Unlock()
	go w.loop(key, rn)
}

// stop ends the renewals of key's grant to owner and returns how many
// renewals the server accepted. It does not wait for a renewal in flight:
// that one finds the key released and says nothing.
//
// When the lease ran out before the watchdog renewed it (the process was
// stopped, or starved, for longer than the lease), stop reports that with an
// event: Redisson would not notice, but the history should show why the
// watchdog did not save the lock. A watchdog that already reported a refused
// or failed renewal says nothing more.
func (w *watchdog) stop(key, owner string) int {
	w.mu.Lock()
	rn := w.running[key]
	if rn == nil || rn.owner != owner {
		w.mu.Unlock()
		return 0
	}
	delete(w.running, key)
	close(rn.stop)
	w.mu.Unlock()
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if gap := time.Since(rn.last); gap > w.cfg.Lease() && !rn.ended {
		what := "the grant"
		if rn.renewed > 0 {
			what = "its last renewal"
		}
		w.events(fmt.Sprintf("watchdog %s: released %.2f s after %s, longer than the %.2f s lease: "+
			"the lease ran out before the watchdog could renew it", key, gap.Seconds(), what, w.cfg.Lease().Seconds()))
	}
	return rn.renewed
}

// close stops every renewal.
func (w *watchdog) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, rn := range w.running {
		close(rn.stop)
		delete(w.running, key)
	}
}

// end marks rn's renewals as ended by a refusal or a failure, and reports
// what happened.
func (w *watchdog) end(rn *renewal, event string) {
	rn.mu.Lock()
	rn.ended = true
	rn.mu.Unlock()
	w.events(event)
}

// loop renews key's lease every period until stopped or until a renewal is
// refused or fails.
func (w *watchdog) loop(key string, rn *renewal) {
	tick := time.NewTicker(w.period())
	defer tick.Stop()
	stopped := func() bool {
		select {
		case <-rn.stop:
			return true
		default:
			return false
		}
	}
	for {
		select {
		case <-rn.stop:
			return
		case <-tick.C:
		}
		if w.cfg.Reports(ReportRenewal) {
			w.events(fmt.Sprintf("%s%s (owner %s)", history.EventRenewalPrefix, key, rn.owner))
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.cfg.OpTimeout())
		n, err := w.renew.Run(ctx, w.c, []string{key}, w.cfg.LeaseMS, rn.owner).Int64()
		cancel()
		if stopped() {
			return // released meanwhile: whatever the renewal saw is moot
		}
		switch {
		case err != nil:
			w.end(rn, fmt.Sprintf("watchdog %s: renewal failed (%v); renewal stopped, the lock expires unless released", key, err))
			return
		case n != 1:
			w.end(rn, fmt.Sprintf("watchdog %s: renewal refused, lock lost (the key no longer holds owner %s); renewal stopped", key, rn.owner))
			return
		}
		rn.mu.Lock()
		rn.renewed++
		rn.last = time.Now() // the server renewed the lease no later than this
		rn.mu.Unlock()
	}
}

// watchdogLock is the redis-watchdog design: redis-set-px's acquire and
// compare-and-delete release, with the lease renewed by a watchdog while the
// lock is held.
//
// It is deliberately not a Validator: Redisson tells no one when a renewal
// fails (it logs and stops renewing), and the code holding the lock goes on.
// That is the behaviour under test (mechanism M7: the watchdog stops while
// the work goes on); the failed renewal shows in the history as an event.
type watchdogLock struct {
	c   *redis.Client
	cfg Config
	rng *rand.Rand
	wd  *watchdog
}

func newWatchdogLock(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	c, err := newLockClient(cfg, "redis-watchdog")
	if err != nil {
		return nil, err
	}
	return &watchdogLock{c: c, cfg: cfg, rng: rng, wd: newWatchdog(c, cfg, renewOwned, events)}, nil
}

func (l *watchdogLock) Acquire(ctx context.Context, key string) (Grant, error) {
	g, err := retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		owner := newOwner(l.cfg.Process, l.rng)
		tok, err := setPXAcquire.Run(ctx, l.c, []string{key, key + ":token"}, owner, l.cfg.LeaseMS).Int64()
		if err != nil {
			return Grant{}, false, fmt.Errorf("acquire %s: %w", key, err)
		}
		return Grant{Owner: owner, Token: tok}, tok > 0, nil
	})
	if err == nil {
		l.wd.start(key, g.Owner)
	}
	return g, err
}

func (l *watchdogLock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	renewed := l.wd.stop(key, g.Owner)
	n, err := compareAndDelete.Run(ctx, l.c, []string{key}, g.Owner).Int64()
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", key, err)
	}
	return &history.Value{Released: history.Bool(n == 1), Extra: &history.Extra{Detail: renewedDetail(renewed)}}, nil
}

func (l *watchdogLock) Close() error {
	l.wd.close()
	return l.c.Close()
}

// renewedDetail says how often the watchdog renewed a released lock's lease.
func renewedDetail(n int) string {
	if n == 1 {
		return "watchdog renewed the lease once"
	}
	return fmt.Sprintf("watchdog renewed the lease %d times", n)
}
