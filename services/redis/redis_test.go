package redis

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// roundTrip sends one inline command and returns the first reply line.
func roundTrip(addr, cmd string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	n, err := c.Read(buf)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

func TestRedisClusterFaults(t *testing.T) {
	if _, err := LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	r := NewRedis(RedisConfig{LockNodes: 1, Workers: 2, LogDir: t.TempDir(), Persist: true})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	pids := r.Pids()
	defer func() {
		if err := r.Teardown(ctx); err != nil {
			t.Error(err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	}()
	if len(pids) != 2 {
		t.Fatalf("want 2 server pids, got %v", pids)
	}
	a0, a1 := r.LockAddrs(0)[0], r.LockAddrs(1)[0]
	if got, err := roundTrip(a0, "SET k v", okWait); err != nil || got != "+OK" {
		t.Fatalf("SET through proxy: %q %v", got, err)
	}

	t.Run("partition hangs only the cut slot", func(t *testing.T) {
		if err := r.Partition(ctx, 0); err != nil {
			t.Fatal(err)
		}
		_, err := roundTrip(a0, "PING", 300*time.Millisecond)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("partitioned link: got %v, want a timeout", err)
		}
		if got, err := roundTrip(a1, "PING", okWait); err != nil || got != "+PONG" {
			t.Errorf("other slot: %q %v", got, err)
		}
		if err := r.Heal(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if got, err := roundTrip(a0, "PING", okWait); err != nil || got != "+PONG" {
			t.Errorf("healed link: %q %v", got, err)
		}
	})

	t.Run("kill refuses, restart keeps keys", func(t *testing.T) {
		if err := r.Kill(ctx, "lock0"); err != nil {
			t.Fatal(err)
		}
		_, err := roundTrip(a0, "PING", okWait)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("killed node: got %v, want connection refused", err)
		}
		if err := r.Restart(ctx, "lock0"); err != nil {
			t.Fatal(err)
		}
		pids = r.Pids()
		if got, err := roundTrip(a0, "GET k", okWait); err != nil || got != "$1\r\nv" {
			t.Errorf("GET after restart: %q %v (want the persisted key)", got, err)
		}
	})
}

// Waits in the cluster tests: for a reply that must come (okWait) and for
// an event the servers must bring about (patientWait). They bound a wait
// for an event, not a speed, so they are generous for a loaded machine.
const (
	okWait      = 5 * time.Second
	patientWait = 60 * time.Second
)
