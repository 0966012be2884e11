package nemesis

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// pids is a clusters.PidLister of fixed pids.
type pids map[string]int

func (p pids) Pids() map[string]int { return p }

// logFiles is a clusters.LogFiler that names the same files for every node.
type logFiles []string

func (l logFiles) LogFiles(string) ([]string, error) { return l, nil }

// TestStallDiskHoldsFsync: a process that fsyncs in a loop stops counting
// while stall-disk holds its fsyncs, and counts again once it lets go; a
// node with no process is an error.
func TestStallDiskHoldsFsync(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (scripts/deps.sh etcd installs it)")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	f := filepath.Join(t.TempDir(), "log")
	// Print a count after every fsync, a few a second, for at most 60 s.
	cmd := exec.Command(py, "-u", "-c", `
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
for i in range(600):
    os.write(fd, b"x")
    os.fsync(fd)
    print(i, flush=True)
    time.sleep(0.1)
`, f)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	counts := make(chan int, 1000)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			n, _ := strconv.Atoi(sc.Text())
			counts <- n
		}
		close(counts)
	}()
	next := func(within time.Duration) (int, bool) {
		select {
		case n, ok := <-counts:
			return n, ok
		case <-time.After(within):
			return 0, false
		}
	}
	if _, ok := next(10 * time.Second); !ok {
		t.Fatal("the fsync loop printed nothing")
	}
	s := &stallDisk{strace: strace, pids: pids{"n1": cmd.Process.Pid}, procs: make(map[string]*tracer)}
	ctx := context.Background()
	if err := s.stall(ctx, "n1"); err != nil {
		t.Fatalf("stall: %v", err)
	}
	if tp, err := tracerOf(cmd.Process.Pid); err != nil || tp == 0 {
		t.Errorf("TracerPid %d (%v) while stalled: want strace's", tp, err)
	}
	// Drain what was printed before the stall took hold, then expect
	// silence: at most one more count (an fsync already past strace).
	time.Sleep(300 * time.Millisecond)
	for len(counts) > 0 {
		<-counts
	}
	if n, ok := next(1500 * time.Millisecond); ok {
		if m, ok := next(1500 * time.Millisecond); ok {
			t.Errorf("counts %d and %d while every fsync was held", n, m)
		}
	}
	if err := s.unstall(ctx, "n1"); err != nil {
		t.Fatalf("unstall: %v", err)
	}
	if _, ok := next(5 * time.Second); !ok {
		t.Error("no count within 5 s after the stall ended")
	}
	if tp, err := tracerOf(cmd.Process.Pid); err != nil || tp != 0 {
		t.Errorf("TracerPid %d (%v) after the stall: want 0", tp, err)
	}
	// stall-log: holding another file's fsyncs leaves the loop counting;
	// holding its own file's stops it.
	for _, tt := range []struct {
		files  logFiles
		silent bool
	}{{logFiles{filepath.Join(t.TempDir(), "other")}, false}, {logFiles{filepath.Dir(f), f}, true}} {
		s.logs = tt.files
		if err := s.stall(ctx, "n1"); err != nil {
			t.Fatalf("stall-log %v: %v", tt.files, err)
		}
		time.Sleep(300 * time.Millisecond)
		for len(counts) > 0 {
			<-counts
		}
		_, ok1 := next(1500 * time.Millisecond)
		_, ok2 := next(1500 * time.Millisecond)
		if silent := !(ok1 && ok2); silent != tt.silent {
			t.Errorf("stall-log of %v: the fsync loop silent %v, want %v", tt.files, silent, tt.silent)
		}
		if err := s.unstall(ctx, "n1"); err != nil {
			t.Fatalf("unstall-log: %v", err)
		}
		if _, ok := next(5 * time.Second); !ok {
			t.Error("no count within 5 s after the log stall ended")
		}
	}
	s.logs = nil
	if err := s.stall(ctx, "n2"); err == nil {
		t.Error("stall of a node with no process: want an error")
	}
	if err := s.unstall(ctx, "n2"); err != nil {
		t.Errorf("unstall of a node never stalled: %v, want nothing to do", err)
	}
}

// TestTracerOf reads this test's own TracerPid (0: not traced) and fails
// on a pid that does not exist.
func TestTracerOf(t *testing.T) {
	if tp, err := tracerOf(os.Getpid()); err != nil || tp != 0 {
		t.Errorf("tracerOf(self) = %d, %v; want 0, nil", tp, err)
	}
	if _, err := tracerOf(1 << 30); err == nil {
		t.Error("tracerOf(no such pid): want an error")
	}
	for in, want := range map[string]string{"": "", "  \n": "", "strace: attach: Operation not permitted\nmore": ": strace: attach: Operation not permitted"} {
		if got := quoted(in); got != want {
			t.Errorf("quoted(%q) = %q, want %q", in, got, want)
		}
	}
}
