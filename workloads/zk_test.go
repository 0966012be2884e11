package workloads

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/services/zookeeper"
)

func startZK(t *testing.T, nodes int) *zookeeper.Cluster {
	t.Helper()
	z := zookeeper.New(zookeeper.Config{Nodes: nodes, Workers: 2, LogDir: t.TempDir()})
	if err := z.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = z.Teardown(context.Background()) })
	return z
}

// events collects what a client reports.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.got = append(e.got, s)
	e.mu.Unlock()
}

func (e *events) has(sub string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.got {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestZooKeeperLocks(t *testing.T) {
	z := startZK(t, 1)
	ctx := context.Background()
	for i, name := range []string{"zk-ephemeral", "zk-sequential"} {
		t.Run(name, func(t *testing.T) {
			key := "z" + string(rune('a'+i))
			cfg := func(slot int) Config {
				return Config{Protocol: ProtocolVersion, Lock: name, Process: slot, Seed: 1,
					LockAddrs: z.LockAddrs(slot), StorageAddr: z.StorageAddr(),
					LeaseMS: 1000, AcquireTimeoutMS: 300, RetryMS: 10, ThinkMS: 1, OpTimeoutMS: 500}
			}
			d, _ := FindDesign(name)
			var evA events
			a, err := d.New(cfg(0), rand.New(rand.NewPCG(1, 0)), evA.add)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := d.New(cfg(1), rand.New(rand.NewPCG(1, 1)), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if !evA.has("connected") {
				t.Errorf("no session event reported: %v", evA.got)
			}
			g1, err := a.Acquire(ctx, key)
			if err != nil || g1.Token == 0 {
				t.Fatalf("acquire: %+v %v (want a czxid token)", g1, err)
			}
			if err := a.(Validator).Valid(key); err != nil {
				t.Errorf("fresh grant not valid: %v", err)
			}
			if _, err := b.Acquire(ctx, key); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("second acquire while held: %v, want ErrNotAcquired", err)
			}
			v, err := a.Release(ctx, key, g1)
			if err != nil || !*v.Released {
				t.Fatalf("release: %+v %v", v, err)
			}
			g2, err := b.Acquire(ctx, key)
			if err != nil || g2.Token <= g1.Token {
				t.Fatalf("acquire after release: %+v %v; want a token above %d", g2, err, g1.Token)
			}
			if _, err := b.Release(ctx, key, g2); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestZooKeeperSessionLoss cuts a holder off for longer than its session:
// its client must report the loss, and Valid must say the lock is gone.
func TestZooKeeperSessionLoss(t *testing.T) {
	z := startZK(t, 1)
	ctx := context.Background()
	var ev events
	cfg := Config{Protocol: ProtocolVersion, Lock: "zk-ephemeral", Process: 0, Seed: 1,
		LockAddrs: z.LockAddrs(0), StorageAddr: z.StorageAddr(),
		LeaseMS: 1000, AcquireTimeoutMS: 300, RetryMS: 10, ThinkMS: 1, OpTimeoutMS: 500}
	l, err := newZKEphemeral(cfg, rand.New(rand.NewPCG(1, 0)), ev.add)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Acquire(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := z.Partition(ctx, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.(Validator).Valid("s") == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := l.(Validator).Valid("s"); err == nil || !strings.Contains(err.Error(), "uncertain") {
		t.Fatalf("cut-off holder: Valid = %v, want lock uncertain", err)
	}
	time.Sleep(1500 * time.Millisecond) // the server expires the session
	if err := z.Heal(ctx, 0); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for !ev.has("expired") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !ev.has("disconnected") || !ev.has("expired") {
		t.Fatalf("events %v: want disconnected and expired", ev.got)
	}
	if err := l.(Validator).Valid("s"); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("after expiry: Valid = %v, want lock lost", err)
	}
}
