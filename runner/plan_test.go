package runner

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/lookups"
	"github.com/lockcheck/lockcheck/workloads"
)

// TestEveryDesignHasAService checks that every lock design names a
// registered lock service.
func TestEveryDesignHasAService(t *testing.T) {
	for _, d := range workloads.Designs() {
		if _, err := clusters.FindService(d.Service); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
}

// TestResolveTopology checks that a plan builds the topology the old
// name switch built: Sentinel for a single-master Redis design under a
// failover nemesis and for redis-sentinel, plain Redis otherwise, ZooKeeper
// for the zk designs.
func TestResolveTopology(t *testing.T) {
	cases := []struct {
		lock, nemesis, want string
		shim, clientClocks  bool
	}{
		{"redis-set-px", "none", "*redis.Redis", false, false},
		{"redis-set-px", "failover", "*redis.Sentinel", false, false},
		{"redis-set-px", "clock", "*redis.Redis", true, false},
		{"redlock", "failover", "*redis.Redis", false, false},
		{"redis-sentinel", "none", "*redis.Sentinel", false, false},
		{"redis-cluster", "failover", "*redis.RedisCluster", false, false},
		{"redis-set-px", "pause,clock-client", "*redis.Redis", false, true},
		{"zk-ephemeral", "pause", "*zookeeper.Cluster", false, false},
		{"redis-zk", "kill-redis", "*rediszk.Cluster", false, false},
	}
	for _, c := range cases {
		t.Run(c.lock+"/"+c.nemesis, func(t *testing.T) {
			tt := Test{Lock: c.lock, Nemesis: c.nemesis}
			tt.Defaults()
			p := mustResolve(t, tt)
			if got := fmt.Sprintf("%T", p.topology(t.TempDir())); got != c.want {
				t.Errorf("topology %s, want %s", got, c.want)
			}
			if p.clockShim != c.shim || p.clientClocks != c.clientClocks {
				t.Errorf("clock shim %v, client clocks %v; want %v, %v", p.clockShim, p.clientClocks, c.shim, c.clientClocks)
			}
		})
	}
}

// TestValidateRegisterInDB checks which tests may keep the register in the
// lock's own database.
func TestValidateRegisterInDB(t *testing.T) {
	cases := []struct {
		lock    string
		fencing bool
		ok      bool
	}{
		{"pg-for-update", false, true},
		{"mysql-for-update", false, true},
		{"pg-advisory-xact", false, true},
		{"pg-for-update", true, false},
		{"pg-advisory", false, false},
		{"redis-set-px", false, false},
		{"pg-optimistic", false, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/fencing=%v", c.lock, c.fencing), func(t *testing.T) {
			tt := Test{Lock: c.lock, Workload: workloads.WorkloadRegisterInDB, Fencing: c.fencing}
			tt.Defaults()
			err := tt.Validate()
			if (err == nil) != c.ok {
				t.Fatalf("Validate: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

// mustResolve resolves tt, defaults filled in, or fails the test.
func mustResolve(t testing.TB, tt Test) *Plan {
	t.Helper()
	tt.Defaults()
	p, err := Resolve(tt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunLooksEachNameUpOnce runs a faulted test end to end (cluster,
// workers, nemesis, store, checkers, report) and checks that each registry
// was asked exactly once: the run reads its Plan, never the names. It runs
// alone (not in parallel), so no other test's lookups are counted.
func TestRunLooksEachNameUpOnce(t *testing.T) {
	needService(t, "redis-set-px")
	tt := exerciseTest(t, "redis-set-px", "pause")
	tt.Time = 2 * time.Second
	tt.Until = func(h history.History) bool { return len(h.Faults()) > 0 }
	before := lookups.Counts()
	if _, err := Run(context.Background(), tt, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := lookups.Since(before)
	want := map[string]int{"design": 1, "workload": 1, "nemesis": 1, "service": 1, "cluster": 1}
	if !maps.Equal(got, want) {
		t.Errorf("lookups in one run: %v, want %v", got, want)
	}
}

// TestCheckOptionsTokenKind: the designs whose tokens are ZooKeeper zxids
// have their stories print them as zxids; the others as plain numbers.
func TestCheckOptionsTokenKind(t *testing.T) {
	for _, tc := range []struct {
		lock string
		want checker.TokenKind
	}{
		{"zk-ephemeral", checker.ZxidTokens},
		{"zk-sequential", checker.ZxidTokens},
		{"curator-mutex", checker.ZxidTokens},
		{"kazoo-lock", checker.ZxidTokens},
		{"go-zookeeper-lock", checker.ZxidTokens},
		{"redis-zk", checker.ZxidTokens},
		{"redis-set-px", checker.NumberTokens},
		{"etcd-mutex", checker.NumberTokens},
	} {
		if got := mustResolve(t, Test{Lock: tc.lock}).CheckOptions().Tokens; got != tc.want {
			t.Errorf("%s: tokens %v, want %v", tc.lock, got, tc.want)
		}
	}
}

// TestReplyTimeoutOutlastsTriggeredFaults: a worker paused by a triggered
// fault longer than --nemesis-duration answers after the pause, as one
// paused by a timed fault does, instead of being given up for dead.
func TestReplyTimeoutOutlastsTriggeredFaults(t *testing.T) {
	cases := []struct {
		nemesis string
		want    time.Duration
	}{
		{"pause", 10 * time.Second},                             // 3 s faults: the test's own 10 s
		{"pause@grant+5ms:20s", 25 * time.Second},               // the fault's 20 s and 5
		{"pause@grant:4xlease,kill@at+1s:2s", 10 * time.Second}, // 4 s: still the test's
		{"pause@grant:12xlease", 17 * time.Second},              // 12 leases of 1 s and 5
	}
	for _, c := range cases {
		t.Run(c.nemesis, func(t *testing.T) {
			tt := Test{Lock: "redis-set-px", Nemesis: c.nemesis}
			tt.Defaults()
			p, err := Resolve(tt)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.replyTimeout(); got != c.want {
				t.Errorf("reply timeout %s, want %s", got, c.want)
			}
		})
	}
}

// TestResolveRefusesMarksNoWorkerReports: a fault bound to a write or a
// renewal is refused where no worker of the run would report it, with the
// reason, and resolved where one does.
func TestResolveRefusesMarksNoWorkerReports(t *testing.T) {
	cases := []struct {
		lock, workload, nemesis string
		workerCmd               []string
		want                    string // "" resolves
	}{
		{"redis-set-px", "", "pause@write:lease", nil, ""},
		{"redis-watchdog", "", "pause@renewal:lease,kill@write", nil, ""},
		{"etcd-mutex", "", "pause@renewal", nil, ""},
		{"nats-kv", "", "pause@renewal", nil, ""},
		{"redis-set-px", "", "pause@renewal", nil, "does not renew its lease"},
		{"etcd-mutex-guarded", "", "pause@write", nil, "writes inside its lock's own transaction"},
		{"pg-for-update", workloads.WorkloadRegisterInDB, "pause@write", nil, "writes inside its lock's own transaction"},
		{"pg-for-update", "", "pause@write", nil, ""},
		{"redis-py-lock", "", "pause@write", nil, "runs in its own worker"},
		{"redis-set-px", "", "pause@renewal", []string{"my-worker"}, ""}, // asked; it may report them
	}
	for _, c := range cases {
		t.Run(c.lock+"/"+c.nemesis, func(t *testing.T) {
			tt := Test{Lock: c.lock, Workload: c.workload, Nemesis: c.nemesis, WorkerCmd: c.workerCmd}
			tt.Defaults()
			_, err := Resolve(tt)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--nemesis")):
				t.Fatalf("error %v, want one naming --nemesis and %q", err, c.want)
			}
		})
	}
}

// TestDefaultNameOfALongSchedule: a --nemesis of many faults names a
// directory a file system takes (at most 255 bytes), different schedules
// different directories, and a short one is kept as it is.
func TestDefaultNameOfALongSchedule(t *testing.T) {
	long := func(n int) string {
		var faults []string
		for i := range n {
			faults = append(faults, fmt.Sprintf("reply-loss@release/p%d#1:100ms", 2*i))
		}
		return strings.Join(faults, ",")
	}
	a := defaultName(Test{Lock: "etcd-mutex-unlock", Nemesis: long(30)}, workloads.Workload{})
	b := defaultName(Test{Lock: "etcd-mutex-unlock", Nemesis: long(31)}, workloads.Workload{})
	if len(a) > 200 || len(b) > 200 || a == b {
		t.Errorf("names %q (%d bytes) and %q (%d bytes): want each at most 200 bytes, and different", a, len(a), b, len(b))
	}
	if got := defaultName(Test{Lock: "redis-set-px", Nemesis: "pause@grant+5ms:lease+1s"}, workloads.Workload{}); got != "redis-set-px-pause@grant+5ms_lease+1s" {
		t.Errorf("short name %q", got)
	}
}
