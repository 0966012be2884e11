package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// syncBuffer is a log writer a test can read while the run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// nodeAddr returns the address the run's "cluster ready" line gives node.
func nodeAddr(log, node string) string {
	for _, line := range strings.Split(log, "\n") {
		_, list, ok := strings.Cut(line, "cluster ready in ")
		if !ok {
			continue
		}
		_, list, _ = strings.Cut(list, ": ")
		for _, n := range strings.Split(list, ", ") {
			if name, addr, ok := strings.Cut(n, " "); ok && name == node {
				return addr
			}
		}
	}
	return ""
}

// listenerPid returns the pid of this test's child process that listens on
// addr (127.0.0.1:port), read from /proc, or 0.
func listenerPid(addr string) int {
	_, portStr, _ := strings.Cut(addr, ":")
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return 0
	}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0
	}
	inode := ""
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// sl local_address rem_address st ... inode (the 10th field)
		if len(f) > 9 && strings.HasSuffix(f[1], fmt.Sprintf(":%04X", port)) && f[3] == "0A" {
			inode = f[9]
		}
	}
	if inode == "" {
		return 0
	}
	for pid := range testChildren() {
		fds, _ := os.ReadDir(filepath.Join("/proc", pid, "fd"))
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name())); l == "socket:["+inode+"]" {
				n, _ := strconv.Atoi(pid)
				return n
			}
		}
	}
	return 0
}

// nodeSignal is a Test.Until that, once 5 grants are recorded, sends sig
// to the child process of this test that listens at node's address (read
// from the run's log) and never ends the run itself; pid is the process it
// signalled, err why it could not.
type nodeSignal struct {
	log  *syncBuffer
	node string
	sig  syscall.Signal
	pid  int
	err  error
}

func (n *nodeSignal) until(h history.History) bool {
	if n.pid != 0 || countGrants(h) < 5 {
		return false
	}
	pid := listenerPid(nodeAddr(n.log.String(), n.node))
	if pid == 0 {
		n.err = fmt.Errorf("no process of this test listens at %s's address", n.node)
		return true
	}
	n.pid, n.err = pid, syscall.Kill(pid, n.sig)
	return false
}

// TestServerDeathEndsTheRun: a lock or storage server that is killed from
// outside during a run with no fault (so nothing of the run asked for it)
// ends the run at once with an error naming the server, its exit status
// and its log; the history recorded so far is kept and checked, and the
// verdict of a run with no anomaly is not valid. (TestRunKillAndPartition
// shows that a kill fault of the run itself is not taken for one.)
func TestServerDeathEndsTheRun(t *testing.T) {
	for _, tc := range []struct{ name, lock, node string }{
		{"lock node", "redis-set-px", "lock0"},
		{"storage node", "redis-set-px", "storage"},
		{"postgres", "pg-advisory", "pg0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needService(t, tc.lock)
			before := dbServers()
			test := quick(t, tc.lock, "none", false)
			test.Lease = safeLease
			log := &syncBuffer{}
			sig := &nodeSignal{log: log, node: tc.node, sig: syscall.SIGKILL}
			test.Time, test.Until = patient, sig.until
			start := time.Now()
			out, err := Run(context.Background(), test, log)
			killed, killErr := sig.pid, sig.err
			if killErr != nil {
				t.Fatalf("kill %s: %v", tc.node, killErr)
			}
			if killed == 0 {
				t.Fatalf("the run ended before the server was killed: %v", err)
			}
			var se *clusters.ServerExit
			if !errors.As(err, &se) || se.Name != tc.node || se.Pid != killed {
				t.Fatalf("got %v, want the exit of %s (pid %d)", err, tc.node, killed)
			}
			for _, want := range []string{"server " + tc.node, "signal: killed", filepath.Join("nodes", tc.node)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if took := time.Since(start); took > patient/2 {
				t.Errorf("the run went on for %s after its server died", took)
			}
			if !out.Checked || out.Result.Valid == checker.Valid {
				t.Errorf("checked %v, verdict %v: want the history checked and not valid", out.Checked, out.Result.Valid)
			}
			if out.Result.Valid == checker.Unknown && !strings.Contains(out.Result.Error, "server "+tc.node) {
				t.Errorf("the unknown verdict's reason %q does not name the server", out.Result.Error)
			}
			h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
			if err != nil {
				t.Errorf("history not kept: %v", err)
			}
			// The history says so itself: analyze of it is not valid either.
			exits := 0
			for _, op := range h {
				if op.F == history.FServerExit && op.Value != nil && len(op.Value.Ext().Nodes) == 1 && op.Value.Ext().Nodes[0] == tc.node {
					exits++
				}
			}
			if exits != 1 {
				t.Errorf("%d server-exit ops for %s in the history, want 1", exits, tc.node)
			}
			if err := history.Validate(h); err != nil {
				t.Errorf("the stored history is refused: %v", err)
			}
			if res := checker.Default(mustResolve(t, test).CheckOptions()).Check(context.Background(), h); res.Valid == checker.Valid {
				t.Errorf("the stored history re-checks valid")
			}
			if _, err := os.Stat(filepath.Join(out.Dir, "results.json")); err != nil {
				t.Errorf("results.json not written: %v", err)
			}
			assertNoChildren(t)
			assertNoNewServers(t, before)
		})
	}
}

