package redis

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// TestLinkToxicsCompose: two faults on one slot's links take off only
// their own toxics, and a refused link stays refused (its connections
// reset) across a kill and restart of its node, which starts the node's
// proxies again.
func TestLinkToxicsCompose(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	r := NewRedis(RedisConfig{LockNodes: 1, Workers: 1, LogDir: t.TempDir(), Persist: true})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Teardown(ctx)
	addr := r.LockAddrs(0)[0]
	hung := func() bool {
		_, err := clustertest.RoundTrip(addr, "PING", 300*time.Millisecond)
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}

	slow := []clusters.Toxic{{Type: clusters.ToxicLatency, Stream: clusters.Downstream, Attributes: map[string]int64{"latency": 1}}}
	lost := []clusters.Toxic{{Type: clusters.ToxicTimeout, Stream: clusters.Downstream}}
	if err := r.SetLinkToxics(ctx, 0, "slow", slow); err != nil {
		t.Fatal(err)
	}
	if err := r.SetLinkToxics(ctx, 0, "lost", lost); err != nil {
		t.Fatal(err)
	}
	if err := r.SetLinkToxics(ctx, 0, "lost", lost); err != nil {
		t.Fatalf("the same toxics again: %v", err)
	}
	if err := r.SetLinkToxics(ctx, 0, "slow", nil); err != nil {
		t.Fatal(err)
	}
	if !hung() {
		t.Error("taking one fault's toxics off took another's too")
	}
	if err := r.SetLinkToxics(ctx, 0, "lost", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := clustertest.RoundTrip(addr, "PING", clustertest.OKWait); err != nil || got != "+PONG" {
		t.Fatalf("cleared link: %q %v", got, err)
	}

	if err := r.SetLinkToxics(ctx, 0, "refuse", []clusters.Toxic{{Type: clusters.ToxicRefuse}}); err != nil {
		t.Fatal(err)
	}
	if _, err := clustertest.RoundTrip(addr, "PING", clustertest.OKWait); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("refused link: %v, want the dial refused", err)
	}
	if err := r.Kill(ctx, "lock0"); err != nil {
		t.Fatal(err)
	}
	if err := r.Restart(ctx, "lock0"); err != nil {
		t.Fatal(err)
	}
	if got, err := clustertest.RoundTrip(addr, "PING", clustertest.OKWait); err == nil {
		t.Errorf("refused link after its node's restart: %q, want the connection reset", got)
	}
	if err := r.SetLinkToxics(ctx, 0, "refuse", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := clustertest.RoundTrip(addr, "PING", clustertest.OKWait); err != nil || got != "+PONG" {
		t.Errorf("link no longer refused: %q %v", got, err)
	}
}
