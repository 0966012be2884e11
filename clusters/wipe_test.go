package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
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
	if _, err := LookZooKeeper(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	z := NewZooKeeper(ZooKeeperConfig{Nodes: 3, Workers: 1, LogDir: t.TempDir()})
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
	before := snapshotsTaken(t, m.logPath)
	if err := z.RestartEmpty(ctx, leader); err != nil {
		t.Fatal(err)
	}
	if mode, err := Mode(m.ClientAddr()); err != nil || (mode != "follower" && mode != "leader") {
		t.Fatalf("%s after restart-empty: mode %q, %v", leader, mode, err)
	}
	if after := snapshotsTaken(t, m.logPath); after <= before {
		t.Errorf("%s took %d full snapshots from the leader before, %d after: want one more (it came back empty)", leader, before, after)
	}
	// The restarted member alone serves the tree it synced.
	own, _, err := zk.Connect([]string{m.ClientAddr()}, 2*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	err = Poll(ctx, patientWait, func() error {
		_, _, err := own.Get("/probe")
		return err
	}, "read /probe from "+leader)
	if err != nil {
		t.Errorf("%s does not serve /probe after restart-empty: %v", leader, err)
	}
}

// TestSentinelRestartEmpty restarts the master of a real Sentinel topology
// (append-only file, fsync always) with its data gone, before the
// sentinels judge it down: it comes back an empty master, and its replicas,
// which held the key, resync from it and lose it too (the Redis
// replication docs' warning about a master with persistence turned off).
func TestSentinelRestartEmpty(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := NewSentinel(SentinelConfig{Workers: 1, LogDir: t.TempDir(), Persist: true})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Teardown(context.Background())
	master, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := nodeClient(s.redis[0].Addr())
	defer c.Close()
	if err := c.Set(ctx, "k0", "p1-a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Every replica has the key before the restart.
	for _, r := range s.redis[1:] {
		err := Poll(ctx, 20*time.Second, func() error {
			ks, err := redisKeys(ctx, r.Addr())
			if err == nil && ks["k0"] != "p1-a" {
				err = errors.New("no k0 yet")
			}
			return err
		}, r.Name+" replicates k0")
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RestartEmpty(ctx, master); err != nil {
		t.Fatal(err)
	}
	if now, err := s.Leader(ctx); err != nil || now != master {
		t.Fatalf("master after restart-empty: %q, %v; want %s still", now, err, master)
	}
	for _, r := range s.redis {
		err := Poll(ctx, 30*time.Second, func() error {
			ks, err := redisKeys(ctx, r.Addr())
			if err == nil && len(ks) != 0 {
				err = fmt.Errorf("holds %v", ks)
			}
			return err
		}, r.Name+" empty")
		if err != nil {
			t.Errorf("%s after the master's restart-empty: %v", r.Name, err)
		}
	}
}
