package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// TestSentinelRestartEmpty restarts the master of a real Sentinel topology
// (append-only file, fsync always) with its data gone, before the
// sentinels judge it down: it comes back an empty master, and its replicas,
// which held the key, resync from it and lose it too (the Redis
// replication docs' warning about a master with persistence turned off).
func TestSentinelRestartEmpty(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := NewSentinel(SentinelConfig{Workers: 1, LogDir: t.TempDir(), Persist: true})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Teardown(context.Background())
	master, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := nodeClient(s.redis[0].Addr())
	defer c.Close()
	if err := c.Set(ctx, "k0", "p1-a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Every replica has the key before the restart.
	for _, r := range s.redis[1:] {
		err := clusters.Poll(ctx, 20*time.Second, func() error {
			ks, err := redisKeys(ctx, r.Addr())
			if err == nil && ks["k0"] != "p1-a" {
				err = errors.New("no k0 yet")
			}
			return err
		}, r.Name+" replicates k0")
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RestartEmpty(ctx, master); err != nil {
		t.Fatal(err)
	}
	if now, err := s.Leader(ctx); err != nil || now != master {
		t.Fatalf("master after restart-empty: %q, %v; want %s still", now, err, master)
	}
	for _, r := range s.redis {
		err := clusters.Poll(ctx, 30*time.Second, func() error {
			ks, err := redisKeys(ctx, r.Addr())
			if err == nil && len(ks) != 0 {
				err = fmt.Errorf("holds %v", ks)
			}
			return err
		}, r.Name+" empty")
		if err != nil {
			t.Errorf("%s after the master's restart-empty: %v", r.Name, err)
		}
	}
}
