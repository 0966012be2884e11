package workloads

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"

	"github.com/redis/go-redis/v9"
)

func init() {
	register(Design{Name: "redis-cluster", Service: "redis-cluster", LockNodes: 6, Tokens: true, New: newClusterLock,
		Summary: "SET NX PX (+ INCR token) and Lua compare-and-delete on the master of the key's slot in a Redis Cluster " +
			"(three masters, three asynchronous replicas; go-redis cluster client)"})
}

// newClusterLock is redis-set-px on Redis Cluster: the same scripts, run by
// go-redis's cluster client on the master of the lock key's slot. The token
// counter is named {key}:token, so its hash tag puts it in the lock key's
// slot (a script may only touch keys of one slot).
func newClusterLock(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	if len(cfg.LockAddrs) == 0 || len(cfg.AddrMap) == 0 {
		return nil, fmt.Errorf("redis-cluster needs the cluster's seed addresses and address map (the redis-cluster topology)")
	}
	return &setPX{c: newClusterClient(cfg), cfg: cfg, rng: rng,
		tokenKey: func(key string) string { return "{" + key + "}:token" }}, nil
}

// newClusterClient returns go-redis's cluster client, seeded with the
// worker's proxies to every node. Every address the cluster announces (its
// slot map, MOVED redirections) is dialed through cfg.AddrMap to this
// worker's own proxy. Timeouts are those of newRedisClient, and nothing is
// retried once it may have been sent: the cluster client follows MOVED and
// ASK and retries a refused dial or CLUSTERDOWN (no command ran), but a
// timeout or a broken connection after a command went out comes back as an
// error of unknown outcome (info), not as a second try whose "lock held"
// would hide that the first took effect.
func newClusterClient(cfg Config) *redis.ClusterClient {
	timeout := cfg.OpTimeout()
	o := strictOptions(cfg.LockAddrs, timeout)
	o.Dialer = mappedDialer(cfg.AddrMap, timeout)
	co := o.Cluster()
	co.NewClient = func(opt *redis.Options) *redis.Client {
		c := redis.NewClient(opt)
		c.AddHook(dialFailed{})
		c.AddHook(sentMaybe{})
		return c
	}
	return redis.NewClusterClient(co)
}

// sentMaybe is a go-redis hook on the cluster client's node clients: an
// error after the command may have been sent (a timeout, a broken
// connection) becomes an error of unknown outcome, which the cluster
// client does not retry and Classify maps to info.
type sentMaybe struct{}

func (sentMaybe) DialHook(next redis.DialHook) redis.DialHook { return next }

func (sentMaybe) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if maySent(err) {
			err = undefinite(err)
			cmd.SetErr(err)
		}
		return err
	}
}

func (sentMaybe) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// maySent reports whether err is a network error after dialing: the
// command may have reached the server.
func maySent(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}
