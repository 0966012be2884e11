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

// The workloads a critical section can run (Config.Workload).
const (
	// WorkloadRegister reads the register, thinks, and writes read+1.
	WorkloadRegister = "register"
	// WorkloadInventory reads the stock and, when it is above zero,
	// thinks and writes stock-1: one item sold.
	WorkloadInventory = "inventory"
)

// Resource is the protected resource: one integer register per lock key on
// the storage node. A critical section reads it, thinks, and writes read+1
// (the register workload), so a second holder shows up as a lost update; or
// it reads a stock and, when above zero, writes stock-1 and sells one item
// (the inventory workload), so a second holder shows up as a lost decrement
// and, once the stock runs out, as oversold items. In fenced mode both
// accesses carry the lock's token, and the storage refuses, atomically in
// Lua, a token lower than the highest it has seen: fencing the read as well
// as the write is what makes a read-modify-write safe.
type Resource struct {
	c         *redis.Client
	think     time.Duration
	fenced    bool
	inventory bool
	// sent, when set, is told of each write as it is sent (the write
	// mark, Config.Report).
	sent func(key string, token int64)
}

// NewResource connects to the storage node.
func NewResource(cfg Config) *Resource {
	return &Resource{c: newStorageClient(cfg), think: ms(cfg.ThinkMS), fenced: cfg.Fencing,
		inventory: cfg.workload().Stock}
}

// newStorageClient returns a client of the storage node.
func newStorageClient(cfg Config) *redis.Client {
	timeout := cfg.OpTimeout()
	if timeout < time.Second {
		timeout = time.Second
	}
	return newRedisClient(cfg.StorageAddr, timeout)
}

// RegisterKey is the storage key of the register guarded by lock key.
func RegisterKey(key string) string { return "resource:" + key }

func maxTokenKey(key string) string { return "resource:" + key + ":max-token" }

// SoldOut is the Detail of an inventory critical section that found the
// stock at zero and sold nothing.
const SoldOut = "sold out"

// think waits d, the critical section's think time between its read and
// its write, or until ctx ends: then nothing was written, which is certain.
func think(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return Definite(ctx.Err())
	case <-t.C:
		return nil
	}
}

// CriticalSection runs one read-think-write. It returns ErrRejected (with a
// value naming the refused access) when fencing refused the token. check,
// when not nil, is asked right before the read and right before the write;
// an error from it ends the critical section with no effect. With the
// inventory workload, a stock of zero ends it after the read with no write
// and Detail SoldOut.
func (r *Resource) CriticalSection(ctx context.Context, key string, token int64, check func() error) (*history.Value, error) {
	keys := []string{RegisterKey(key), maxTokenKey(key)}
	val := &history.Value{Token: token}
	if check == nil {
		check = func() error { return nil }
	}
	if err := check(); err != nil {
		return val, Definite(err)
	}
	read, err := r.read(ctx, keys, token, val)
	if err != nil {
		return val, err
	}
	val.Read = history.Int64(read)
	next := read + 1
	if r.inventory {
		if read <= 0 {
			val.Mut().Detail = SoldOut
			return val, nil
		}
		next = read - 1
	}
	val.Wrote = history.Int64(next)
	if err := think(ctx, r.think); err != nil {
		return val, err
	}
	if err := check(); err != nil {
		return val, Definite(err)
	}
	if r.sent != nil {
		r.sent(key, token)
	}
	return val, r.write(ctx, keys, token, next, val)
}

// read reads the register, through the fencing script when fenced; a
// refusal sets val.Rejected and MaxToken and returns ErrRejected.
func (r *Resource) read(ctx context.Context, keys []string, token int64, val *history.Value) (int64, error) {
	if !r.fenced {
		v, err := r.c.Get(ctx, keys[0]).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return 0, Definite(fmt.Errorf("read %s: %w", keys[0], err))
		}
		return v, nil
	}
	res, err := fencedRead.Run(ctx, r.c, keys, token).Int64Slice()
	if err != nil {
		return 0, Definite(fmt.Errorf("fenced read of %s: %w", keys[0], err))
	}
	if res[0] == 0 {
		val.Mut().Rejected, val.Mut().MaxToken = "read", res[1]
		return 0, ErrRejected
	}
	return res[1], nil
}

// write sets the register to v, through the fencing script when fenced; a
// refusal sets val.Rejected and MaxToken and returns ErrRejected.
func (r *Resource) write(ctx context.Context, keys []string, token, v int64, val *history.Value) error {
	if !r.fenced {
		if err := r.c.Set(ctx, keys[0], v, 0).Err(); err != nil {
			return fmt.Errorf("write %s: %w", keys[0], err)
		}
		return nil
	}
	res, err := fencedWrite.Run(ctx, r.c, keys, token, v).Int64Slice()
	if err != nil {
		return fmt.Errorf("fenced write of %s: %w", keys[0], err)
	}
	if res[0] == 0 {
		val.Mut().Rejected, val.Mut().MaxToken = "write", res[1]
		return ErrRejected
	}
	return nil
}

// Seed sets the register guarded by key to v and forgets the highest token
// it has seen: the inventory workload's initial stock, set by the
// controller before the workers start.
func (r *Resource) Seed(ctx context.Context, key string, v int64) error {
	if err := r.c.Set(ctx, RegisterKey(key), v, 0).Err(); err != nil {
		return fmt.Errorf("seed %s: %w", RegisterKey(key), err)
	}
	if err := r.c.Del(ctx, maxTokenKey(key)).Err(); err != nil {
		return fmt.Errorf("seed %s: %w", maxTokenKey(key), err)
	}
	return nil
}

// Value reads the register guarded by key without fencing (0 when unset):
// the inventory's final stock, read by the controller after the workers
// stopped.
func (r *Resource) Value(ctx context.Context, key string) (int64, error) {
	v, err := r.c.Get(ctx, RegisterKey(key)).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("read %s: %w", RegisterKey(key), err)
	}
	return v, nil
}

// Close releases the connection to the storage node.
func (r *Resource) Close() error { return r.c.Close() }
