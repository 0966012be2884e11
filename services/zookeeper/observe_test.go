package zookeeper

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// TestZooKeeperObserver creates and deletes lock nodes of both shapes on a
// real ZooKeeper node (an ephemeral lock node, and sequential nodes under
// a lock path), and ends a session that holds one: each deletion is
// reported once, with the node's data as owner, its czxid as token and
// its session; nothing for another key; probes with their lag.
func TestZooKeeperObserver(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	z := New(Config{Nodes: 1, Workers: 1, LogDir: t.TempDir()})
	if err := z.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer z.Teardown(ctx)
	got, reads, _ := clustertest.WatchReleases(t, z, "k0", "k1")
	c, _, err := zk.Connect(z.LockAddrs(0), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	probes := 0
	next := func(want string) clustertest.Observation { return clustertest.NextRelease(t, got, want, &probes) }
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/lockcheck", "/lockcheck/k1", "/lockcheck/k9"} {
		if _, err := c.Create(p, nil, 0, acl); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	// Wait until the observer has read key's node: a deletion it never
	// saw is not reported.
	read := func(key, p string) int64 {
		t.Helper()
		_, st, err := c.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case k := <-reads:
				if k == key {
					return st.Czxid
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("the observer did not read %s in 15 s", p)
			}
		}
	}
	// Another key's node is not reported.
	if _, err := c.Create("/lockcheck/k9/n", []byte("x"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/lockcheck/k9/n", -1); err != nil {
		t.Fatal(err)
	}
	// The ephemeral lock node itself.
	if _, err := c.Create("/lockcheck/k0", []byte("owner-a"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	cz := read("k0", "/lockcheck/k0")
	if err := c.Delete("/lockcheck/k0", -1); err != nil {
		t.Fatal(err)
	}
	o := next("k0")
	want := fmt.Sprintf("session 0x%x", c.SessionID())
	if o.V.Owner != "owner-a" || o.V.Token != cz || o.V.Ext().Release.How != history.ReleaseDeleted || o.V.Ext().Release.Lease != want {
		t.Fatalf("deletion observed as %+v %+v (want czxid %d, %s)", *o.V, *o.V.Ext().Release, cz, want)
	}
	// A sequential node under the lock path, whose session ends.
	s, _, err := zk.Connect(z.LockAddrs(0), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProtectedEphemeralSequential("/lockcheck/k1/lock-", []byte("owner-b"), acl)
	if err != nil {
		t.Fatal(err)
	}
	cz = read("k1", p)
	s.Close() // the session ends, and its node with it
	o = next("k1")
	if o.V.Owner != "owner-b" || o.V.Token != cz {
		t.Fatalf("session end observed as %+v %+v (want czxid %d)", *o.V, *o.V.Ext().Release, cz)
	}
	if probes == 0 {
		clustertest.AwaitProbe(t, got)
	}
}
