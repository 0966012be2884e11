package zookeeper

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// snapshotsTaken counts the times a ZooKeeper server's log says it took a
// full snapshot from the leader (what a member with no data gets, where
// one that kept its data gets a diff).
func snapshotsTaken(t *testing.T, logPath string) int {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "Getting a snapshot from leader")
}

// TestZooKeeperRestartEmpty restarts the leader of a real three-server
// ensemble with its data directory wiped: it must come back serving, sync
// the whole tree from the new leader (a full snapshot, which a member with
// its data does not need) and serve the znode created before.
func TestZooKeeperRestartEmpty(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	z := New(Config{Nodes: 3, Workers: 1, LogDir: t.TempDir()})
	if err := z.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer z.Teardown(context.Background())
	conn, _, err := zk.Connect(z.LockAddrs(0), 2*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	createWhenServing(t, conn, "/probe")
	leader, err := z.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i, _ := z.NodeSet.Index(leader)
	m := z.nodes[i]
	before := snapshotsTaken(t, m.LogPath)
	if err := z.RestartEmpty(ctx, leader); err != nil {
		t.Fatal(err)
	}
	if mode, err := Mode(m.ClientAddr()); err != nil || (mode != "follower" && mode != "leader") {
		t.Fatalf("%s after restart-empty: mode %q, %v", leader, mode, err)
	}
	if after := snapshotsTaken(t, m.LogPath); after <= before {
		t.Errorf("%s took %d full snapshots from the leader before, %d after: want one more (it came back empty)", leader, before, after)
	}
	// The restarted member alone serves the tree it synced.
	own, _, err := zk.Connect([]string{m.ClientAddr()}, 2*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	err = clusters.Poll(ctx, clustertest.PatientWait, func() error {
		_, _, err := own.Get("/probe")
		return err
	}, "read /probe from "+leader)
	if err != nil {
		t.Errorf("%s does not serve /probe after restart-empty: %v", leader, err)
	}
}
