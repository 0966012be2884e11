package etcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

func TestEtcdLockOf(t *testing.T) {
	for _, tt := range []struct {
		key, want string
		ok        bool
	}{
		{"/lockcheck/k0/694d81a1", "k0", true},
		{"/lockcheck/a/b/694d", "a/b", true},
		{"/lockcheck/k0", "", false},
		{"/lockcheck//694d", "", false},
		{etcdProbeKey, "", false},
		{"/other/k0/694d", "", false},
	} {
		if got, ok := etcdLockOf(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("etcdLockOf(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

// TestEtcdObserver deletes a lock key and revokes another's lease on a
// real etcd member, and checks what the observer reports: a deletion and
// an ended lease, each with its owner (the key), token (create revision)
// and lease, nothing for keys of other locks, and probes with their lag.
func TestEtcdObserver(t *testing.T) {
	ctx := context.Background()
	e := oneEtcdMember(t)
	got, _, _ := clustertest.WatchReleases(t, e, "k0")
	c, err := clientv3.New(clientv3.Config{Endpoints: e.LockAddrs(0), DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	probes := 0
	next := func() clustertest.Observation { return clustertest.NextRelease(t, got, "k0", &probes) }
	lock := func(key string) (clientv3.LeaseID, int64) {
		t.Helper()
		l, err := c.Grant(ctx, 60)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.Put(ctx, key, "", clientv3.WithLease(l.ID))
		if err != nil {
			t.Fatal(err)
		}
		return l.ID, p.Header.Revision
	}
	other, _ := lock("/lockcheck/k9/1")
	if _, err := c.Revoke(ctx, other); err != nil {
		t.Fatal(err)
	}
	id, rev := lock("/lockcheck/k0/a")
	if _, err := c.Delete(ctx, "/lockcheck/k0/a"); err != nil {
		t.Fatal(err)
	}
	o := next()
	want := fmt.Sprintf("lease 0x%x", int64(id))
	if o.Key != "k0" || o.V.Owner != "/lockcheck/k0/a" || o.V.Token != rev || o.V.Ext().Release.How != history.ReleaseDeleted || o.V.Ext().Release.Lease != want {
		t.Fatalf("deletion observed as %q %+v %+v (want token %d, %s)", o.Key, *o.V, *o.V.Ext().Release, rev, want)
	}
	id, rev = lock("/lockcheck/k0/b")
	if _, err := c.Revoke(ctx, id); err != nil {
		t.Fatal(err)
	}
	o = next()
	if o.Key != "k0" || o.V.Owner != "/lockcheck/k0/b" || o.V.Token != rev || o.V.Ext().Release.How != history.ReleaseLease {
		t.Fatalf("revocation observed as %q %+v %+v", o.Key, *o.V, *o.V.Ext().Release)
	}
	if probes == 0 {
		clustertest.AwaitProbe(t, got)
	}
}

// TestEtcdQueue: of the keys under a lock's prefix, only the one with the
// lowest create revision is the holder's (concurrency.Mutex's layout);
// a waiter's key that goes is none, and the next becomes the holder.
func TestEtcdQueue(t *testing.T) {
	type step struct {
		put        bool
		key        string
		rev        int64
		wantHolder bool
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"the holder's own key", []step{{true, "/lockcheck/k0/a", 5, false}, {false, "/lockcheck/k0/a", 5, true}}},
		{"a waiter gives up, then the holder lets go", []step{
			{true, "/lockcheck/k0/a", 5, false}, {true, "/lockcheck/k0/b", 6, false}, {true, "/lockcheck/k0/c", 7, false},
			{false, "/lockcheck/k0/b", 6, false}, {false, "/lockcheck/k0/a", 5, true}, {false, "/lockcheck/k0/c", 7, true}}},
		{"the last waiter goes first", []step{
			{true, "/lockcheck/k0/a", 5, false}, {true, "/lockcheck/k0/b", 6, false},
			{false, "/lockcheck/k0/b", 6, false}, {false, "/lockcheck/k0/a", 5, true}}},
		{"another lock's keys are another queue", []step{
			{true, "/lockcheck/k0/a", 5, false}, {true, "/lockcheck/k1/b", 6, false}, {false, "/lockcheck/k1/b", 6, true}}},
		{"a key never seen created is placed by its revision", []step{
			{true, "/lockcheck/k0/a", 5, false}, {false, "/lockcheck/k0/z", 9, false}, {false, "/lockcheck/k0/y", 3, true}}},
		{"a key of no revision is the holder's", []step{{true, "/lockcheck/k0/a", 5, false}, {false, "/lockcheck/k0/z", 0, true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &etcdObserver{keys: clusters.KeySet([]string{"k0", "k1"}), queues: map[string]map[string]int64{}}
			for i, s := range tt.steps {
				if s.put {
					o.created(s.key, s.rev)
					continue
				}
				lock, _ := etcdLockOf(s.key)
				if got := o.deleted(lock, s.key, s.rev); got != s.wantHolder {
					t.Fatalf("step %d: deleting %s (revision %d): holder %v, want %v", i, s.key, s.rev, got, s.wantHolder)
				}
			}
		})
	}
}

// TestEtcdObserverWaiters locks k0 the way concurrency.Mutex does (a key
// per client under /lockcheck/k0/, the lowest create revision holds it)
// on a real etcd member, one key before the observer starts: a waiter's
// key that is deleted (it gave up) or whose lease ends makes no
// server-release, the holder's does, and so does the next holder's.
func TestEtcdObserverWaiters(t *testing.T) {
	ctx := context.Background()
	e := oneEtcdMember(t)
	c, err := clientv3.New(clientv3.Config{Endpoints: e.LockAddrs(0), DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lock := func(key string) clientv3.LeaseID {
		t.Helper()
		l, err := c.Grant(ctx, 60)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(ctx, key, "", clientv3.WithLease(l.ID)); err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	lock("/lockcheck/k0/a") // the holder, before the observer
	got, _, _ := clustertest.WatchReleases(t, e, "k0")
	probes := 0
	lock("/lockcheck/k0/b")
	waiter := lock("/lockcheck/k0/c")
	if _, err := c.Revoke(ctx, waiter); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, "/lockcheck/k0/b"); err != nil {
		t.Fatal(err)
	}
	next := lock("/lockcheck/k0/d")
	if _, err := c.Delete(ctx, "/lockcheck/k0/a"); err != nil {
		t.Fatal(err)
	}
	if o := clustertest.NextRelease(t, got, "k0", &probes); o.V.Owner != "/lockcheck/k0/a" || o.V.Ext().Release.How != history.ReleaseDeleted {
		t.Fatalf("first release observed: %+v %+v, want the holder's deletion of /lockcheck/k0/a", *o.V, *o.V.Ext().Release)
	}
	if _, err := c.Revoke(ctx, next); err != nil {
		t.Fatal(err)
	}
	if o := clustertest.NextRelease(t, got, "k0", &probes); o.V.Owner != "/lockcheck/k0/d" || o.V.Ext().Release.How != history.ReleaseLease {
		t.Fatalf("second release observed: %+v %+v, want the next holder's lease-ended /lockcheck/k0/d", *o.V, *o.V.Ext().Release)
	}
}

// oneEtcdMember starts a one-member etcd for an observer test; the test's
// cleanup tears it down.
func oneEtcdMember(t *testing.T) *Cluster {
	t.Helper()
	if _, err := Look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	e := New(Config{Members: 1, Workers: 1, LogDir: t.TempDir()})
	if err := e.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Teardown(context.Background()) })
	return e
}

// TestEtcdObserverLeaseLives: a holder's deleted key is reported as
// deleted as soon as its lease puts a key again, without asking etcd (the
// observer would wait a minute here before it asked), placed at when the
// observer heard of it; a release still waiting when the observer stops
// is asked about and reported then.
func TestEtcdObserverLeaseLives(t *testing.T) {
	ctx := context.Background()
	e := oneEtcdMember(t)
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	got := make(chan clustertest.Observation, 100)
	stop, err := e.ObserveReleases(ctx, clusters.ObserveConfig{Keys: []string{"k0"}, Now: now, LeaseProof: time.Minute, Probe: 20 * time.Millisecond,
		Report: func(key string, v *history.Value) { got <- clustertest.Observation{Key: key, V: v, At: now()} }})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	c, err := clientv3.New(clientv3.Config{Endpoints: e.LockAddrs(0), DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []func() error{
		func() error { _, err := c.Put(ctx, "/lockcheck/k0/a", "", clientv3.WithLease(l.ID)); return err },
		func() error { _, err := c.Delete(ctx, "/lockcheck/k0/a"); return err },
		func() error { _, err := c.Put(ctx, "/lockcheck/k0/b", "", clientv3.WithLease(l.ID)); return err },
	} {
		if err := op(); err != nil {
			t.Fatal(err)
		}
	}
	probes := 0
	o := clustertest.NextRelease(t, got, "k0", &probes)
	if r := o.V.Ext().Release; o.V.Owner != "/lockcheck/k0/a" || r.How != history.ReleaseDeleted || r.At <= 0 || r.At > o.At {
		t.Fatalf("deletion observed as %+v %+v at %s", *o.V, *r, o.At)
	}
	if _, err := c.Revoke(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	// A probe sent after the revocation was heard after it, on the same
	// watch: the observer holds b's release back by then.
	revoked := now()
	for heard := false; !heard; {
		select {
		case o := <-got:
			r := o.V.Ext().Release
			if !r.Probe {
				t.Fatalf("%+v %+v reported before its minute or the stop", *o.V, *r)
			}
			heard = r.At > revoked
		case <-time.After(15 * time.Second):
			t.Fatal("no probe after the revocation in 15 s")
		}
	}
	stop()
	stopped = true
	for {
		select {
		case o := <-got:
			if r := o.V.Ext().Release; r.Probe {
				continue
			} else if o.V.Owner != "/lockcheck/k0/b" || r.How != history.ReleaseLease {
				t.Fatalf("revocation observed as %+v %+v", *o.V, *r)
			}
			return
		default:
			t.Fatal("the release held back was not reported at the stop")
		}
	}
}
