package zookeeper

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// TestZKExpiries reads sessions' expiries from logs that grow: a line
// read whole, a line written in two parts, a log started again (a
// restart's new file), and the lines that are no expiry.
func TestZKExpiries(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "zk1.log"), filepath.Join(dir, "zk2.log")
	write := func(p, s string, appendTo bool) {
		t.Helper()
		flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if appendTo {
			flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		f, err := os.OpenFile(p, flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	x := newZKExpiries([]string{a, b})
	for _, tt := range []struct {
		name    string
		log     string
		text    string
		append  bool
		session int64
		want    bool
	}{
		{"no log yet", a, "", false, 0x1, false},
		{"an expiry, whole", a, "2026-11-27 01:00:00:000 [SessionTracker] INFO ZooKeeperServer - Expiring session 0x300003d0b8f0003, timeout of 4000ms exceeded\n", true, 0x300003d0b8f0003, true},
		{"a client's close is no expiry", a, "INFO PrepRequestProcessor - Processed session termination for sessionid: 0x5\n", true, 0x5, false},
		{"the first half of a line", b, "INFO ZooKeeperServer - Expiring session 0x10000", true, 0x100004711, false},
		{"its second half", b, "4711, timeout of 2000ms exceeded\n", true, 0x100004711, true},
		{"another log, started again", a, "INFO ZooKeeperServer - Expiring session 0xabc, timeout of 2000ms exceeded\n", false, 0xabc, true},
		{"known before the new log", a, "", true, 0x300003d0b8f0003, true},
		{"no session", a, "", true, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.text != "" || !tt.append {
				write(tt.log, tt.text, tt.append)
			}
			if got := x.has(tt.session); got != tt.want {
				t.Fatalf("has(0x%x) = %v, want %v", tt.session, got, tt.want)
			}
		})
	}
}

// TestZooKeeperObserverExpiry has a real ZooKeeper server expire a session
// that holds a lock node (its client cut off through its proxy) and close
// another's: the expired session's node is reported as gone with its
// session (lease-ended), the closed one's as deleted.
func TestZooKeeperObserverExpiry(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	z := New(Config{Nodes: 1, Workers: 2, LogDir: t.TempDir()})
	if err := z.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer z.Teardown(ctx)
	got, reads, _ := clustertest.WatchReleases(t, z, "k0")
	acl := zk.WorldACL(zk.PermAll)
	connect := func(slot int) *zk.Conn {
		t.Helper()
		c, _, err := zk.Connect(z.LockAddrs(slot), time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lock := func(c *zk.Conn) {
		t.Helper()
		if _, err := c.CreateProtectedEphemeralSequential("/lockcheck/k0/lock-", []byte("owner"), acl); err != nil {
			t.Fatal(err)
		}
		for { // until the observer has read it: a node it never saw is not reported
			select {
			case k := <-reads:
				if k == "k0" {
					return
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the observer did not read k0's node in 15 s")
			}
		}
	}
	closer := connect(1)
	for _, p := range []string{"/lockcheck", "/lockcheck/k0"} {
		if _, err := closer.Create(p, nil, 0, acl); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	probes := 0
	// A session its client closes.
	lock(closer)
	id := closer.SessionID()
	closer.Close()
	if o := clustertest.NextRelease(t, got, "k0", &probes); o.V.Ext().Release.How != history.ReleaseDeleted || o.V.Ext().Release.Lease != fmt.Sprintf("session 0x%x", id) {
		t.Fatalf("a closed session's node observed as %+v %+v", *o.V, *o.V.Ext().Release)
	}
	// A session the server expires: its client cut off.
	silent := connect(0)
	defer silent.Close()
	lock(silent)
	id = silent.SessionID()
	if err := z.Partition(ctx, 0); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = z.Heal(ctx, 0) }()
	if o := clustertest.NextRelease(t, got, "k0", &probes); o.V.Ext().Release.How != history.ReleaseLease || o.V.Ext().Release.Lease != fmt.Sprintf("session 0x%x", id) {
		t.Fatalf("an expired session's node observed as %+v %+v", *o.V, *o.V.Ext().Release)
	}
}
