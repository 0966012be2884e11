package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/workloads"
)

// brokenWorker is this test binary as a worker that breaks the protocol in
// the way mode names; it returns the exit code.
func brokenWorker(mode string) int {
	fmt.Fprintf(os.Stderr, "broken worker %s starting\n", mode)
	switch mode {
	case "exit": // exits before answering open
		fmt.Fprintln(os.Stderr, "fatal: cannot load the lock client")
		return 1
	case "garbage": // a line that is not protocol instead of the open reply
		fmt.Println("hello, I am not JSON")
		time.Sleep(time.Minute)
	case "silent": // never answers open
		time.Sleep(time.Minute)
	case "old": // speaks protocol 1
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println(`{"id":1,"type":"ok","protocol":1}`)
		}
	case "refuse", "refuse-once": // refuses open (always, or the first time per process id)
		sc := bufio.NewScanner(os.Stdin)
		if !sc.Scan() {
			return 1
		}
		line := sc.Text()
		var req workloads.Request
		if err := json.Unmarshal([]byte(line), &req); err != nil || req.Config == nil {
			return 1
		}
		if mode == "refuse-once" {
			marker := filepath.Join(os.Getenv("LOCKCHECK_TEST_STATE"), fmt.Sprint(req.Config.Process))
			f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil { // refused once already: serve
				_ = workloads.Serve(context.Background(), io.MultiReader(strings.NewReader(line+"\n"), os.Stdin), os.Stdout)
				return 0
			}
			f.Close()
		}
		fmt.Fprintln(os.Stderr, "cannot reach the lock service yet")
		fmt.Printf(`{"id":%d,"type":"fail","error":"connection closed"}`+"\n", req.ID)
		for sc.Scan() {
		}
	case "bypass": // serves, but dials LOCKCHECK_BYPASS_ADDR instead of the lock_addrs it was given
		sc := bufio.NewScanner(os.Stdin)
		if !sc.Scan() {
			return 1
		}
		var req workloads.Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.Config == nil {
			return 1
		}
		req.Config.LockAddrs = []string{os.Getenv("LOCKCHECK_BYPASS_ADDR")}
		line, err := json.Marshal(req)
		if err != nil {
			return 1
		}
		_ = workloads.Serve(context.Background(), io.MultiReader(strings.NewReader(string(line)+"\n"), os.Stdin), os.Stdout)
		return 0
	case "fail-acquire", "exit-acquire", "banana": // opens, then fails, exits on or misanswers every acquire
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			var req workloads.Request
			if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
				return 1
			}
			switch {
			case req.F == workloads.FOpen || req.F == workloads.FClose:
				fmt.Printf(`{"id":%d,"type":"ok","protocol":%d}`+"\n", req.ID, workloads.ProtocolVersion)
			case mode == "exit-acquire":
				return 1
			case mode == "banana":
				fmt.Printf(`{"id":%d,"type":"banana"}`+"\n", req.ID)
			default:
				fmt.Printf(`{"id":%d,"type":"fail","error":"lock is held"}`+"\n", req.ID)
			}
		}
	case "garbage-later": // serves, then writes a line that is not protocol
		pr, pw := io.Pipe()
		go func() {
			sc := bufio.NewScanner(pr)
			for n := 0; sc.Scan(); n++ {
				if n == 6 {
					fmt.Fprintln(os.Stderr, "debug: about to print to stdout")
					fmt.Println("DEBUG acquire took 3ms")
				}
				fmt.Println(sc.Text())
			}
		}()
		_ = workloads.Serve(context.Background(), os.Stdin, pw)
		time.Sleep(time.Minute)
	}
	return 0
}

