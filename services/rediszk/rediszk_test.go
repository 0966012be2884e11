package rediszk

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
	"github.com/lockcheck/lockcheck/services/zookeeper"
)

// TestRedisZK starts the combined topology on a standalone ZooKeeper server
// and checks that it lists both parts in the documented order and sends
// each fault to the part that owns the node.
func TestRedisZK(t *testing.T) {
	if _, err := zookeeper.Look(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	c := New(Config{Nodes: 1, Workers: 2, LogDir: t.TempDir()})
	if err := c.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	pids := c.Pids()
	defer func() {
		if err := c.Teardown(ctx); err != nil {
			t.Error(err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	}()
	var names []string
	for _, n := range c.Nodes() {
		names = append(names, n.Name+"/"+n.Role)
	}
	if want := []string{"lock0/lock", "zk1/lock", "storage/storage"}; !reflect.DeepEqual(names, want) {
		t.Errorf("nodes %v, want %v", names, want)
	}
	if len(pids) != 3 {
		t.Errorf("want 3 server pids, got %v", pids)
	}
	if got := c.PartNodes(PartRedis); !reflect.DeepEqual(got, []string{"lock0"}) {
		t.Errorf("redis part %v", got)
	}
	if got := c.PartNodes(PartZooKeeper); !reflect.DeepEqual(got, []string{"zk1"}) {
		t.Errorf("zookeeper part %v", got)
	}
	if l, err := c.Leader(ctx); err != nil || l != "zk1" {
		t.Errorf("leader %q %v, want zk1", l, err)
	}
	addrs := c.LockAddrs(0)
	if len(addrs) != 2 {
		t.Fatalf("lock addresses %v, want the Redis node's then the ZooKeeper server's", addrs)
	}
	if got, err := clustertest.RoundTrip(addrs[0], "PING", clustertest.OKWait); err != nil || got != "+PONG" {
		t.Errorf("first address is not Redis: %q %v", got, err)
	}
	if m, err := zookeeper.Mode(addrs[1]); err != nil || m != "standalone" {
		t.Errorf("second address is not ZooKeeper: %q %v", m, err)
	}
	if err := c.PauseNode(ctx, "lock0"); !errors.Is(err, clusters.ErrUnsupported) {
		t.Errorf("pause of the Redis node: %v, want unsupported", err)
	}

	t.Run("partition cuts both parts", func(t *testing.T) {
		if err := c.Partition(ctx, 0); err != nil {
			t.Fatal(err)
		}
		var ne net.Error
		if _, err := clustertest.RoundTrip(addrs[0], "PING", 300*time.Millisecond); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("redis link: got %v, want a timeout", err)
		}
		if _, err := zookeeper.Mode(addrs[1]); err == nil {
			t.Error("zookeeper link still answers")
		}
		if got, err := clustertest.RoundTrip(c.LockAddrs(1)[0], "PING", clustertest.OKWait); err != nil || got != "+PONG" {
			t.Errorf("other slot: %q %v", got, err)
		}
		if err := c.Heal(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if got, err := clustertest.RoundTrip(addrs[0], "PING", clustertest.OKWait); err != nil || got != "+PONG" {
			t.Errorf("healed redis link: %q %v", got, err)
		}
	})

	t.Run("kill goes to the Redis part by name", func(t *testing.T) {
		if err := c.Kill(ctx, "lock0"); err != nil {
			t.Fatal(err)
		}
		if _, err := clustertest.RoundTrip(addrs[0], "PING", clustertest.OKWait); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("killed node: got %v, want connection refused", err)
		}
		if m, err := zookeeper.Mode(addrs[1]); err != nil || m != "standalone" {
			t.Errorf("ZooKeeper after the Redis kill: %q %v", m, err)
		}
		if err := c.Restart(ctx, "lock0"); err != nil {
			t.Fatal(err)
		}
		pids = c.Pids()
		if got, err := clustertest.RoundTrip(addrs[0], "PING", clustertest.OKWait); err != nil || got != "+PONG" {
			t.Errorf("restarted node: %q %v", got, err)
		}
	})
}

// TestRedisZKFailedSetup makes the ZooKeeper part fail to start (its log
// directory cannot be made) and checks that the Redis part, already
// running, was torn down too.
func TestRedisZKFailedSetup(t *testing.T) {
	if _, err := zookeeper.Look(); err != nil {
		t.Skip(err)
	}
	logDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logDir, PartZooKeeper), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := New(Config{Nodes: 1, Workers: 1, LogDir: logDir})
	err := c.Setup(context.Background())
	if err == nil || !strings.Contains(err.Error(), "zookeeper part") {
		t.Fatalf("setup: %v, want the ZooKeeper part's error", err)
	}
	if c.redis.DataDir == "" {
		t.Fatal("the Redis part never started")
	}
	if _, err := os.Stat(c.redis.DataDir); !os.IsNotExist(err) {
		t.Errorf("the Redis part's data directory %s is left: %v", c.redis.DataDir, err)
	}
	if pids := c.redis.Pids(); len(pids) > 0 {
		t.Errorf("the Redis part of the failed setup still runs: %v", pids)
	}
}
