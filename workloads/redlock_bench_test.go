package workloads

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

// acquireLoop runs cycles acquire -> release on one key with one client of
// design lock and returns the acquire latencies and the elapsed time.
func acquireLoop(b *testing.B, r *redisnode.Redis, lock string, addrs []string, cycles int) ([]time.Duration, time.Duration) {
	b.Helper()
	cfg := Config{Protocol: ProtocolVersion, Lock: lock, Seed: 1, LockAddrs: addrs, StorageAddr: r.StorageAddr(),
		LeaseMS: 1000, AcquireTimeoutMS: 2000, RetryMS: 10, OpTimeoutMS: 500}
	d, err := FindDesign(lock)
	if err != nil {
		b.Fatal(err)
	}
	l, err := d.New(cfg, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	lat := make([]time.Duration, 0, cycles)
	start := time.Now()
	for i := 0; i < cycles; i++ {
		t0 := time.Now()
		g, err := l.Acquire(ctx, "bench")
		if err != nil {
			b.Fatalf("%s acquire %d: %v", lock, i, err)
		}
		lat = append(lat, time.Since(t0))
		if _, err := l.Release(ctx, "bench", g); err != nil {
			b.Fatalf("%s release %d: %v", lock, i, err)
		}
	}
	return lat, time.Since(start)
}

func quantileMS(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))]) / float64(time.Millisecond)
}

// BenchmarkRedlockAcquire measures RedLock's acquire latency (p50, p99) and
// grants per second with one client against five healthy masters (AOF with
// fsync always, through Toxiproxy, as in a run), and the same for a plain
// single-node SET NX PX lock (redis-set-px on lock0) in the same run; ratio
// is RedLock grants/s over single-node grants/s. Run it with
// go test -run '^$' -bench RedlockAcquire -benchtime 1x ./workloads/
func BenchmarkRedlockAcquire(b *testing.B) {
	r := redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 5, Workers: 1, LogDir: b.TempDir(), Persist: true})
	if err := r.Setup(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer r.Teardown(context.Background())
	const cycles = 2000
	for i := 0; i < b.N; i++ {
		rl, rlTime := acquireLoop(b, r, "redlock", r.LockAddrs(0), cycles)
		one, oneTime := acquireLoop(b, r, "redis-set-px", r.LockAddrs(0)[:1], cycles)
		rlRate, oneRate := cycles/rlTime.Seconds(), cycles/oneTime.Seconds()
		b.ReportMetric(quantileMS(rl, 0.50), "redlock-p50-ms")
		b.ReportMetric(quantileMS(rl, 0.99), "redlock-p99-ms")
		b.ReportMetric(rlRate, "redlock-grants/s")
		b.ReportMetric(quantileMS(one, 0.50), "single-p50-ms")
		b.ReportMetric(quantileMS(one, 0.99), "single-p99-ms")
		b.ReportMetric(oneRate, "single-grants/s")
		b.ReportMetric(rlRate/oneRate, "ratio")
	}
}
