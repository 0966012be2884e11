package workloads

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	natssvc "github.com/lockcheck/lockcheck/services/nats"
)

// startNATS starts a NATS topology of members servers, or skips the test
// when nats-server is not installed.
func startNATS(t *testing.T, members int) *natssvc.Cluster {
	t.Helper()
	if _, err := natssvc.Look(); err != nil {
		t.Skipf("nats-kv needs nats-server: %v", err)
	}
	n := natssvc.New(natssvc.Config{Members: members, Workers: 2, LogDir: t.TempDir()})
	if err := n.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Teardown(context.Background()) })
	return n
}

// natsClient opens a nats-kv client for worker slot of n.
func natsClient(t *testing.T, n *natssvc.Cluster, slot int, lease time.Duration, ev func(string)) *natsKV {
	t.Helper()
	cfg := Config{Protocol: ProtocolVersion, Lock: "nats-kv", Process: slot, Seed: 1,
		LockAddrs: n.LockAddrs(slot), StorageAddr: n.StorageAddr(),
		LeaseMS: lease.Milliseconds(), AcquireTimeoutMS: 300, RetryMS: 10, ThinkMS: 1, OpTimeoutMS: 1000}
	l, err := newNATSKV(cfg, rand.New(rand.NewPCG(1, uint64(slot))), ev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.(*natsKV)
}

func TestNATSKV(t *testing.T) {
	n := startNATS(t, 1)
	ctx := context.Background()
	const lease = 600 * time.Millisecond

	t.Run("renewed lock outlives its TTL and excludes others", func(t *testing.T) {
		a, b := natsClient(t, n, 0, lease, nil), natsClient(t, n, 1, lease, nil)
		ga, err := a.Acquire(ctx, "renewed")
		if err != nil {
			t.Fatal(err)
		}
		if ga.Token <= 0 {
			t.Errorf("token %d, want the Create revision (> 0)", ga.Token)
		}
		time.Sleep(3 * lease) // three TTLs: only the renewals keep the key
		if _, err := b.Acquire(ctx, "renewed"); !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("second client's acquire of a renewed lock: %v, want ErrNotAcquired", err)
		}
		v, err := a.Release(ctx, "renewed", ga)
		if err != nil || v.Released == nil || !*v.Released {
			t.Fatalf("release after renewals: %+v, %v; want released", v, err)
		}
		gb, err := b.Acquire(ctx, "renewed")
		if err != nil {
			t.Fatalf("acquire after the release: %v", err)
		}
		if gb.Token <= ga.Token {
			t.Errorf("token after the release %d, want above %d", gb.Token, ga.Token)
		}
		if _, err := b.Release(ctx, "renewed", gb); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("lease runs out while renewals are stopped", func(t *testing.T) {
		var ev events
		a, b := natsClient(t, n, 0, lease, ev.add), natsClient(t, n, 1, lease, nil)
		ga, err := a.Acquire(ctx, "stopped")
		if err != nil {
			t.Fatal(err)
		}
		// Stop a's renewer, as a pause of the whole process would.
		h, _ := a.held.get("stopped")
		close(h.stop)
		<-h.done
		h.stop, h.done = make(chan struct{}), make(chan struct{})
		close(h.done)
		deadline := time.Now().Add(20 * lease)
		var gb Grant
		for {
			if gb, err = b.Acquire(ctx, "stopped"); err == nil {
				break
			}
			if !errors.Is(err, ErrNotAcquired) || time.Now().After(deadline) {
				t.Fatalf("second client never took the expired lock: %v", err)
			}
		}
		if gb.Token <= ga.Token {
			t.Errorf("second holder's token %d, want above the first's %d", gb.Token, ga.Token)
		}
		v, err := a.Release(ctx, "stopped", ga)
		if err != nil || v.Released == nil || *v.Released {
			t.Fatalf("first holder's release after expiry: %+v, %v; want released=false", v, err)
		}
		v, err = b.Release(ctx, "stopped", gb)
		if err != nil || v.Released == nil || !*v.Released {
			t.Fatalf("second holder's release: %+v, %v; want released", v, err)
		}
	})

	t.Run("a client holds a key once", func(t *testing.T) {
		a := natsClient(t, n, 0, lease, nil)
		g, err := a.Acquire(ctx, "once")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Acquire(ctx, "once"); err == nil {
			t.Fatal("second acquire of a held key by the same client succeeded")
		}
		if _, err := a.Release(ctx, "once", g); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Release(ctx, "once", g); err == nil {
			t.Fatal("release of a key not held succeeded")
		}
	})
}

func TestNATSAddrs(t *testing.T) {
	addrs := []string{"a:1", "b:2", "c:3"}
	for _, c := range []struct {
		process int
		want    string
	}{
		{0, "nats://a:1,nats://b:2,nats://c:3"},
		{1, "nats://b:2,nats://c:3,nats://a:1"},
		{5, "nats://c:3,nats://a:1,nats://b:2"},
	} {
		if got := natsAddrs(addrs, c.process); got != c.want {
			t.Errorf("natsAddrs(process %d) = %q, want %q", c.process, got, c.want)
		}
	}
	if got := natsAddrs(nil, 3); got != "" {
		t.Errorf("natsAddrs(nil) = %q", got)
	}
	if addrs[0] != "a:1" || addrs[1] != "b:2" {
		t.Errorf("natsAddrs changed its argument: %v", addrs)
	}
}