// TestBrokenWorkerIsNeverInvalid: a worker that opens and then fails every
// acquire, or exits on every acquire, leaves a run that proves nothing
// (unknown, never invalid); one that replies with a type outside the
// protocol ends the run with a protocol error.
func TestBrokenWorkerIsNeverInvalid(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		wantErr string // "" for no error, an unknown verdict
	}{
		{"fail-acquire", ""},
		{"exit-acquire", ""},
		{"banana", `wrote a line that is not protocol: a reply of type "banana" to acquire`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			test := quick(t, "redis-set-px", "none", false)
			test.Time = 3 * time.Second
			test.WorkerEnv = []string{"LOCKCHECK_TEST_WORKER=" + tc.mode}
			out, err := Run(context.Background(), test, io.Discard)
			if tc.wantErr != "" {
				var we *workerError
				if err == nil || !errors.As(err, &we) || !we.Broken || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want a broken-worker error with %q", err, tc.wantErr)
				}
				assertNoChildren(t)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Result.Valid != checker.Unknown || len(out.Result.Anomalies) != 0 {
				t.Fatalf("verdict %v with %d anomalies, want unknown with none", out.Result.Valid, len(out.Result.Anomalies))
			}
			if !strings.Contains(out.Result.Error, "no process was ever granted a lock") {
				t.Errorf("reason %q", out.Result.Error)
			}
			assertNoChildren(t)
		})
	}
}

// TestFullStoreStillGivesAVerdict: a store that fills during the run stops
// the workload; the history held in memory is checked, the error names
// what was not saved in one line, history.jsonl holds whole lines only and
// no temporary file is left. It needs a small tmpfs (root).
func TestFullStoreStillGivesAVerdict(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", store, "tmpfs", 0, "size=160k"); err != nil {
		t.Skipf("cannot mount a small tmpfs for the store (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(store, syscall.MNT_DETACH) })
	test := quick(t, "redis-set-px", "none", false)
	test.Store, test.Lease, test.Time = store, safeLease, patient
	start := time.Now()
	out, err := Run(context.Background(), test, io.Discard)
	var se *storeError
	if !errors.As(err, &se) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want a full store", err)
	}
	if took := time.Since(start); took > patient/2 {
		t.Errorf("the run went on for %s after the store filled", took)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "the store could not save history.jsonl") ||
		!strings.HasSuffix(msg, ": no space left on device") {
		t.Errorf("error %q: want one line naming history.jsonl and the cause", msg)
	}
	if !out.Checked || out.Ops == 0 || out.Result.Valid == checker.Valid || len(out.Result.Results) == 0 {
		t.Errorf("checked %v, %d ops, verdict %v: want the held history checked, not valid", out.Checked, out.Ops, out.Result.Valid)
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Errorf("history.jsonl does not read: %v", err)
	}
	if len(h) == 0 || len(h) >= out.Ops {
		t.Errorf("history.jsonl holds %d of %d ops: want the ones before the disk filled", len(h), out.Ops)
	}
	tmps, _ := filepath.Glob(filepath.Join(out.Dir, "*.tmp"))
	if len(tmps) > 0 {
		t.Errorf("partial files left: %v", tmps)
	}
	assertNoChildren(t)
}

// TestHungStorageEndsTheRun: a storage node stopped from outside (SIGSTOP:
// alive, answering nothing) during a run with no fault ends the run with an
// error naming it once it has been silent for storageSilence; the history
// says so and is checked.
func TestHungStorageEndsTheRun(t *testing.T) {
	test := quick(t, "redis-set-px", "none", false)
	test.Lease = safeLease
	log := &syncBuffer{}
	sig := &nodeSignal{log: log, node: "storage", sig: syscall.SIGSTOP}
	test.Time, test.Until = patient, sig.until
	out, err := Run(context.Background(), test, log)
	stopped, stopErr := sig.pid, sig.err
	if stopped != 0 {
		_ = syscall.Kill(stopped, syscall.SIGCONT) // already torn down, unless the test failed
	}
	if stopErr != nil {
		t.Fatalf("stop the storage node: %v", stopErr)
	}
	var un *Unresponsive
	if stopped == 0 || !errors.As(err, &un) || un.Name != "storage" || un.Silence <= storageSilence {
		t.Fatalf("got %v, want the storage node unresponsive for over %s", err, storageSilence)
	}
	if !out.Checked || out.Result.Valid == checker.Valid {
		t.Errorf("checked %v, verdict %v: want the history checked and not valid", out.Checked, out.Result.Valid)
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if res := checker.Default(mustResolve(t, test).CheckOptions()).Check(context.Background(), h); res.Valid == checker.Valid {
		t.Error("the stored history re-checks valid")
	}
	assertNoChildren(t)
}
