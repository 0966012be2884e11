package etcd

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// waitEtcdLeader waits until a majority of members names a leader other
// than not.
func waitEtcdLeader(t *testing.T, e *Cluster, not string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if l, err := e.Leader(context.Background()); err == nil && l != not {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no etcd leader other than %q within %s", not, within)
	return ""
}

func TestEtcdCluster(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	logDir := t.TempDir()
	if d := os.Getenv("LOCKCHECK_KEEP_LOGS"); d != "" {
		logDir = d // keep the member logs of a failing run
	}
	e := New(Config{Workers: 1, LogDir: logDir})
	start := time.Now()
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("three-member cluster ready in %s", time.Since(start).Round(time.Millisecond))
	pids := e.Pids()
	defer func() {
		if err := e.Teardown(ctx); err != nil {
			t.Error(err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	}()
	if len(pids) != 4 {
		t.Fatalf("want 3 members and a storage node, got %v", pids)
	}
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: e.LockAddrs(0), DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	put := func() error {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := c.Put(cctx, "/probe", "x")
		return err
	}
	if err := put(); err != nil {
		t.Fatalf("put through the proxies: %v", err)
	}

	t.Run("isolated leader is replaced and rejoins", func(t *testing.T) {
		if err := e.Isolate(ctx, leader); err != nil {
			t.Fatal(err)
		}
		next := waitEtcdLeader(t, e, leader, 20*time.Second)
		if err := e.Rejoin(ctx, leader); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s isolated, %s leads", leader, next)
		leader = next
	})
	t.Run("killed leader is replaced and restarts", func(t *testing.T) {
		if err := e.Kill(ctx, leader); err != nil {
			t.Fatal(err)
		}
		waitEtcdLeader(t, e, leader, 20*time.Second)
		if err := e.Restart(ctx, leader); err != nil {
			t.Fatal(err)
		}
		if err := put(); err != nil {
			t.Fatalf("put after restart: %v", err)
		}
	})
	pids = e.Pids()
}

// TestEtcdSetupCanceled cancels Setup while the members start and checks
// that it stopped every process it had started.
func TestEtcdSetupCanceled(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	e := New(Config{Workers: 1, LogDir: t.TempDir()})
	if err := e.Setup(ctx); err == nil {
		_ = e.Teardown(context.Background())
		t.Skip("the cluster was ready within 300 ms: nothing to cancel")
	}
	if pids := e.Pids(); len(pids) > 0 {
		t.Errorf("still running after a canceled Setup: %v", pids)
	}
	if _, err := os.Stat(e.DataDir); e.DataDir != "" && !os.IsNotExist(err) {
		t.Errorf("data dir %s left behind: %v", e.DataDir, err)
	}
}
