package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Names of the two halves of the redis-zk lock, as its grants report them
// in Grant.Nodes (and the history in an acquire's value.nodes).
const (
	HalfRedis     = "redis"
	HalfZooKeeper = "zookeeper"
)

func init() {
	register(Design{Name: "redis-zk", Service: "redis-zk", Library: "go-zookeeper", LockNodes: 1, Tokens: true, ZxidTokens: true, New: newRedisZK,
		Summary: "the seed's combined lock: SET NX PX on Redis, then a ZooKeeper ephemeral node; granted when both are taken, released znode first; token = czxid; --lease is both the PX lease and the session timeout"})
}

// redisZK is the redis-zk design, the seed article's combined Redis +
// ZooKeeper lock: redis-set-px's SET NX PX on the Redis lock node, then
// zk-ephemeral's ephemeral node on the ZooKeeper ensemble, with the same
// owner value in both. The lock is granted only when both halves are taken:
// when the znode is held by another client, the Redis key is given back
// (compare-and-delete) and the client waits for the znode to go. Release
// goes in reverse order: the znode, then the Redis key. The fencing token is
// the znode's czxid.
//
// The lock is held only while both halves are: right before each protected
// access the client checks its ZooKeeper session (zk-ephemeral's check:
// not expired, connected) and that its Redis key's lease, counted on the
// monotonic clock from the moment the SET was sent, has not run out. The
// Redis half notifies nothing; the ZooKeeper session reports its events.
type redisZK struct {
	redis *setPX
	zk    *zkEphemeral
	cfg   Config
	rng   *rand.Rand

	mu sync.Mutex
	// set maps a held key to when the SET that took its Redis half was
	// sent: the key expires no earlier than a lease after that.
	set map[string]time.Time
}

var _ Validator = (*redisZK)(nil)

// newRedisZK connects to the Redis lock node (cfg.LockAddrs[0]) and opens a
// ZooKeeper session to the servers (cfg.LockAddrs[1:]), the order of the
// redis-zk service's LockAddrs.
func newRedisZK(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	if len(cfg.LockAddrs) < 2 {
		return nil, fmt.Errorf("redis-zk needs the Redis lock node's address and at least one ZooKeeper server's, got %d addresses", len(cfg.LockAddrs))
	}
	rcfg, zcfg := cfg, cfg
	rcfg.LockAddrs, rcfg.DiscoveryAddrs = cfg.LockAddrs[:1], nil
	zcfg.LockAddrs = cfg.LockAddrs[1:]
	r, err := newSetPX(rcfg, rng, nil)
	if err != nil {
		return nil, err
	}
	z, err := newZKEphemeral(zcfg, rng, events)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return &redisZK{redis: r.(*setPX), zk: z.(*zkEphemeral), cfg: cfg, rng: rng, set: make(map[string]time.Time)}, nil
}

// Acquire takes the Redis key, then the znode, retrying until the acquire
// timeout.
func (l *redisZK) Acquire(ctx context.Context, key string) (Grant, error) {
	deadline := time.Now().Add(ms(l.cfg.AcquireTimeoutMS))
	return retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		owner := newOwner(l.cfg.Process, l.rng)
		sent := time.Now()
		tok, err := l.redis.trySet(ctx, key, owner)
		if err != nil || tok == 0 {
			return Grant{}, false, err // held on Redis: retry after a pause
		}
		g, ok, zerr := l.zk.tryCreate(key, owner)
		if zerr == nil && ok {
			l.mu.Lock()
			l.set[key] = sent
			l.mu.Unlock()
			return Grant{Owner: owner, Token: g.Token, Nodes: []string{HalfRedis, HalfZooKeeper}}, true, nil
		}
		// The second half was not taken: give the first back.
		_, rerr := compareAndDelete.Run(ctx, l.redis.c, []string{key}, owner).Int64()
		switch {
		case zerr != nil && rerr != nil:
			return Grant{}, false, undefinite(fmt.Errorf("%w; and giving back the redis key: %v", zerr, rerr))
		case zerr != nil:
			return Grant{}, false, zerr
		case rerr != nil:
			// Our key stays until its lease runs out.
			return Grant{}, false, undefinite(fmt.Errorf("acquire %s: znode held by another client; giving back the redis key: %w", key, rerr))
		}
		// Held on ZooKeeper: wait for the znode to go, then start over.
		return Grant{}, false, l.zk.awaitGone(ctx, key, deadline)
	})
}

// Valid reports whether both halves may still be held: the ZooKeeper
// session that created the znode is intact, and the Redis key's lease has
// not run out by this client's monotonic clock.
func (l *redisZK) Valid(key string) error {
	if err := l.zk.Valid(key); err != nil {
		return err
	}
	l.mu.Lock()
	sent, ok := l.set[key]
	l.mu.Unlock()
	if !ok {
		return fmt.Errorf("lock %s not held", key)
	}
	if age := time.Since(sent); age >= l.cfg.Lease() {
		return fmt.Errorf("lock lost: the redis key's %s lease ran out (%s since the SET)", l.cfg.Lease(), age.Round(time.Millisecond))
	}
	return nil
}

// Release deletes the znode, then the Redis key, each only if it is still
// ours. Released is true when both were; Detail says what each half found.
// When one half was deleted and the other failed, the release took effect in
// part: the error is then ambiguous (info).
func (l *redisZK) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	l.mu.Lock()
	delete(l.set, key)
	l.mu.Unlock()
	zv, zerr := l.zk.Release(ctx, key, g)
	n, rerr := compareAndDelete.Run(ctx, l.redis.c, []string{key}, g.Owner).Int64()
	if rerr != nil {
		rerr = fmt.Errorf("release %s: redis key: %w", key, rerr)
	}
	zkDeleted := zerr == nil && zv != nil && zv.Released != nil && *zv.Released
	redisDeleted := rerr == nil && n == 1
	if err := errors.Join(zerr, rerr); err != nil {
		if zkDeleted || redisDeleted || Classify(zerr) == history.Info || Classify(rerr) == history.Info {
			return nil, undefinite(err)
		}
		return nil, err
	}
	return &history.Value{
		Released: history.Bool(zkDeleted && redisDeleted),
		Extra:    &history.Extra{Detail: "znode " + foundWord(zkDeleted) + ", redis key " + foundWord(redisDeleted)},
	}, nil
}

// foundWord says what a release found of one half.
func foundWord(deleted bool) string {
	if deleted {
		return "deleted"
	}
	return "already gone"
}

// Close closes the ZooKeeper session (its znodes go with it) and the Redis
// connection.
func (l *redisZK) Close() error {
	zerr := l.zk.Close()
	return errors.Join(zerr, l.redis.Close())
}
