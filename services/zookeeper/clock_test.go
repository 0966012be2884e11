package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestZooKeeperClockShim runs a standalone ZooKeeper under the clock shim:
// an hour's jump of its wall clock shows in the ctime of the next znode (the
// JVM reads CLOCK_REALTIME through libc, so the shim reaches it), and a
// session with a 2 s timeout outlives 3 s of the jump, because ZooKeeper
// times sessions on the monotonic clock (M10 in docs/verdicts.md).
func TestZooKeeperClockShim(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	z := New(Config{Nodes: 1, Workers: 1, LogDir: t.TempDir(), ClockShim: true})
	if err := z.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer z.Teardown(ctx)
	conn, events, err := zk.Connect(z.LockAddrs(0), 2*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	createWhenServing(t, conn, "/serving")
	ctime := func(path string) time.Time {
		t.Helper()
		if _, err := conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
		_, st, err := conn.Get(path)
		if err != nil {
			t.Fatalf("get %s: %v", path, err)
		}
		return time.UnixMilli(st.Ctime)
	}
	if d := time.Since(ctime("/before")); d > time.Minute || d < -time.Minute {
		t.Fatalf("before the jump the znode's ctime is %s off the real time", d)
	}
	if err := z.SetClockOffset(ctx, "zk1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(ctime("/after")); d < 59*time.Minute {
		t.Fatalf("after a 1 h jump the znode's ctime is only %s ahead: the shim did not reach the JVM", d)
	}
	time.Sleep(3 * time.Second) // longer than the session timeout
	if _, err := conn.Create("/still", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("the session did not survive a wall-clock jump: %v", err)
	}
	for {
		select {
		case e := <-events:
			if e.State == zk.StateExpired {
				t.Fatal("the session expired after a wall-clock jump")
			}
			continue
		default:
		}
		break
	}
}
