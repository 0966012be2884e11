// Command redis is a kit worker for a Redis lock written the way its
// users write it with go-redis: SET key owner NX PX lease, with a fencing
// token from INCR in the same script, released by a Lua compare-and-delete.
//
//	go build -o redis-worker ./kit/examples/redis
//	check conformance --lock redis-set-px --worker-cmd ./redis-worker
//	check run --lock redis-set-px --worker-cmd ./redis-worker --nemesis pause
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockcheck/lockcheck/kit"
)

var (
	acquire = redis.NewScript(`if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2]) end return 0`)
	release = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) end return 0`)
)

type lock struct {
	c   *redis.Client
	cfg kit.Config
	rng *rand.Rand
}

func (l *lock) Acquire(ctx context.Context, key string) (kit.Grant, error) {
	for {
		owner := fmt.Sprintf("p%d-%016x", l.cfg.Process, l.rng.Uint64())
		token, err := acquire.Run(ctx, l.c, []string{key, key + ":token"}, owner, l.cfg.LeaseMS).Int64()
		if err != nil {
			return kit.Grant{}, certain(err)
		}
		if token > 0 {
			return kit.Grant{Owner: owner, Token: token}, nil
		}
		select {
		case <-ctx.Done():
			return kit.Grant{}, kit.ErrNotAcquired
		case <-time.After(l.cfg.Retry()):
		}
	}
}

func (l *lock) Release(ctx context.Context, key string, g kit.Grant) (bool, error) {
	n, err := release.Run(ctx, l.c, []string{key}, g.Owner).Int64()
	return n == 1, certain(err)
}

func (l *lock) Close() error { return l.c.Close() }

// certain marks the errors that say the command never ran: a refused
// connection, or an error reply. A timeout stays uncertain (info).
func certain(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return kit.Definite(err)
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return kit.Definite(err)
	}
	return err
}

func main() {
	kit.Main(func(ctx context.Context, cfg kit.Config) (kit.Lock, error) {
		c := redis.NewClient(&redis.Options{Addr: cfg.LockAddrs[0], DialTimeout: cfg.OpTimeout(),
			ReadTimeout: cfg.OpTimeout(), WriteTimeout: cfg.OpTimeout(), MaxRetries: -1})
		return &lock{c: c, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Process)))}, nil
	})
}
