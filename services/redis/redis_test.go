package redis

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/internal/clustertest"
)

func TestRedisClusterFaults(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	r := NewRedis(RedisConfig{LockNodes: 1, Workers: 2, LogDir: t.TempDir(), Persist: true})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	pids := r.Pids()
	defer func() {
		if err := r.Teardown(ctx); err != nil {
			t.Error(err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	}()
	if len(pids) != 2 {
		t.Fatalf("want 2 server pids, got %v", pids)
	}
	a0, a1 := r.LockAddrs(0)[0], r.LockAddrs(1)[0]
	if got, err := clustertest.RoundTrip(a0, "SET k v", clustertest.OKWait); err != nil || got != "+OK" {
		t.Fatalf("SET through proxy: %q %v", got, err)
	}

	t.Run("partition hangs only the cut slot", func(t *testing.T) {
		if err := r.Partition(ctx, 0); err != nil {
			t.Fatal(err)
		}
		_, err := clustertest.RoundTrip(a0, "PING", 300*time.Millisecond)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("partitioned link: got %v, want a timeout", err)
		}
		if got, err := clustertest.RoundTrip(a1, "PING", clustertest.OKWait); err != nil || got != "+PONG" {
			t.Errorf("other slot: %q %v", got, err)
		}
		if err := r.Heal(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if got, err := clustertest.RoundTrip(a0, "PING", clustertest.OKWait); err != nil || got != "+PONG" {
			t.Errorf("healed link: %q %v", got, err)
		}
	})

	t.Run("kill refuses, restart keeps keys", func(t *testing.T) {
		if err := r.Kill(ctx, "lock0"); err != nil {
			t.Fatal(err)
		}
		_, err := clustertest.RoundTrip(a0, "PING", clustertest.OKWait)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("killed node: got %v, want connection refused", err)
		}
		if err := r.Restart(ctx, "lock0"); err != nil {
			t.Fatal(err)
		}
		pids = r.Pids()
		if got, err := clustertest.RoundTrip(a0, "GET k", clustertest.OKWait); err != nil || got != "$1\r\nv" {
			t.Errorf("GET after restart: %q %v (want the persisted key)", got, err)
		}
	})
}

// Waits in the cluster tests: for a reply that must come (clustertest.OKWait) and for
// an event the servers must bring about (clustertest.PatientWait). They bound a wait
