package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/internal/servicetest"
	"github.com/lockcheck/lockcheck/workers"
	"github.com/lockcheck/lockcheck/workloads"
)

// TestMain lets the test binary serve as `check worker`, or as a worker
// that dials around its proxies (bypass_test.go).
func TestMain(m *testing.M) {
	switch os.Getenv("LOCKCHECK_TEST_WORKER") {
	case "1":
		if err := workloads.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	case "bypass":
		if err := serveBypass(os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString("bypass worker: " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// workerOf returns the argv and environment of a design's bundled worker:
// its own worker in another language, or this test binary as check worker.
func workerOf(t *testing.T, lock string) ([]string, []string) {
	t.Helper()
	d, err := workloads.FindDesign(lock)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Worker) == 0 {
		return []string{os.Args[0]}, []string{"LOCKCHECK_TEST_WORKER=1"}
	}
	argv, err := workers.Command(context.Background(), d.Worker)
	if err != nil {
		t.Fatalf("%s's worker: %v (scripts/deps.sh installs its library)", lock, err)
	}
	return argv, nil
}

func example(name string) []string {
	p, _ := filepath.Abs(filepath.Join("..", name))
	return []string{"python3", p}
}

// TestBundledWorkersConform checks every worker lockcheck ships: the Go
// worker for lockcheck's own recipe and for each Go library, the Python
// workers, and the protocol document's example worker. The ZooKeeper
// workers get a 3 s session: a 1 s session is lost, and the client says
// "lock uncertain", whenever a loaded machine starves a JVM or the client
// for a third of a second, which is a fault no check meant to inject. With
// it, Curator's release under a partition retries for longer than the
// default 10 s before it gives up, so they get 30 s to reply.
func TestBundledWorkersConform(t *testing.T) {
	tests := []struct {
		name, lock string
		argv       []string
		zk         bool
	}{
		{"check-worker", "redis-set-px", nil, false},
		{"check-worker-zk", "zk-sequential", nil, true},
		{"redsync", "redsync", nil, false},
		{"redislock", "redislock", nil, false},
		{"go-zookeeper-lock", "go-zookeeper-lock", nil, true},
		{"libkv-zk-lock", "libkv-zk-lock", nil, true},
		{"redis-py-lock", "redis-py-lock", nil, false},
		{"kazoo-lock", "kazoo-lock", nil, true},
		{"curator-mutex", "curator-mutex", nil, true},
		{"curator-mutex-lost-only", "curator-mutex-lost-only", nil, true},
		{"docs-example", "redis-set-px", example("docs/examples/worker.py"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, env := tt.argv, []string(nil)
			if argv == nil {
				argv, env = workerOf(t, tt.lock)
			}
			o := Options{Worker: argv, Env: env, Lock: tt.lock, Dir: t.TempDir()}
			if tt.zk {
				o.Lease, o.ReplyTimeout = 3*time.Second, 30*time.Second
			}
			rep, err := Check(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Conforms() {
				t.Fatalf("broken rules: %+v", rep.Broken)
			}
			d, _ := workloads.FindDesign(tt.lock)
			if want := RulesFor(d); len(rep.Checked) != len(want) {
				t.Errorf("checked %d rules of %d: %v", len(rep.Checked), len(want), rep.Checked)
			}
		})
	}
}

// TestBrokenWorker checks that a worker with three classic mistakes fails
// naming each broken rule.
func TestBrokenWorker(t *testing.T) {
	rep, err := Check(context.Background(), Options{Worker: example("conformance/testdata/broken_worker.py"),
		Lock: "redis-set-px", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]bool)
	for _, b := range rep.Broken {
		got[b.Rule] = true
		// Its commands under the cut time out (mistake 3 makes them fail),
		// and its socket, never closed on an error, stays dead once
		// healed: that breaks RuleProxies, but it does not dial around.
		if strings.Contains(b.Detail, DialsAround) {
			t.Errorf("a worker that uses its proxies reported as dialing around them: %+v", b)
		}
	}
	for _, want := range []string{RuleStdoutOnly, RuleVersion, RuleTimeout} {
		if !got[want] {
			t.Errorf("rule %q not reported broken; broken: %+v", want, rep.Broken)
		}
	}
	if got[RuleCycle] || got[RuleClose] {
		t.Errorf("rules the worker keeps reported broken: %+v", rep.Broken)
	}
}

// TestEveryServiceConforms runs the built-in worker through conformance on
// a design of each lock service beyond Redis and ZooKeeper: the topology
// comes from the service registry, and the open request carries what the
// service needs (a database login, Sentinels, the map of a cluster's
// announced addresses) exactly as a run sends it.
func TestEveryServiceConforms(t *testing.T) {
	for _, lock := range []string{"pg-advisory", "mysql-get-lock", "etcd-mutex", "redis-sentinel", "redis-cluster", "nats-kv", "nats-kv-r3"} {
		t.Run(lock, func(t *testing.T) {
			servicetest.Need(t, lock)
			argv, env := workerOf(t, lock)
			o := Options{Worker: argv, Env: env, Lock: lock, Dir: t.TempDir(), Lease: 2 * time.Second, ReplyTimeout: 30 * time.Second}
			rep, err := Check(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Conforms() {
				t.Fatalf("broken rules: %+v", rep.Broken)
			}
		})
	}
}
