package workloads

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

func TestMappedDialerRefusesUnmapped(t *testing.T) {
	dial := mappedDialer(map[string]string{"127.0.0.1:1": "127.0.0.1:2"}, 100*time.Millisecond)
	_, err := dial(context.Background(), "tcp", "127.0.0.1:3")
	if err == nil || Classify(err) != history.Fail {
		t.Fatalf("unmapped address: %v (%s), want a definite dial failure", err, Classify(err))
	}
}

// TestSentinelLockSplitBrain runs the redis-sentinel lock on the Sentinel
// topology: mutual exclusion while healthy; then the master is cut off with
// slot 0 on its side, and after the promotion both slots are granted the
// same lock, one by each master.
func TestSentinelLockSplitBrain(t *testing.T) {
	ctx := context.Background()
	s := redisnode.NewSentinel(redisnode.SentinelConfig{Workers: 2, LogDir: t.TempDir()})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Teardown(ctx)
	cfg := func(slot int) Config {
		l := s.SentinelLinks(slot)
		return Config{Protocol: ProtocolVersion, Lock: "redis-sentinel", Process: slot, Seed: 1,
			LockAddrs: s.LockAddrs(slot), StorageAddr: s.StorageAddr(),
			DiscoveryAddrs: l.Addrs, MasterName: l.MasterName, AddrMap: l.AddrMap,
			LeaseMS: 10000, AcquireTimeoutMS: 100, RetryMS: 10, ThinkMS: 1, OpTimeoutMS: 300}
	}
	a, b := newClient(t, cfg(0)), newClient(t, cfg(1))
	g, err := a.Acquire(ctx, "k")
	if err != nil || g.Token != 1 {
		t.Fatalf("first acquire: %+v %v", g, err)
	}
	if _, err := b.Acquire(ctx, "k"); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("second acquire while held: %v, want not acquired", err)
	}
	if v, err := a.Release(ctx, "k", g); err != nil || !*v.Released {
		t.Fatalf("release: %+v %v", v, err)
	}

	if err := s.CutMaster(ctx, "redis0", []int{0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitPromotion(ctx, "redis0", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	ga, err := a.Acquire(ctx, "k2")
	if err != nil {
		t.Fatalf("slot 0 on the old master: %v", err)
	}
	// Slot 1's pooled connection to the old master hangs until the
	// client hears of the new master; bounded retries.
	var gb Grant
	for try := 0; ; try++ {
		if gb, err = b.Acquire(ctx, "k2"); err == nil {
			break
		}
		if try == 20 {
			t.Fatalf("slot 1 never reached the new master: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("split brain: slot 0 holds k2 (token %d) on the old master, slot 1 (token %d) on the new one", ga.Token, gb.Token)
	if err := s.HealMaster(ctx); err != nil {
		t.Fatal(err)
	}
}
