package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// TestSentinelFailover sets up the Sentinel topology, cuts the master off
// with worker slot 0 on its side, and checks that the sentinels promote a
// replica, that slot 0 still reaches the old master but no sentinel, that
// slot 1 reaches the new master, and that Teardown leaves no process.
func TestSentinelFailover(t *testing.T) {
	if _, err := LookSentinel(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	s := NewSentinel(SentinelConfig{Workers: 2, LogDir: t.TempDir(), Persist: true})
	start := time.Now()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("ready in %s", time.Since(start).Round(time.Millisecond))
	pids := s.Pids()
	defer func() {
		if err := s.Teardown(ctx); err != nil {
			t.Error(err)
		}
		if err := s.Teardown(ctx); err != nil {
			t.Errorf("second Teardown: %v", err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	}()
	if len(pids) != 7 {
		t.Fatalf("want 7 processes (3 redis, 3 sentinels, storage), got %v", pids)
	}
	old, err := s.Leader(ctx)
	if err != nil || old != "redis0" {
		t.Fatalf("leader %q %v, want redis0", old, err)
	}
	links0, links1 := s.SentinelLinks(0), s.SentinelLinks(1)
	if len(links0.Addrs) != 3 || len(links0.AddrMap) != 9 {
		t.Fatalf("slot links %+v: want 3 sentinels and 9 mapped addresses (3 redis nodes, 3 sentinels at their own address and at their front)", links0)
	}
	if got, err := clustertest.RoundTrip(s.LockAddrs(1)[0], "SET k v", clustertest.OKWait); err != nil || got != "+OK" {
		t.Fatalf("SET on the master through slot 1: %q %v", got, err)
	}

	if err := s.CutMaster(ctx, old, []int{0}); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	// Written on the old master after the cut: never replicated.
	if got, err := clustertest.RoundTrip(s.LockAddrs(0)[0], "SET lost yes", clustertest.OKWait); err != nil || got != "+OK" {
		t.Fatalf("slot 0 must still reach the old master: %q %v", got, err)
	}
	if _, err := clustertest.RoundTrip(links0.Addrs[0], "PING", 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("slot 0 reached a sentinel during the cut: %v", err)
	}
	if _, err := clustertest.RoundTrip(s.LockAddrs(1)[0], "PING", 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("slot 1 reached the old master during the cut: %v", err)
	}
	promoted, err := s.WaitPromotion(ctx, old, clustertest.PatientWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sentinels promoted %s %s after the cut", promoted, time.Since(cut).Round(time.Millisecond))
	j, _, _ := s.redisNode(promoted)
	if mapped := links1.AddrMap[s.peer[j]]; mapped != s.LockAddrs(1)[j] {
		t.Errorf("AddrMap sends %s to %s, want slot 1's proxy %s", s.peer[j], mapped, s.LockAddrs(1)[j])
	}
	if got, err := clustertest.RoundTrip(s.LockAddrs(1)[j], "GET lost", clustertest.OKWait); err != nil || got != "$-1" {
		t.Errorf("the new master has the write made after the cut: %q %v", got, err)
	}
	if got, err := clustertest.RoundTrip(s.LockAddrs(1)[j], "SET k2 v", clustertest.OKWait); err != nil || got != "+OK" {
		t.Errorf("the new master refuses writes: %q %v", got, err)
	}
	if err := s.HealMaster(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := clustertest.RoundTrip(links0.Addrs[0], "PING", clustertest.OKWait); err != nil || got != "+PONG" {
		t.Errorf("slot 0 after heal: %q %v", got, err)
	}
	// The sentinels demote the old master (after seeing it for about 8 s),
	// and its resync drops the write made after the cut.
	healed := time.Now()
	err = clusters.Poll(ctx, clustertest.PatientWait, func() error {
		got, err := clustertest.RoundTrip(s.LockAddrs(0)[0], "GET lost", clustertest.OKWait)
		if err != nil || got != "$-1" {
			return fmt.Errorf("old master still has the lost write: %q %v", got, err)
		}
		return nil
	}, "demotion")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("old master demoted and resynced %s after the heal", time.Since(healed).Round(time.Millisecond))
	if err := s.WaitReplica(ctx, old, clustertest.PatientWait); err != nil {
		t.Error(err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// BenchmarkSentinelSetup starts the Sentinel topology five times and reports
// the median time from start to ready (replicas in sync, every sentinel
// naming the master and seeing both replicas and the other sentinels).
// Run: go test -run '^$' -bench SentinelSetup -benchtime 1x ./clusters/
func BenchmarkSentinelSetup(b *testing.B) {
	for range b.N {
		var took []time.Duration
		for range 5 {
			s := NewSentinel(SentinelConfig{Workers: 1, LogDir: b.TempDir(), Persist: true})
			start := time.Now()
			if err := s.Setup(context.Background()); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
			if err := s.Teardown(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(took[2].Seconds(), "median-s")
		b.ReportMetric(took[0].Seconds(), "min-s")
		b.ReportMetric(took[4].Seconds(), "max-s")
	}
}
