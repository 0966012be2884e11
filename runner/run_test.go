package runner

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// TestMain lets the test binary serve as a worker process: the runner starts
// it again with LOCKCHECK_TEST_WORKER=1, exactly as `check worker`.
// Other values of LOCKCHECK_TEST_WORKER make it a broken worker (see
// brokenWorker).
func TestMain(m *testing.M) {
	switch mode := os.Getenv("LOCKCHECK_TEST_WORKER"); mode {
	case "":
		os.Exit(m.Run())
	case "1":
		if err := workloads.ServeStdio(context.Background()); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	default:
		os.Exit(brokenWorker(mode))
	}
}

// quick returns a short test of lock under nem that runs this binary as its
// workers.
// runValid runs tt, wants it valid, and returns its outcome and the history
// it stored.
func runValid(t *testing.T, tt Test) (Outcome, history.History) {
	t.Helper()
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Valid != checker.Valid {
		t.Fatalf("verdict %v: %+v", out.Result.Valid, out.Result.Anomalies)
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return out, h
}

// control is a control run of lock: with no fault, it ends at its 20th
// grant and once also holds, when also is set; patient bounds it, and its
// lease is one that no run without faults outlasts.
func control(t *testing.T, lock string, also func(history.History) bool) Test {
	tt := quick(t, lock, "none", false)
	grants20 := untilGrants(20)
	tt.Time, tt.Lease, tt.Until = patient, safeLease, grants20
	if also != nil {
		tt.Until = func(h history.History) bool { return grants20(h) && also(h) }
	}
	return tt
}

func quick(t testing.TB, lock, nem string, fencing bool) Test {
	return Test{Lock: lock, Nemesis: nem, Fencing: fencing, Workers: 5, Seed: 1,
		Time: 6 * time.Second, Lease: 300 * time.Millisecond, Think: 10 * time.Millisecond, NemesisInterval: 1500 * time.Millisecond,
		NemesisDuration: 900 * time.Millisecond, Store: t.TempDir(),
		WorkerCmd: []string{os.Args[0]}, WorkerEnv: []string{"LOCKCHECK_TEST_WORKER=1"}, ownWorker: true}
}

func kinds(res checker.Result, fenced bool) map[string]int {
	m := make(map[string]int)
	for _, a := range res.Anomalies {
		if a.Fenced == fenced {
			m[a.Kind]++
		}
	}
	return m
}

func grants(t *testing.T, dir string) int {
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK {
			n++
		}
	}
	return n
}

// noneRuns says, for each lock service, where TestRunNoNemesisIsValid finds
// the log of its first lock node, or which test runs that service's designs
// instead. A service missing here fails the test, so a new one is not left
// out unseen.
var noneRuns = map[string]struct{ node, coveredBy string }{
	"redis":          {node: "nodes/lock0.log"},
	"redis-sentinel": {node: "nodes/redis0.log"},
	"zookeeper":      {node: "nodes/zk1.log"},
	"etcd":           {node: "nodes/etcd1.log"},
	"postgres":       {coveredBy: "TestRunSQLDesigns"},
	"mariadb":        {coveredBy: "TestRunSQLDesigns"},
	"redis-cluster":  {coveredBy: "TestRunRedisCluster"},
	"redis-zk":       {coveredBy: "TestRunRedisZK"},
	"nats":           {coveredBy: "TestRunNATS"},
}

// TestRunNoNemesisIsValid runs each built-in design of a service in
// noneRuns with no fault until it has 20 grants: valid, with every file of
// a run directory written.
func TestRunNoNemesisIsValid(t *testing.T) {
	for _, d := range workloads.Designs() {
		if len(d.Worker) > 0 {
			continue // a worker in another language: TestRunLibraries
		}
		t.Run(d.Name, func(t *testing.T) {
			svc, ok := noneRuns[d.Service]
			if !ok {
				t.Fatalf("service %s of %s is not in noneRuns: name its first lock node's log or the test that covers it", d.Service, d.Name)
			}
			if svc.coveredBy != "" {
				t.Skipf("the %s designs are tested by %s", d.Service, svc.coveredBy)
			}
			tt := control(t, d.Name, nil)
			if len(d.Workloads) > 0 {
				tt.Workload = d.Workloads[0] // redis-watch-inventory runs the inventory only
			}
			out, _ := runValid(t, tt)
			if n := grants(t, out.Dir); n < 20 {
				t.Errorf("only %d grants in %s", n, tt.Time)
			}
			node := svc.node
			for _, f := range []string{"test.json", "history.jsonl", history.SidecarName, "results.json", "report.html", node, "nodes/storage.log", "workers.log"} {
				if _, err := os.Stat(filepath.Join(out.Dir, f)); err != nil {
					t.Errorf("run dir lacks %s: %v", f, err)
				}
			}
			assertSidecarIsTheJSON(t, out.Dir)
			if target, err := os.Readlink(filepath.Join(tt.Store, "latest")); err != nil || filepath.Join(tt.Store, target) != out.Dir {
				t.Errorf("store/latest -> %q (%v), want %s", target, err, out.Dir)
			}
			assertNoChildren(t)
		})
	}
}

