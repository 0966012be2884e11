package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/clustertest"
	"github.com/redis/go-redis/v9"
)

func TestOnHistoryClock(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	for _, tt := range []struct {
		name          string
		exp           int64
		before, after time.Duration
		want          time.Duration
	}{
		{"no expiry", -1, 10, 20, 0},
		{"no key", -2, 10, 20, 0},
		{"zero", 0, 10, 20, 0},
		{"ahead, read at the midpoint", 1_000_250, 100 * time.Millisecond, 110 * time.Millisecond, 355 * time.Millisecond},
		{"already past", 999_990, 100 * time.Millisecond, 100 * time.Millisecond, 90 * time.Millisecond},
		{"before the history began", 999_000, 100 * time.Millisecond, 100 * time.Millisecond, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			at, st := onHistoryClock(tt.exp, now, tt.before, tt.after)
			if at != tt.want {
				t.Fatalf("at = %v, want %v", at, tt.want)
			}
			if (tt.want == 0) != st.IsZero() || (tt.want != 0 && !st.Equal(time.UnixMilli(tt.exp))) {
				t.Fatalf("server time = %v for expiry %d", st, tt.exp)
			}
		})
	}
}

// TestRedisObserver sets, renews, deletes and lets expire lock keys on a
// real redis-server through a client of its own, and checks what the
// observer reports: each release of a watched key once, with its owner,
// an expiry placed where the TTL put it, nothing for other keys, and
// probes with their lag.
func TestRedisObserver(t *testing.T) {
	ctx := context.Background()
	r := oneRedis(t)
	got, _, now := clustertest.WatchReleases(t, r, "k0", "k1")
	probes := 0
	next := func(want string) clustertest.Observation { return clustertest.NextRelease(t, got, want, &probes) }
	c := redis.NewClient(&redis.Options{Addr: r.lock[0].Addr(), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	// Another key, with a TTL, is not reported when it expires.
	if err := c.Set(ctx, "other", "x", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	set := now()
	if err := c.Set(ctx, "k0", "owner-a", 1500*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.PExpire(ctx, "k0", 2000*time.Millisecond).Err(); err != nil { // a renewal
		t.Fatal(err)
	}
	o := next("k0")
	rel := o.V.Ext().Release
	if rel.How != history.ReleaseExpired || o.V.Owner != "owner-a" || len(o.V.Ext().Nodes) != 1 || o.V.Ext().Nodes[0] != "lock0" {
		t.Fatalf("expiry observed as %+v %+v", *o.V, *rel)
	}
	if lo, hi := set+1990*time.Millisecond, o.At; rel.At < lo || rel.At > hi {
		t.Fatalf("expiry placed at %v, want within [%v, %v] (the renewed TTL, before it was heard)", rel.At, lo, hi)
	}
	if rel.ServerTime.IsZero() {
		t.Fatal("no server time on an expiry")
	}
	// A hash lock (Redisson's shape): its owner is its one field.
	if err := c.HSet(ctx, "k1", "owner-b", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.PExpire(ctx, "k1", 1500*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	o = next("k1")
	if o.V.Ext().Release.How != history.ReleaseExpired || o.V.Owner != "owner-b" || o.V.Ext().Release.At == 0 {
		t.Fatalf("hash expiry observed as %+v %+v", *o.V, *o.V.Ext().Release)
	}
	// A delete, with no server time; the owner is known when the observer
	// read the key before the delete came.
	if err := c.Set(ctx, "k0", "owner-c", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Del(ctx, "k0").Err(); err != nil {
		t.Fatal(err)
	}
	o = next("k0")
	if o.V.Ext().Release.How != history.ReleaseDeleted || (o.V.Owner != "" && o.V.Owner != "owner-c") || o.V.Ext().Release.At != 0 || !o.V.Ext().Release.ServerTime.IsZero() {
		t.Fatalf("delete observed as %+v %+v", *o.V, *o.V.Ext().Release)
	}
	select {
	case o := <-got:
		if !o.V.Ext().Release.Probe {
			t.Fatalf("observed %q after the release of k0: %+v", o.Key, *o.V.Ext().Release)
		}
	default:
	}
}

// TestRedisObserverWrites checks the observer of a design whose locks
// change hands by being written over: a write whose value took the lock
// (TookOver) is the release of the owner the key named, placed when the
// write was heard; a write that took nothing (a GETSET that lost the
// race) is none; and a plain delete names the owner the last write put.
func TestRedisObserverWrites(t *testing.T) {
	ctx := context.Background()
	r := oneRedis(t)
	// A value takes over the one it names after ">".
	took := func(old, next string) bool { _, over, ok := strings.Cut(next, ">"); return ok && over == old }
	got, reads, now := clustertest.WatchWith(t, r, clusters.ObserveConfig{Keys: []string{"k0"}, TookOver: took})
	probes := 0
	c := redis.NewClient(&redis.Options{Addr: r.lock[0].Addr(), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	write := func(v string) time.Duration {
		t.Helper()
		at := now()
		if _, err := c.SetNX(ctx, "k0", v, 0).Result(); err != nil {
			t.Fatal(err)
		}
		if v != "a" {
			if err := c.GetSet(ctx, "k0", v).Err(); err != nil {
				t.Fatal(err)
			}
		}
		clustertest.WaitRead(t, reads, "k0")
		return at
	}
	write("a")
	at := write("b>a") // takes a's lock
	o := clustertest.NextRelease(t, got, "k0", &probes)
	rel := o.V.Ext().Release
	if rel.How != history.ReleaseOverwritten || o.V.Owner != "a" || rel.At < at || rel.At > o.At {
		t.Fatalf("takeover observed as %+v %+v (written at %v, reported at %v)", *o.V, *rel, at, o.At)
	}
	write("c>a") // a write that lost the race: b keeps the lock
	if err := c.Del(ctx, "k0").Err(); err != nil {
		t.Fatal(err)
	}
	o = clustertest.NextRelease(t, got, "k0", &probes)
	if rel := o.V.Ext().Release; rel.How != history.ReleaseDeleted || o.V.Owner != "c>a" {
		t.Fatalf("after a write that took nothing, observed %+v %+v, want the delete of c>a", *o.V, *rel)
	}
}

// TestRedisObserverLazyRead checks that the observer reads a lock key only
// once it has lived lazyRead: a key set and deleted in one transaction is
// reported deleted, with no owner, and never read (the old observer read
// every key it heard set), and a key that lives longer is read and its
// deletion names its owner.
func TestRedisObserverLazyRead(t *testing.T) {
	ctx := context.Background()
	r := oneRedis(t)
	got, reads, _ := clustertest.WatchReleases(t, r, "k0", "k1")
	probes := 0
	c := redis.NewClient(&redis.Options{Addr: r.lock[0].Addr(), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "k0", "owner-a", 10*time.Second)
		p.Del(ctx, "k0")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	o := clustertest.NextRelease(t, got, "k0", &probes)
	if o.V.Ext().Release.How != history.ReleaseDeleted || o.V.Owner != "" {
		t.Fatalf("a key deleted at once observed as %+v %+v, want a deletion with no owner", *o.V, *o.V.Ext().Release)
	}
	if err := c.Set(ctx, "k1", "owner-b", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case k := <-reads:
		if k != "k1" {
			t.Fatalf("the observer read %s, a key deleted at once, before k1", k)
		}
	case <-time.After(clustertest.PatientWait):
		t.Fatal("the observer never read k1")
	}
	if err := c.Del(ctx, "k1").Err(); err != nil {
		t.Fatal(err)
	}
	if o := clustertest.NextRelease(t, got, "k1", &probes); o.V.Owner != "owner-b" {
		t.Fatalf("a key read before its deletion observed as %+v, want owner-b", *o.V)
	}
}

func TestTouchAt(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		at   time.Duration
		n    int
		want time.Duration
	}{
		{0, 0, 0},
		{-1, 0, 0},
		{100 * ms, 0, 101 * ms},
		{100 * ms, 1, 103 * ms},
		{100 * ms, 4, 109 * ms},
	} {
		if got := touchAt(tt.at, tt.n); got != tt.want {
			t.Errorf("touchAt(%v, %d) = %v, want %v", tt.at, tt.n, got, tt.want)
		}
	}
	for _, tt := range []struct {
		n    int
		done bool
		want int
	}{
		{0, false, 1}, {3, false, 4}, {0, true, maxTouches}, {4, true, maxTouches},
	} {
		if got := bump(tt.n, tt.done); got != tt.want {
			t.Errorf("bump(%d, %v) = %d, want %d", tt.n, tt.done, got, tt.want)
		}
	}
}

// oneRedis starts a one-node Redis topology until the test ends.
func oneRedis(t *testing.T) *Redis {
	t.Helper()
	if _, err := LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	r := NewRedis(RedisConfig{LockNodes: 1, Workers: 1, LogDir: t.TempDir()})
	if err := r.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Teardown(context.Background()) })
	return r
}
