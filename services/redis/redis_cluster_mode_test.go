package redis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// TestRedisClusterFailover sets up the six-node Redis clusters.Cluster (every slot
// covered), cuts the master of lock0's slot off with worker slot 0 on its
// side, and checks that its replica takes over, that both masters take
// writes for the slot (split brain) and the new one has none of the old
// one's writes since the cut, that the old master rejoins as a replica on
// heal, and that Teardown leaves no process.
func TestRedisClusterFailover(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	logDir := t.TempDir()
	c := NewRedisCluster(RedisClusterConfig{Workers: 2, LogDir: logDir, Persist: true})
	start := time.Now()
	if err := c.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("ready in %s", time.Since(start).Round(time.Millisecond))
	pids := c.Pids()
	defer func() {
		if err := c.Teardown(ctx); err != nil {
			t.Error(err)
		}
		if err := c.Teardown(ctx); err != nil {
			t.Errorf("second Teardown: %v", err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	}()
	if len(pids) != 7 {
		t.Fatalf("want 7 processes (6 cluster nodes, storage), got %v", pids)
	}
	for j := range c.nodes {
		got, err := clustertest.RoundTrip(c.LockAddrs(1)[j], "CLUSTER INFO", clustertest.OKWait)
		if err != nil || !strings.Contains(got, "cluster_state:ok") || !strings.Contains(got, "cluster_slots_ok:16384") {
			t.Fatalf("CLUSTER INFO of redis%d through slot 1: %q %v", j, got, err)
		}
	}
	if m := c.AddrMap(0); len(m) != 6 || m[c.peer[2]] != c.LockAddrs(0)[2] {
		t.Fatalf("AddrMap(0) = %v: want the six peer proxies mapped to slot 0's proxies", m)
	}
	old, err := c.KeyLeader(ctx, "lock0")
	if err != nil {
		t.Fatal(err)
	}
	oj, _, _ := c.node(old)
	if err := c.CutMaster(ctx, old, []int{0}); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	if got, err := clustertest.RoundTrip(c.LockAddrs(0)[oj], "SET lock0 lost", clustertest.OKWait); err != nil || got != "+OK" {
		t.Fatalf("slot 0 must still reach the old master %s: %q %v", old, got, err)
	}
	if _, err := clustertest.RoundTrip(c.LockAddrs(1)[oj], "PING", 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("slot 1 reached the old master during the cut: %v", err)
	}
	promoted, err := c.WaitPromotion(ctx, old, clustertest.PatientWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s took over from %s %s after the cut", promoted, old, time.Since(cut).Round(time.Millisecond))
	pj, newServer, _ := c.node(promoted)
	_, oldServer, _ := c.node(old)
	// The takeover must claim the slots at a higher config epoch than the
	// old master's, or the old master may win them back on heal.
	oe, ne := myEpoch(t, oldServer.Addr()), myEpoch(t, newServer.Addr())
	t.Logf("config epochs: %s %d, %s %d", old, oe, promoted, ne)
	if ne <= oe {
		t.Errorf("%s took over at config epoch %d, not above %s's %d", promoted, ne, old, oe)
	}
	if got, err := clustertest.RoundTrip(c.LockAddrs(1)[pj], "GET lock0", clustertest.OKWait); err != nil || got != "$-1" {
		t.Errorf("the new master has the write made after the cut: %q %v", got, err)
	}
	if got, err := clustertest.RoundTrip(c.LockAddrs(1)[pj], "SET lock0 new", clustertest.OKWait); err != nil || got != "+OK" {
		t.Errorf("the new master refuses writes: %q %v", got, err)
	}
	if got, err := clustertest.RoundTrip(c.LockAddrs(0)[oj], "SET lock0 still", clustertest.OKWait); err != nil || got != "+OK" {
		t.Errorf("the old master refuses writes during the cut (no split brain): %q %v", got, err)
	}
	if err := c.HealMaster(ctx); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	// The old master is demoted on heal (what the failover nemesis's heal
	// means). Its resynchronisation from the new master is Redis's own
	// business: it is logged, and a slow one (once, in a CI run with the
	// database tests' fsyncs beside it) does not fail the test.
	if err := clusters.Poll(ctx, clustertest.PatientWait, func() error {
		info, err := clustertest.RoundTrip(oldServer.Addr(), "INFO replication", clustertest.OKWait)
		if err != nil {
			return err
		}
		if !strings.Contains(info, "role:slave") {
			return fmt.Errorf("%s is still a master", old)
		}
		return nil
	}, old+" demoted"); err != nil {
		for _, n := range []string{old, promoted} {
			_, r, _ := c.node(n)
			info, ierr := clustertest.RoundTrip(r.Addr(), "INFO replication", clustertest.OKWait)
			t.Logf("%s: INFO replication %q %v", n, info, ierr)
			if b, rerr := os.ReadFile(filepath.Join(logDir, n+".log")); rerr == nil {
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("%s.log, last lines:\n%s", n, strings.Join(lines[max(0, len(lines)-25):], "\n"))
			}
		}
		t.Fatal(err)
	}
	if err := c.WaitReplica(ctx, old, clustertest.OKWait); err != nil {
		t.Logf("demoted, but not yet in sync with %s: %v", promoted, err)
	}
	t.Logf("%s a replica again %s after the heal", old, time.Since(healed).Round(time.Millisecond))
	if got, err := clustertest.RoundTrip(c.LockAddrs(0)[pj], "GET lock0", clustertest.OKWait); err != nil || got != "$3\r\nnew" {
		t.Errorf("after the heal lock0 on %s is %q %v, want new", promoted, got, err)
	}
}

// myEpoch reads cluster_my_epoch from the node at addr.
func myEpoch(t *testing.T, addr string) int {
	t.Helper()
	info, err := clustertest.RoundTrip(addr, "CLUSTER INFO", clustertest.OKWait)
	if err != nil {
		t.Fatalf("CLUSTER INFO of %s: %v", addr, err)
	}
	_, rest, ok := strings.Cut(info, "cluster_my_epoch:")
	if !ok {
		t.Fatalf("CLUSTER INFO of %s has no cluster_my_epoch: %q", addr, info)
	}
	e, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\r\n", 2)[0]))
	if err != nil {
		t.Fatalf("cluster_my_epoch of %s: %v", addr, err)
	}
	return e
}

// TestRedisClusterSetupInterrupted cancels a Redis clusters.Cluster setup half-way
// (before the cluster can be ready) and checks that Setup fails and leaves
// no server process and no data directory behind.
func TestRedisClusterSetupInterrupted(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	c := NewRedisCluster(RedisClusterConfig{Workers: 1, LogDir: t.TempDir()})
	if err := c.Setup(ctx); err == nil {
		_ = c.Teardown(context.Background())
		t.Skip("the cluster was ready within 1.5 s: nothing was interrupted")
	}
	if c.DataDir == "" || len(c.nodes) == 0 || c.nodes[0].Port == 0 {
		t.Fatal("Setup failed before it started a server: nothing was interrupted")
	}
	if pids := c.Pids(); len(pids) != 0 {
		t.Errorf("server processes still running after the interrupted setup: %v", pids)
	}
	if left := childServers(); len(left) != 0 {
		t.Errorf("redis-server children left after the interrupted setup: %v", left)
	}
	if _, err := os.Stat(c.DataDir); !os.IsNotExist(err) {
		t.Errorf("data directory %s left behind (%v)", c.DataDir, err)
	}
}

// childServers returns the redis-server processes whose parent is this
// test process (redis-server rewrites its command line, so its name is
// what tells it).
func childServers() []string {
	self := strconv.Itoa(os.Getpid())
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		st := string(b)
		i := strings.LastIndexByte(st, ')')
		f := strings.Fields(st[i+1:])
		if len(f) > 1 && f[1] == self && f[0] != "Z" && strings.Contains(st[:i], "redis-server") {
			out = append(out, e.Name())
		}
	}
	return out
}