// TestBrokenWorkerEndsTheRun: a worker that cannot start, exits before
// answering open, writes a line that is not protocol (at open or later),
// speaks another protocol or never answers open ends the run at once with
// an error naming the cause and the worker's last stderr line; the history
// is kept and nothing is left running.
func TestBrokenWorkerEndsTheRun(t *testing.T) {
	tests := []struct {
		mode   string
		cmd    string // instead of this binary
		want   []string
		within time.Duration // after the cluster is up
	}{
		{"", "/nonexistent/worker", []string{`cannot start "/nonexistent/worker"`, "no such file"}, 5 * time.Second},
		{"exit", "", []string{"exited before answering open (exit status 1)", `last stderr line: "fatal: cannot load the lock client"`}, 5 * time.Second},
		{"garbage", "", []string{`wrote a line that is not protocol: "hello, I am not JSON"`, `last stderr line: "broken worker garbage starting"`}, 5 * time.Second},
		{"old", "", []string{"worker speaks protocol 1, want 2"}, 5 * time.Second},
		{"silent", "", []string{"no answer to open within 10s", `last stderr line: "broken worker silent starting"`}, openTimeout + 5*time.Second},
		{"refuse", "", []string{"open refused: connection closed", `last stderr line: "cannot reach the lock service yet"`}, openTimeout + 5*time.Second},
		{"garbage-later", "", []string{`wrote a line that is not protocol: "DEBUG acquire took 3ms"`, `last stderr line: "debug: about to print to stdout"`}, 10 * time.Second},
	}
	for _, tt := range tests {
		name := tt.mode
		if name == "" {
			name = "missing"
		}
		t.Run(name, func(t *testing.T) {
			test := quick(t, "redis-set-px", "none", false)
			test.Time = time.Minute
			test.WorkerEnv = []string{"LOCKCHECK_TEST_WORKER=" + tt.mode}
			if tt.cmd != "" {
				test.WorkerCmd = []string{tt.cmd}
			}
			start := time.Now()
			out, err := Run(context.Background(), test, io.Discard)
			took := time.Since(start)
			var we *workerError
			if err == nil || !errors.As(err, &we) || !we.Broken {
				t.Fatalf("got %v, want a broken-worker error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			// The bound includes cluster setup, generous on a busy machine;
			// what must not happen is waiting out the minute.
			if took > tt.within+20*time.Second {
				t.Errorf("took %s", took)
			}
			if _, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl")); err != nil {
				t.Errorf("history not kept: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(out.Dir, "workers.log")); tt.cmd == "" && !strings.Contains(string(b), "broken worker") {
				t.Errorf("workers.log lacks the workers' stderr:\n%s", b)
			}
			assertNoChildren(t)
		})
	}
}

// TestStderrTail: lines go to the log with the prefix, the last non-empty
// one is kept (an unterminated one too), and scheduler traces are dropped
// when asked.
func TestStderrTail(t *testing.T) {
	var log strings.Builder
	tail := &stderrTail{out: &log, prefix: "process 3: ", dropSched: true}
	for _, w := range []string{"first li", "ne\nsecond\n\n", "SCHED 0ms: gomaxprocs=1\n", "  \n", "partial"} {
		_, _ = tail.Write([]byte(w))
	}
	if got := tail.Last(); got != "partial" {
		t.Errorf("last %q, want the unterminated line", got)
	}
	tail.flush()
	want := "process 3: first line\nprocess 3: second\nprocess 3: \nprocess 3:   \nprocess 3: partial\n"
	if log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	if got := tail.Last(); got != "partial" {
		t.Errorf("last after flush %q", got)
	}
}

// TestRefusedOpenAtStartIsTriedAgain: a worker whose first open is refused
// (a lock service that drops a first connection) is started again, and the
// run goes on.
func TestRefusedOpenAtStartIsTriedAgain(t *testing.T) {
	test := quick(t, "redis-set-px", "none", false)
	test.WorkerEnv = []string{"LOCKCHECK_TEST_WORKER=refuse-once", "LOCKCHECK_TEST_STATE=" + t.TempDir()}
	test.Time, test.Until = patient, untilGrants(5)
	test.Lease = safeLease // no lease may run out in a run without faults
	_, h := runValid(t, test)
	if n := countGrants(h); n < 5 {
		t.Errorf("%d grants", n)
	}
	assertNoChildren(t)
}

// TestRunNoticesWorkersThatBypassProxies runs workers that dial a Redis
// server of their own instead of the proxy addresses they were given: they
// are granted locks, yet nothing crosses their proxies, so a partition
// would cut nothing. The run ends in an error naming the slots (exit 3 in
// the CLI), never a verdict of valid. The built-in worker under the same
// test is not accused.
func TestRunNoticesWorkersThatBypassProxies(t *testing.T) {
	needService(t, "redis-set-px")
	dir := t.TempDir()
	side := &redisnode.RedisServer{Name: "side", Dir: dir, LogPath: filepath.Join(dir, "side.log")}
	if err := side.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer side.Stop(context.Background())
	for _, bypass := range []bool{false, true} {
		t.Run(fmt.Sprintf("bypass=%v", bypass), func(t *testing.T) {
			tt := exerciseTest(t, "redis-set-px", "none")
			tt.Workers, tt.Time = 2, 20*time.Second
			tt.Until = func(h history.History) bool { return countOK(h, history.FAcquire) >= 4 }
			if bypass {
				tt.WorkerEnv = []string{"LOCKCHECK_TEST_WORKER=bypass", "LOCKCHECK_BYPASS_ADDR=" + side.Addr()}
			}
			out, err := Run(context.Background(), tt, io.Discard)
			var by *BypassedProxies
			if !bypass {
				if err != nil {
					t.Fatalf("honest workers: %v", err)
				}
				return
			}
			if !errors.As(err, &by) || len(by.Slots) != 2 {
				t.Fatalf("bypassing workers: error %v, want a *BypassedProxies naming both slots", err)
			}
			if !out.Checked || out.Result.Valid == checker.Valid {
				t.Errorf("checked %v, verdict %v: want the history checked and not valid", out.Checked, out.Result.Valid)
			}
		})
	}
}

// countOK counts the ok completions of f in h.
func countOK(h history.History, f string) int {
	n := 0
	for _, op := range h {
		if op.F == f && op.Type == history.OK {
			n++
		}
	}
	return n
}
