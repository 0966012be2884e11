package workloads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

// fencedRead returns {1, value} and raises the key's highest token to ARGV[1],
// or returns {0, highest} when ARGV[1] is lower than the highest token seen.
var fencedRead = redis.NewScript(`
local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}`)

// fencedWrite sets the register to ARGV[2] and returns {1, token}, or returns
// {0, highest} when the token ARGV[1] is lower than the highest seen.
var fencedWrite = redis.NewScript(`
local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
redis.call('SET', KEYS[1], ARGV[2])
return {1, t}`)

// Resource is the protected resource: one integer register per lock key on
// the storage node. A critical section reads it, thinks, and writes read+1,
// so a second holder shows up as a lost update. In fenced mode both accesses
// carry the lock's token, and the storage refuses, atomically in Lua, a token
// lower than the highest it has seen: fencing the read as well as the write
// is what makes a read-modify-write safe.
type Resource struct {
	c      *redis.Client
	think  time.Duration
	fenced bool
}

// NewResource connects to the storage node.
func NewResource(cfg Config) *Resource {
	timeout := cfg.OpTimeout()
	if timeout < time.Second {
		timeout = time.Second
	}
	return &Resource{c: newRedisClient(cfg.StorageAddr, timeout), think: ms(cfg.ThinkMS), fenced: cfg.Fencing}
}

// RegisterKey is the storage key of the register guarded by lock key.
func RegisterKey(key string) string { return "resource:" + key }

func maxTokenKey(key string) string { return "resource:" + key + ":max-token" }

// CriticalSection runs one read-think-write. It returns ErrRejected (with a
// value naming the refused access) when fencing refused the token. check,
// when not nil, is asked right before the read and right before the write;
// an error from it ends the critical section with no effect.
func (r *Resource) CriticalSection(ctx context.Context, key string, token int64, check func() error) (*history.Value, error) {
	keys := []string{RegisterKey(key), maxTokenKey(key)}
	val := &history.Value{Token: token}
	if check == nil {
		check = func() error { return nil }
	}
	if err := check(); err != nil {
		return val, Definite(err)
	}
	var read int64
	if r.fenced {
		res, err := fencedRead.Run(ctx, r.c, keys, token).Int64Slice()
		if err != nil {
			return nil, Definite(fmt.Errorf("fenced read of %s: %w", keys[0], err))
		}
		if res[0] == 0 {
			val.Rejected, val.MaxToken = "read", res[1]
			return val, ErrRejected
		}
		read = res[1]
	} else {
		v, err := r.c.Get(ctx, keys[0]).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, Definite(fmt.Errorf("read %s: %w", keys[0], err))
		}
		read = v
	}
	val.Read = history.Int64(read)
	val.Wrote = history.Int64(read + 1)
	select {
	case <-ctx.Done():
		return val, Definite(ctx.Err())
	case <-time.After(r.think):
	}
	if err := check(); err != nil {
		return val, Definite(err)
	}
	if r.fenced {
		res, err := fencedWrite.Run(ctx, r.c, keys, token, read+1).Int64Slice()
		if err != nil {
			return val, fmt.Errorf("fenced write of %s: %w", keys[0], err)
		}
		if res[0] == 0 {
			val.Rejected, val.MaxToken = "write", res[1]
			return val, ErrRejected
		}
		return val, nil
	}
	if err := r.c.Set(ctx, keys[0], read+1, 0).Err(); err != nil {
		return val, fmt.Errorf("write %s: %w", keys[0], err)
	}
	return val, nil
}

// Close releases the connection to the storage node.
func (r *Resource) Close() error { return r.c.Close() }
