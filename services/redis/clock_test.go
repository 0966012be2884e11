package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// near reports whether got is within tol of want.
func near(got, want, tol time.Duration) bool {
	d := got - want
	return d >= -tol && d <= tol
}

// redisTime returns the TIME a redis-server reports.
func redisTime(t *testing.T, addr string) time.Time {
	t.Helper()
	got, err := clustertest.RoundTrip(addr, "TIME", clustertest.OKWait)
	if err != nil {
		t.Fatal(err)
	}
	// *2 $10 <seconds> $6 <microseconds>
	f := strings.Fields(got)
	if len(f) < 5 {
		t.Fatalf("TIME replied %q", got)
	}
	sec, err1 := strconv.ParseInt(f[2], 10, 64)
	usec, err2 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("TIME replied %q: %v", got, err)
	}
	return time.Unix(sec, usec*1000)
}

// TestClockShimRedis jumps a real redis-server's wall clock: a key with a
// 10 s PX lease survives without a jump and is gone right after a 20 s jump.
func TestClockShimRedis(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	r := NewRedis(RedisConfig{LockNodes: 1, Workers: 1, LogDir: t.TempDir(), ClockShim: true})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Teardown(ctx); err != nil {
			t.Error(err)
		}
	}()
	lock, storage := r.LockAddrs(0)[0], r.StorageAddr()
	if d := time.Until(redisTime(t, lock)); !near(d, 0, 2*time.Second) {
		t.Fatalf("lock node's TIME is %s off before any jump", d)
	}
	if got, err := clustertest.RoundTrip(lock, "SET k v PX 10000", clustertest.OKWait); err != nil || got != "+OK" {
		t.Fatalf("SET: %q %v", got, err)
	}
	time.Sleep(300 * time.Millisecond)
	if got, err := clustertest.RoundTrip(lock, "GET k", clustertest.OKWait); err != nil || got != "$1\r\nv" {
		t.Fatalf("GET without a jump: %q %v, want the key", got, err)
	}
	if err := r.SetClockOffset(ctx, "lock0", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(redisTime(t, lock)); !near(d, 20*time.Second, 2*time.Second) {
		t.Errorf("lock node's TIME is %s ahead after a 20s jump", d)
	}
	if d := time.Until(redisTime(t, storage)); !near(d, 0, 2*time.Second) {
		t.Errorf("storage node's TIME is %s off: it must not run under the shim", d)
	}
	if got, err := clustertest.RoundTrip(lock, "GET k", clustertest.OKWait); err != nil || got != "$-1" {
		t.Errorf("GET after a 20s jump: %q %v, want nil (expired)", got, err)
	}
	if err := r.SetClockOffset(ctx, "lock0", 0); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(redisTime(t, lock)); !near(d, 0, 2*time.Second) {
		t.Errorf("lock node's TIME is %s off after the reset", d)
	}
	if err := r.SetClockOffset(ctx, "storage", time.Second); err == nil {
		t.Error("SetClockOffset of the storage node: want an error")
	}
}

func TestSetClockOffsetWithoutShim(t *testing.T) {
	r := NewRedis(RedisConfig{})
	if err := r.SetClockOffset(context.Background(), "lock0", time.Second); !errors.Is(err, clusters.ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported", err)
	}
}
