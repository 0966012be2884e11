package workloads

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// eventLog collects the events a lock client reports.
type eventLog struct {
	mu  sync.Mutex
	evs []string
}

func (l *eventLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, s)
}

func (l *eventLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.evs...)
}

// newClientEvents is newClient with an event log.
func newClientEvents(t *testing.T, cfg Config) (Lock, *eventLog) {
	t.Helper()
	d, err := FindDesign(cfg.Lock)
	if err != nil {
		t.Fatal(err)
	}
	evs := &eventLog{}
	l, err := d.New(cfg, rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Process))), evs.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, evs
}

// TestWatchdogStopsWhenLockLost: each renewing design keeps a held lock past
// its lease; once another owner has the key, the next renewal is refused,
// reported, and renewals stop (the key is left alone).
func TestWatchdogStopsWhenLockLost(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: r.LockAddrs(1)[0], Protocol: 2, DisableIdentity: true})
	defer raw.Close()
	for _, name := range []string{"redis-watchdog", "redis-reentrant"} {
		t.Run(name, func(t *testing.T) {
			key := "wd-" + name
			cfg := testConfig(r, name, 0)
			cfg.LeaseMS, cfg.OpTimeoutMS = 600, 1000 // renewals every 200 ms, slow machines welcome
			l, evs := newClientEvents(t, cfg)
			g, err := l.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(1300 * time.Millisecond) // over two leases
			if n, err := raw.Exists(ctx, key).Result(); err != nil || n != 1 {
				t.Fatalf("the watchdog did not keep the key alive: exists %d %v; events %q", n, err, evs.all())
			}
			// Another owner takes the key, as after an expiry.
			if err := raw.Del(ctx, key).Err(); err != nil {
				t.Fatal(err)
			}
			take := func() error { return raw.Set(ctx, key, "someone-else", 0).Err() }
			if name == "redis-reentrant" {
				take = func() error { return raw.HSet(ctx, key, "someone-else", 1).Err() }
			}
			if err := take(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Second)
			for len(evs.all()) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			got := evs.all()
			if len(got) != 1 || !strings.Contains(got[0], "renewal refused, lock lost") {
				t.Fatalf("events %q: want one refused renewal", got)
			}
			if ttl, err := raw.PTTL(ctx, key).Result(); err != nil || ttl != -1 {
				t.Fatalf("the watchdog touched another owner's key: pttl %v %v", ttl, err)
			}
			time.Sleep(250 * time.Millisecond)
			if n := len(evs.all()); n != 1 {
				t.Errorf("renewals went on after the refusal: %d events", n)
			}
			v, err := l.Release(ctx, key, g)
			if err != nil || *v.Released {
				t.Fatalf("release of a lost lock: %+v %v", v, err)
			}
			if n, err := raw.Exists(ctx, key).Result(); err != nil || n != 1 {
				t.Fatalf("release removed another owner's key: exists %d %v", n, err)
			}
		})
	}
}

// TestReentrantHash checks the RLock hash: the holder's field counts its
// depth, another owner is refused with the remaining lease, and release
// deletes the key only on the last exit.
func TestReentrantHash(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: r.LockAddrs(1)[0], Protocol: 2, DisableIdentity: true})
	defer raw.Close()
	l := newClient(t, testConfig(r, "redis-reentrant", 0)).(*reentrant)
	g, err := l.Acquire(ctx, "re")
	if err != nil || g.Detail != "depth 2" || g.Token != 1 || !strings.HasSuffix(g.Owner, ":0") {
		t.Fatalf("acquire: %+v %v", g, err)
	}
	if n, err := raw.HGet(ctx, "re", g.Owner).Int(); err != nil || n != 2 {
		t.Fatalf("hold count %d %v, want 2", n, err)
	}
	kind, pttl, err := l.enter(ctx, "re", "other:1")
	if err != nil || kind != 0 || pttl <= 0 || pttl > 300 {
		t.Fatalf("another owner: kind %d pttl %d %v, want refused with the lease left", kind, pttl, err)
	}
	n, err := reentrantRelease.Run(ctx, l.c, []string{"re"}, l.cfg.LeaseMS, g.Owner).Int64()
	if err != nil || n != 0 {
		t.Fatalf("first exit: %d %v, want 0 (still held)", n, err)
	}
	if ex, _ := raw.Exists(ctx, "re").Result(); ex != 1 {
		t.Fatal("first exit deleted the lock")
	}
	n, err = reentrantRelease.Run(ctx, l.c, []string{"re"}, l.cfg.LeaseMS, g.Owner).Int64()
	if err != nil || n != 1 {
		t.Fatalf("last exit: %d %v, want 1 (deleted)", n, err)
	}
	if ex, _ := raw.Exists(ctx, "re").Result(); ex != 0 {
		t.Fatal("last exit left the lock")
	}
	l.wd.stop("re", g.Owner)
}

