package runner

import (
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/servicetest"
)

// userRedis starts a redis-server the way a user runs their own, outside
// any run and lockcheck's own code, and stops it (by its pid) when the
// test ends. It returns its address and pid.
func userRedis(t *testing.T) (addr string, pid int) {
	t.Helper()
	servicetest.Need(t, "redis-set-px")
	port, err := clusters.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(patient)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr, cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the user's redis-server does not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunExternalRedis points a run at a redis-server it did not start
// (--cluster external): a pause past the lease makes a double holder,
// fencing makes the resource refuse the stale write, a fault of the
// server's side is refused with the reason (an error, never a verdict),
// and the user's server is left running.
func TestRunExternalRedis(t *testing.T) {
	addr, pid := userRedis(t)
	overlap, fencing := checker.NewOverlap(checker.Options{}), checker.NewFencing()
	for _, tt := range []struct {
		name     string
		fencing  bool
		want     checker.Validity
		mustFind string
		finder   checker.Checker
	}{
		{"pause", false, checker.Invalid, "double-holder", overlap},
		{"pause-fenced", true, checker.Valid, "stale-write-rejected", fencing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			test := quick(t, "redis-set-px", "pause", tt.fencing)
			test.Cluster, test.External = ClusterExternal, []string{addr}
			test.Time, test.Until = patient, untilAnomaly(tt.finder, tt.mustFind)
			out, err := Run(context.Background(), test, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(out.Result, tt.fencing); out.Result.Valid != tt.want || got[tt.mustFind] == 0 {
				t.Fatalf("verdict %v with anomalies %v; want %v with a %s anomaly", out.Result.Valid, got, tt.want, tt.mustFind)
			}
			assertNoChildren(t, pid)
		})
	}

	t.Run("kill refused", func(t *testing.T) {
		test := quick(t, "redis-set-px", "kill", false)
		test.Cluster, test.External = ClusterExternal, []string{addr}
		_, err := Run(context.Background(), test, io.Discard)
		if !errors.Is(err, clusters.ErrMissingCommand) || !strings.Contains(err.Error(), "kill nemesis: no kill command") {
			t.Fatalf("err = %v; want the kill refused naming the command it lacks", err)
		}
		assertNoChildren(t, pid)
	})
	t.Run("clock refused", func(t *testing.T) {
		test := quick(t, "redis-set-px", "clock", false)
		test.Cluster, test.External = ClusterExternal, []string{addr}
		_, err := Run(context.Background(), test, io.Discard)
		if !errors.Is(err, clusters.ErrUnsupported) || !strings.Contains(err.Error(), "the servers only through the control commands") {
			t.Fatalf("err = %v; want the clock refused with the reason", err)
		}
	})

	// The user's server is theirs: still up after every run.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("the user's redis-server is gone: %v", err)
	}
	c.Close()
}

// TestResolveExternal: what --cluster external refuses before anything
// starts.
func TestResolveExternal(t *testing.T) {
	for _, tt := range []struct {
		lock, cluster string
		external      []string
		want          string
	}{
		{"redis-set-px", ClusterExternal, nil, "give the lock servers with --external"},
		{"redlock", ClusterExternal, []string{"127.0.0.1:1"}, "uses 5 lock servers, and 1 address was given"},
		{"redis-sentinel", ClusterExternal, []string{"127.0.0.1:1"}, "needs a topology file (--external FILE, docs/your-lock.md): no master_name"},
		{"redis-zk", ClusterExternal, []string{"127.0.0.1:1"}, "the Redis server first, then the ZooKeeper servers: give at least two lock servers"},
		{"redis-zk", ClusterExternal, []string{"127.0.0.1:1", "127.0.0.1:2"}, ""},
		{"pg-advisory", ClusterExternal, []string{"127.0.0.1:1"}, "needs a login: give a topology file"},
		{"redis-set-px", ClusterExternal, []string{"localhost"}, "want HOST:PORT"},
		{"redis-set-px", ClusterLocal, []string{"127.0.0.1:1"}, "--external goes with --cluster external"},
		{"zk-ephemeral", ClusterExternal, []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, ""},
		{"redis-set-px", ClusterExternal, []string{"127.0.0.1:1"}, ""},
	} {
		test := quick(t, tt.lock, "none", false)
		test.Cluster, test.External = tt.cluster, tt.external
		test.Defaults()
		_, err := Resolve(test)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s %s %v: err = %v, want %q", tt.lock, tt.cluster, tt.external, err, tt.want)
		}
	}
}
