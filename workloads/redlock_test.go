package workloads

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

func TestRedlockValidity(t *testing.T) {
	tests := []struct {
		lease, elapsed, want time.Duration
	}{
		{time.Second, 0, time.Second - 12*time.Millisecond},
		{time.Second, 100 * time.Millisecond, 888 * time.Millisecond},
		{time.Second, 988 * time.Millisecond, 0},
		{10 * time.Second, 3 * time.Second, 10*time.Second - 3*time.Second - 102*time.Millisecond},
		{100 * time.Millisecond, 200 * time.Millisecond, -103 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := redlockValidity(tt.lease, tt.elapsed); got != tt.want {
			t.Errorf("validity(lease %s, elapsed %s) = %s, want %s", tt.lease, tt.elapsed, got, tt.want)
		}
	}
}

func TestRedlockNodeTimeout(t *testing.T) {
	tests := []struct {
		lease, op int64
		want      time.Duration
	}{
		{1000, 500, 100 * time.Millisecond},
		{20, 500, 5 * time.Millisecond},
		{10000, 500, 500 * time.Millisecond},
		{10000, 0, time.Second},
	}
	for _, tt := range tests {
		if got := redlockNodeTimeout(Config{LeaseMS: tt.lease, OpTimeoutMS: tt.op}); got != tt.want {
			t.Errorf("lease %d op %d: %s, want %s", tt.lease, tt.op, got, tt.want)
		}
	}
}

// startRedlock starts five lock nodes with two worker slots.
func startRedlock(t *testing.T) *redisnode.Redis {
	t.Helper()
	r := redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 5, Workers: 2, LogDir: t.TempDir()})
	if err := r.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Teardown(context.Background()) })
	return r
}

// keyOn reports which nodes hold key.
func keyOn(t *testing.T, r *redisnode.Redis, key string) []string {
	t.Helper()
	var on []string
	for _, n := range r.Nodes() {
		if n.Role != "lock" {
			continue
		}
		c := newRedisClient(n.Addr, 200*time.Millisecond)
		ok, err := c.Exists(context.Background(), key).Result()
		c.Close()
		if err != nil {
			continue // a node that is down holds nothing we can see
		}
		if ok == 1 {
			on = append(on, n.Name)
		}
	}
	return on
}

func TestRedlock(t *testing.T) {
	r := startRedlock(t)
	ctx := context.Background()
	clockFile := filepath.Join(t.TempDir(), "clock")
	// A lease long enough that no key expires during the test.
	cfgA, cfgB := testConfig(r, "redlock", 0), testConfig(r, "redlock", 1)
	cfgA.LeaseMS, cfgB.LeaseMS = 5000, 5000
	cfgA.ClockFile = clockFile
	a := newClient(t, cfgA)
	b := newClient(t, cfgB)

	g1, err := a.Acquire(ctx, "k")
	if err != nil || g1.Token != 0 || len(g1.Nodes) != 5 {
		t.Fatalf("first acquire: %+v %v, want all five nodes and no token", g1, err)
	}
	if err := a.(Validator).Valid("k"); err != nil {
		t.Fatalf("valid right after the grant: %v", err)
	}
	if _, err := b.Acquire(ctx, "k"); !errors.Is(err, ErrNotAcquired) || Classify(err) != history.Fail {
		t.Fatalf("second acquire while held: %v, want a fail with ErrNotAcquired", err)
	}
	if on := keyOn(t, r, "k"); len(on) != 5 {
		t.Fatalf("key on %v: a failed acquire must delete only its own keys", on)
	}
	// The client's clock jumps past the lease: the client stops trusting
	// the lock, though every node still holds it.
	if err := WriteClockSetting(clockFile, ClockSetting{Offset: 6 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := a.(Validator).Valid("k"); err == nil || !strings.Contains(err.Error(), "validity of k passed") {
		t.Fatalf("valid after the client's clock passed the lease: %v", err)
	}
	v, err := a.Release(ctx, "k", g1)
	if err != nil || !*v.Released || len(v.Ext().Nodes) != 5 {
		t.Fatalf("release: %+v %v", v, err)
	}
	if err := a.(Validator).Valid("k"); err == nil {
		t.Fatal("valid after release")
	}

	// Slot 0 cut off from lock3 and lock4 only (PartitionNodes): its
	// requests there hang until the node timeout, and it locks the other
	// three, while slot 1 still reaches all five.
	if err := r.PartitionNodes(ctx, 0, []string{"lock3", "lock4"}); err != nil {
		t.Fatal(err)
	}
	g, err := a.Acquire(ctx, "p")
	if err != nil || strings.Join(g.Nodes, ",") != "lock0,lock1,lock2" {
		t.Fatalf("acquire cut off from lock3 and lock4: %+v %v", g, err)
	}
	if on := keyOn(t, r, "p"); strings.Join(on, ",") != "lock0,lock1,lock2" {
		t.Fatalf("key on %v", on)
	}
	if err := r.Heal(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Release(ctx, "p", g); err != nil || !*v.Released {
		t.Fatalf("release after heal: %+v %v", v, err)
	}

	// Two nodes down: a majority of three still grants.
	for _, n := range []string{"lock3", "lock4"} {
		if err := r.Kill(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	g2, err := b.Acquire(ctx, "k")
	if err != nil || strings.Join(g2.Nodes, ",") != "lock0,lock1,lock2" {
		t.Fatalf("acquire with two nodes down: %+v %v", g2, err)
	}
	v, err = b.Release(ctx, "k", g2)
	if err != nil || !*v.Released {
		t.Fatalf("release with two nodes down: %+v %v", v, err)
	}
	// Three down: no majority, and the two that set the key lose it again.
	if err := r.Kill(ctx, "lock2"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "k"); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("acquire with three nodes down: %v, want not acquired", err)
	}
	if on := keyOn(t, r, "k"); len(on) != 0 {
		t.Errorf("key left on %v after a minority acquire", on)
	}
	for _, n := range []string{"lock2", "lock3", "lock4"} {
		if err := r.Restart(ctx, n); err != nil {
			t.Fatal(err)
		}
	}

	// A client whose clock runs 1000 times fast sees every acquire round
	// take longer than the lease (as a client paused while the replies were
	// in flight does): never granted, and it cleans up after itself.
	cfgC := testConfig(r, "redlock", 0)
	cfgC.LeaseMS, cfgC.ClockFile = 100, clockFile
	c := newClient(t, cfgC)
	if err := WriteClockSetting(clockFile, ClockSetting{Rate: 1000, Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(ctx, "k2"); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("acquire whose round outlasts the lease by the client's clock: %v, want not acquired", err)
	}
	// The round undoes its SETs within the node timeout (10 ms here). On a
	// loaded machine a SET that timed out at the client may land after the
	// undo: then the key must be one that expires with its lease, never a
	// key that stays.
	if on := keyGoneWithin(t, r, "k2", 100*time.Millisecond+2*time.Second); len(on) != 0 {
		t.Errorf("key left on %v after an expired round, and still there after its lease", on)
	}
}

// keyGoneWithin waits up to d until key is on no lock node, and returns the
// nodes that still hold it then.
func keyGoneWithin(t *testing.T, r *redisnode.Redis, key string, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		on := keyOn(t, r, key)
		if len(on) == 0 || time.Now().After(deadline) {
			return on
		}
		time.Sleep(10 * time.Millisecond)
	}
}
