package workloads

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

func startRedis(t *testing.T) *redisnode.Redis {
	t.Helper()
	r := redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 1, Workers: 2, LogDir: t.TempDir()})
	if err := r.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Teardown(context.Background()) })
	return r
}

func testConfig(r *redisnode.Redis, lock string, slot int) Config {
	return Config{Protocol: ProtocolVersion, Lock: lock, Process: slot, Seed: 1,
		LockAddrs: r.LockAddrs(slot), StorageAddr: r.StorageAddr(),
		LeaseMS: 300, AcquireTimeoutMS: 100, RetryMS: 10, ThinkMS: 1, OpTimeoutMS: 300}
}

func newClient(t *testing.T, cfg Config) Lock {
	t.Helper()
	d, err := FindDesign(cfg.Lock)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.New(cfg, rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Process))), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestRedisLocks(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	for i, d := range Designs() {
		if d.Service != "redis" || d.NoLock || d.LockNodes != 1 || !d.Tokens {
			continue // designs with no lock or many nodes have their own tests
		}
		t.Run(d.Name, func(t *testing.T) {
			key := "k" + string(rune('a'+i))
			a := newClient(t, testConfig(r, d.Name, 0))
			b := newClient(t, testConfig(r, d.Name, 1))
			g1, err := a.Acquire(ctx, key)
			if err != nil || g1.Token != 1 {
				t.Fatalf("first acquire: %+v %v", g1, err)
			}
			if _, err := b.Acquire(ctx, key); !errors.Is(err, ErrNotAcquired) || Classify(err) != history.Fail {
				t.Fatalf("second acquire while held: got %v, want a fail with ErrNotAcquired", err)
			}
			v, err := a.Release(ctx, key, g1)
			if err != nil || v.Released == nil || !*v.Released {
				t.Fatalf("release: %+v %v", v, err)
			}
			g2, err := b.Acquire(ctx, key)
			if err != nil || g2.Token != 2 {
				t.Fatalf("acquire after release: %+v %v", g2, err)
			}
			time.Sleep(400 * time.Millisecond) // the lease runs out, unless renewed
			if d.Renews {
				// The watchdog renewed b's lease: the lock is still b's.
				if _, err := a.Acquire(ctx, key); !errors.Is(err, ErrNotAcquired) {
					t.Fatalf("acquire while the watchdog renews the holder's lease: got %v, want ErrNotAcquired", err)
				}
				if v, err := b.Release(ctx, key, g2); err != nil || !*v.Released {
					t.Fatalf("release of a renewed lock: %+v %v", v, err)
				}
				return
			}
			g3, err := a.Acquire(ctx, key)
			if err != nil {
				t.Fatalf("acquire after lease expiry: %v", err)
			}
			// b still believes it holds the lock; its release shows what the
			// design does with a lock it lost.
			v, err = b.Release(ctx, key, g2)
			if err != nil {
				t.Fatal(err)
			}
			if *v.Released {
				t.Errorf("stale release claims it released its own key: %+v", v)
			}
			if d.Name == "redis-set-px" {
				if v.Ext().DeletedOwner != "" {
					t.Errorf("compare-and-delete deleted %q", v.Ext().DeletedOwner)
				}
			} else if v.Ext().DeletedOwner != g3.Owner {
				t.Errorf("plain DEL: deleted owner %q, want the new holder %q", v.Ext().DeletedOwner, g3.Owner)
			}
		})
	}
}

func TestFencedResource(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	cfg := testConfig(r, "redis-set-px", 0)
	cfg.Fencing = true
	res := NewResource(cfg)
	defer res.Close()
	v, err := res.CriticalSection(ctx, "f", 5, nil)
	if err != nil || *v.Read != 0 || *v.Wrote != 1 {
		t.Fatalf("cs token 5: %+v %v", v, err)
	}
	v, err = res.CriticalSection(ctx, "f", 4, nil)
	if !errors.Is(err, ErrRejected) || v.Ext().Rejected != "read" || v.Ext().MaxToken != 5 || Classify(err) != history.Fail {
		t.Fatalf("stale token 4: %+v %v, want a rejected read", v, err)
	}
	v, err = res.CriticalSection(ctx, "f", 5, nil)
	if err != nil || *v.Read != 1 {
		t.Fatalf("same token again: %+v %v", v, err)
	}
	unfenced := NewResource(testConfig(r, "redis-set-px", 0))
	defer unfenced.Close()
	if v, err := unfenced.CriticalSection(ctx, "u", 0, nil); err != nil || *v.Wrote != 1 {
		t.Fatalf("unfenced cs: %+v %v", v, err)
	}
}

func TestClassifyDialRefused(t *testing.T) {
	port, err := clusters.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c := newRedisClient("127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	defer c.Close()
	err = c.Ping(context.Background()).Err()
	if Classify(err) != history.Fail {
		t.Fatalf("refused connection %v classified %s, want fail", err, Classify(err))
	}
	if Classify(context.DeadlineExceeded) != history.Info {
		t.Fatal("a timeout must be info")
	}
}
