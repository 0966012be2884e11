package zookeeper

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// waitLeader waits until some node other than not reports itself leader,
// asking every node (a cut-off old leader may still claim to lead).
func waitLeader(t *testing.T, z *Cluster, not string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, n := range z.nodes {
			if m, err := Mode(n.ClientAddr()); err == nil && m == "leader" && n.Name != not {
				return n.Name
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no leader other than %q within %s", not, within)
	return ""
}

func TestZooKeeperEnsemble(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	logDir := t.TempDir()
	if d := os.Getenv("LOCKCHECK_KEEP_LOGS"); d != "" {
		logDir = d // keep the node logs of a failing run
	}
	z := New(Config{Nodes: 3, Workers: 1, LogDir: logDir})
	start := time.Now()
	if err := z.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("three-node ensemble ready in %s", time.Since(start).Round(time.Millisecond))
	pids := z.Pids()
	defer func() {
		if err := z.Teardown(ctx); err != nil {
			t.Error(err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	}()
	if len(pids) != 4 {
		t.Fatalf("want 3 JVMs and a storage node, got %v", pids)
	}
	leader, err := z.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := zk.Connect(z.LockAddrs(0), 2*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	createWhenServing(t, conn, "/probe")

	// Isolate (partition-leader) is not tested here yet: in about one run in
	// seven the node found as leader and the nodes' own logs disagree, and
	// no new leader shows within 20 s. Open problem, see docs/verdicts.md.
	t.Run("killed leader is replaced and restarts", func(t *testing.T) {
		if err := z.Kill(ctx, leader); err != nil {
			t.Fatal(err)
		}
		waitLeader(t, z, leader, clustertest.PatientWait)
		if err := z.Restart(ctx, leader); err != nil {
			t.Fatal(err)
		}
		pids = z.Pids()
		if _, _, err := conn.Get("/probe"); err != nil {
			t.Errorf("read after restart: %v", err)
		}
	})
}

// createWhenServing creates path through conn, retrying while the client
// is still connecting: on a loaded machine the first handshakes with a
// fresh ensemble can fail ("authentication failed: EOF", then "could not
// connect to a server") before one succeeds.
func createWhenServing(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	err := clusters.Poll(context.Background(), clustertest.PatientWait, func() error {
		_, err := conn.Create(path, []byte("x"), 0, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) {
			return nil // an earlier try took effect after its reply was lost
		}
		return err
	}, "create "+path)
	if err != nil {
		t.Fatalf("create through the proxies: %v", err)
	}
}
