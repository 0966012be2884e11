package workloads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

// newRedisClient returns a client with short timeouts and no hidden retries,
// so a partition gives a prompt error instead of a hang or a silent retry.
func newRedisClient(addr string, timeout time.Duration) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:            addr,
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     timeout,
		ReadTimeout:     timeout,
		WriteTimeout:    timeout,
		PoolSize:        2,
		PoolTimeout:     timeout,
	})
}

// newLockClient returns the client of a single-master lock design: to the
// one lock node, or (when the config names Sentinels) to whichever master
// the Sentinels name.
func newLockClient(cfg Config, design string) (*redis.Client, error) {
	if len(cfg.LockAddrs) < 1 {
		return nil, fmt.Errorf("%s needs one lock node address", design)
	}
	return newRedisClient(cfg.LockAddrs[0], cfg.OpTimeout()), nil
}

// plainDel deletes key unconditionally, as DEL does, and returns the owner
// value it deleted. It is DEL made observable: one script that reads the value
// and deletes the key atomically, so the history can show whose key a release
// removed. What it deletes is exactly what DEL deletes.
var plainDel = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
return v`)

// releaseByDel runs plainDel and reports whether the deleted key was ours.
func releaseByDel(ctx context.Context, c *redis.Client, key string, g Grant) (*history.Value, error) {
	v, err := plainDel.Run(ctx, c, []string{key}).Text()
	if errors.Is(err, redis.Nil) {
		return &history.Value{Released: history.Bool(false)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release %s by DEL: %w", key, err)
	}
	return &history.Value{Released: history.Bool(v == g.Owner), DeletedOwner: v}, nil
}