func TestRunPause(t *testing.T) {
	overlap, fencing := checker.NewOverlap(checker.Options{}), checker.NewFencing()
	tests := []struct {
		lock     string
		fencing  bool
		want     checker.Validity
		mustFind string          // an anomaly kind that must be present
		fenced   bool            // ... with this Fenced mark
		finder   checker.Checker // the checker that finds it, to wait for it
	}{
		{"redis-set-px", false, checker.Invalid, "double-holder", false, overlap},
		// A pause that outlasts the lease while its process is in the
		// critical section makes its write stale: the run waits for one,
		// and the resource must have refused it.
		{"redis-set-px", true, checker.Valid, "stale-write-rejected", true, fencing},
		{"redis-set-px-del", false, checker.Invalid, "foreign-release", false, overlap},
		{"redlock", false, checker.Invalid, "double-holder", false, overlap},
	}
	for _, tt := range tests {
		name := tt.lock
		if tt.fencing {
			name += "-fenced"
		}
		t.Run(name, func(t *testing.T) {
			test := quick(t, tt.lock, "pause", tt.fencing)
			test.Time, test.Until = patient, untilAnomaly(tt.finder, tt.mustFind)
			out, err := Run(context.Background(), test, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			got := kinds(out.Result, tt.fenced)
			if out.Result.Valid != tt.want || got[tt.mustFind] == 0 {
				t.Fatalf("verdict %v with anomalies %v; want %v with a %s anomaly", out.Result.Valid, got, tt.want, tt.mustFind)
			}
			for _, a := range out.Result.Anomalies {
				if a.Kind == "double-holder" && (len(a.Processes) != 2 || a.Processes[0] == a.Processes[1]) {
					t.Errorf("double holder must name two processes: %+v", a)
				}
			}
			assertNoChildren(t)
		})
	}
}

// TestRunInterrupted interrupts a run once it has recorded some ops (not
// after a fixed time, which a busy machine may spend setting up): the run
// ends soon, says so, leaves nothing running and keeps its partial history.
func TestRunInterrupted(t *testing.T) {
	tt := quick(t, "redis-set-px", "pause", false)
	tt.Time = patient
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled atomic.Int64 // unix nanoseconds of the interrupt
	tt.Until = func(h history.History) bool {
		if len(h) >= 40 && cancelled.Load() == 0 {
			cancelled.Store(time.Now().UnixNano())
			cancel()
		}
		return false
	}
	out, err := Run(ctx, tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	at := cancelled.Load()
	if at == 0 || !out.Interrupted {
		t.Fatalf("interrupted=%v, interrupt sent: %v", out.Interrupted, at != 0)
	}
	if took := time.Since(time.Unix(0, at)); took > 30*time.Second {
		t.Errorf("the run ended %s after the interrupt", took)
	}
	assertNoChildren(t)
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil || len(h) < 40 {
		t.Fatalf("partial history: %d ops, %v", len(h), err)
	}
	if _, err := h.Pairs(); err != nil {
		t.Errorf("partial history is not well formed: %v", err)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	for _, tt := range []struct{ lock, nem, want string }{
		{"zookeeper-magic", "none", `unknown lock "zookeeper-magic" (known: `},
		{"redis-set-px", "earthquake", `unknown nemesis "earthquake"`},
	} {
		_, err := Run(context.Background(), quick(t, tt.lock, tt.nem, false), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("lock %q nemesis %q: got %v, want %q", tt.lock, tt.nem, err, tt.want)
		}
	}
	_, err := Run(context.Background(), quick(t, "redlock", "none", true), io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "redlock hands out no fencing token: ") {
		t.Errorf("redlock --fencing: got %v, want a no-token error", err)
	}
}

// assertNoChildren fails when any process this test started is still alive:
// a server or worker outliving its run is a harness bug.
func assertNoChildren(t *testing.T, except ...int) {
	t.Helper()
	awaitNone(t, 5*time.Second, 50*time.Millisecond, "processes left running", func() (left []string) {
		for pid, c := range testChildren() {
			if c.state != "Z" && !slices.Contains(except, pidOf(pid)) {
				left = append(left, pid+" "+c.name)
			}
		}
		return left
	})
}

// awaitNone polls left every step until it returns nothing, and fails the
// test, saying what is left, if it still returns something after within.
func awaitNone(t *testing.T, within, step time.Duration, what string, left func() []string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l := left()
		if len(l) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, l)
		}
		time.Sleep(step)
	}
}