// TestSetNXExpireFailpoint: armed, the client reports the failpoint and the
// key has no TTL while the worker waits there; unarmed, it says nothing.
func TestSetNXExpireFailpoint(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: r.LockAddrs(1)[0], Protocol: 2, DisableIdentity: true})
	defer raw.Close()
	for _, armed := range []bool{true, false} {
		cfg := testConfig(r, "redis-setnx-expire", 0)
		key := "fp-unarmed"
		if armed {
			cfg.Failpoint, key = FailpointSetNXExpire, "fp-armed"
		}
		l, evs := newClientEvents(t, cfg)
		done := make(chan error, 1)
		start := time.Now()
		go func() { _, err := l.Acquire(ctx, key); done <- err }()
		if armed {
			deadline := time.Now().Add(FailpointWait / 2)
			for len(evs.all()) == 0 && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
			if ttl, err := raw.PTTL(ctx, key).Result(); err != nil || ttl != -1 {
				t.Errorf("at the failpoint the key's pttl is %v (%v), want -1 (no TTL)", ttl, err)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		got := evs.all()
		switch {
		case armed && (len(got) != 1 || !strings.HasPrefix(got[0], FailpointPrefix+FailpointSetNXExpire+": ")):
			t.Errorf("armed: events %q", got)
		case armed && time.Since(start) < FailpointWait:
			t.Errorf("armed: acquire took %s, want at least the failpoint wait", time.Since(start))
		case !armed && len(got) != 0:
			t.Errorf("unarmed: events %q", got)
		}
		if ttl, err := raw.PTTL(ctx, key).Result(); err != nil || ttl <= 0 {
			t.Errorf("after acquire: pttl %v %v, want the lease", ttl, err)
		}
	}
}

func TestCheckFailpoint(t *testing.T) {
	for _, tt := range []struct{ name, lock, err string }{
		{"", "redis-set-px", ""},
		{"setnx-expire", "redis-setnx-expire", ""},
		{"setnx-expire", "redis-set-px", "is in the redis-setnx-expire client"},
		{"nope", "redis-setnx-expire", `unknown failpoint "nope" (known: setnx-expire)`},
	} {
		err := CheckFailpoint(tt.name, tt.lock)
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("CheckFailpoint(%q, %q) = %v, want %q", tt.name, tt.lock, err, tt.err)
		}
	}
}

// TestWatchdogReportsLateRelease: a release long after the last renewal (a
// process stopped for longer than the lease) is reported; a timely one is
// not.
func TestWatchdogReportsLateRelease(t *testing.T) {
	cfg := Config{LeaseMS: 60_000, OpTimeoutMS: 100} // no tick fires during the test
	for _, late := range []bool{false, true} {
		evs := &eventLog{}
		w := newWatchdog(nil, cfg, renewOwned, evs.add)
		w.start("k", "o")
		if late {
			w.running["k"].last = time.Now().Add(-61 * time.Second)
		}
		if n := w.stop("k", "o"); n != 0 {
			t.Errorf("renewed %d times", n)
		}
		got := evs.all()
		if late != (len(got) == 1) || (late && !strings.Contains(got[0], "released 61.00 s after the grant, longer than the 60.00 s lease")) {
			t.Errorf("late %v: events %q", late, got)
		}
	}
}