// TestRunKillAndPartition checks the two faults that a single-node SET NX PX
// lock survives (a killed node keeps its keys in its append-only file; a
// holder cut off only delays its release), that they did happen, and that a
// refused connection does not become a busy loop.
func TestRunKillAndPartition(t *testing.T) {
	for _, nem := range []string{"kill", "partition"} {
		t.Run(nem, func(t *testing.T) {
			tt := quick(t, "redis-set-px", nem, false)
			// Wait for what the assertions need: a fault that ended, a
			// grant after it, and for the partition an info op.
			tt.Time, tt.Until = patient, func(h history.History) bool {
				fs := h.Faults()
				if len(fs) == 0 || len(fs[0].Ops) < 2 { // not undone yet
					return false
				}
				grantAfter, info := false, nem != "partition"
				for _, op := range h {
					grantAfter = grantAfter || op.F == history.FAcquire && op.Type == history.OK && op.Time > fs[0].End
					info = info || !op.IsNemesis() && op.Type == history.Info && op.F != history.FCrash && op.F != history.FEvent
				}
				return grantAfter && info
			}
			_, h := runValid(t, tt)
			faults, fails, infos := len(h.Faults()), 0, 0
			for _, op := range h {
				switch {
				case op.F == history.FAcquire && op.Type == history.Fail:
					fails++
				case !op.IsNemesis() && op.Type == history.Info && op.F != history.FCrash && op.F != history.FEvent:
					infos++
				}
			}
			if faults == 0 {
				t.Fatal("no fault took effect")
			}
			if nem == "partition" && infos == 0 {
				t.Error("a partition of the holder produced no info op")
			}
			// 5 workers, a 100 ms mean back-off, under 2 s of faults.
			if fails > 500 {
				t.Errorf("%d failed acquires: refused connections are retried in a busy loop", fails)
			}
			assertNoChildren(t)
		})
	}
}

// TestRunZooKeeperSessionExpiry is the zk-session-expiry story, short: the
// paused holder's session expires, another worker is granted the lock, and
// the first writes on resume. Fenced, the czxid check refuses that write.
func TestRunZooKeeperSessionExpiry(t *testing.T) {
	for _, fencing := range []bool{false, true} {
		t.Run(map[bool]string{false: "unfenced", true: "fenced"}[fencing], func(t *testing.T) {
			tt := quick(t, "zk-ephemeral", "pause", fencing)
			// A 50 ms critical section: a pause then nearly always lands
			// between the holder's read and its write, and three pauses
			// fit in 12 s.
			tt.Lease, tt.Think = time.Second, 50*time.Millisecond
			tt.NemesisInterval, tt.NemesisDuration = 1500*time.Millisecond, 3*time.Second
			// Wait for the double holder (fenced too: the overlap is there,
			// the resource refuses its writes).
			tt.Time, tt.Until = patient, untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder")
			out, err := Run(context.Background(), tt, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var story string
			for _, a := range out.Result.Anomalies {
				if a.Kind == "double-holder" {
					story = a.Explanation
				}
			}
			got := kinds(out.Result, fencing)
			switch {
			// Whether the resumed holder writes is a race between its think
			// timer and its ZooKeeper client noticing the lost session
			// (Curator's check): sometimes the care works. The double
			// holder is certain; the stale write is not.
			case !fencing && (out.Result.Valid != checker.Invalid || got["double-holder"] == 0):
				t.Fatalf("verdict %v, anomalies %v: want invalid with a double holder", out.Result.Valid, got)
			case fencing && out.Result.Valid != checker.Valid:
				t.Fatalf("verdict %v, anomalies %v: want valid", out.Result.Valid, got)
			case !strings.Contains(story, "ZooKeeper session 0x") || !strings.Contains(story, "expired"):
				t.Errorf("the double-holder story does not name the expired session: %s", story)
			}
			// The report draws the tokens as the stories name them, zxids
			// as epoch:counter (the plan tells it the design's kind).
			if page, err := os.ReadFile(filepath.Join(out.Dir, "report.html")); !fencing && (err != nil || !strings.Contains(string(page), " held lock k0 (zxid ")) {
				t.Errorf("the report's incident names no zxid (%v)", err)
			}
			assertNoChildren(t)
		})
	}
}

// child is a child process of this test, as /proc/PID/stat gives it.
type child struct {
	name  string // "pid (comm)"
	state string // R, S, Z, ...
}

// testChildren returns this test process's children by pid, read from /proc.
// pidOf reads a /proc entry's pid.
func pidOf(name string) int {
	n, _ := strconv.Atoi(name)
	return n
}

func testChildren() map[string]child {
	self := strconv.Itoa(os.Getpid())
	out := make(map[string]child)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) > 1 && fields[1] == self {
			out[e.Name()] = child{name: s[:end+1], state: fields[0]}
		}
	}
	return out
}

// assertSidecarIsTheJSON checks that reading the run's history (through
// its sidecar) gives what parsing its history.jsonl gives.
func assertSidecarIsTheJSON(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "history.jsonl")
	got, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := history.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the sidecar's %d ops are not the JSON's %d", len(got), len(want))
	}
}
