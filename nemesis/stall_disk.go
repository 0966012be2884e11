package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// The ops of the stall-disk fault.
const (
	// FStallDisk holds every fsync of a lock server until the fault ends;
	// FUnstallDisk lets them finish.
	FStallDisk   = "stall-disk"
	FUnstallDisk = "unstall-disk"
	// FStallLog holds the fsyncs of a lock server's write-ahead log only;
	// FUnstallLog lets them finish.
	FStallLog   = "stall-log"
	FUnstallLog = "unstall-log"
)

func init() {
	Register(Kind{Name: "stall-disk", New: newStallDisk,
		Summary: "hold every fsync and fdatasync of the current leader's server (a lock server where there is no leader) until the fault ends, " +
			"as a disk that stops answering does: its other threads go on serving clients (strace's syscall delay, from Debian's strace package; " +
			"local servers only). A raft leader stuck writing its log stops sending heartbeats, so the others elect a new leader, while it still answers " +
			"what needs no write (a raft leader stuck writing its log: the stale-leader lease reports in the bug library)",
		Ops: history.FaultOps{Start: FStallDisk, End: FUnstallDisk, Class: history.ClassNode, Exercise: history.ExerciseNode}})
	Register(Kind{Name: "stall-log", New: newStallLog,
		Summary: "as stall-disk, but hold only the fsyncs of the leader's write-ahead log files (those its cluster names), not its database's: " +
			"its raft loop stops at its next log write while the rest of the server, its lease keeping among it, goes on as if it still led " +
			"(a raft loop stuck on a slow disk or a busy CPU; local servers of a service that names its log files)",
		Ops: history.FaultOps{Start: FStallLog, End: FUnstallLog, Class: history.ClassNode, Exercise: history.ExerciseNode}})
}

// stallSyscalls are the calls a stalled disk holds: what a server calls to
// make its log durable.
const stallSyscalls = "fsync,fdatasync,sync_file_range"

// stallAttachWait is how long the nemesis waits for strace to attach to
// every thread of the server before it gives up on the fault.
const stallAttachWait = 5 * time.Second

// stallDisk delays the durable writes of a lock server by attaching strace
// to it with a syscall delay (ptrace: no change to the server, no root
// filesystem tricks) and detaches when the fault ends: the delayed calls
// then return. Killing strace detaches it too, so a lockcheck that dies
// (strace dies with it: Pdeathsig) leaves the server running.
type stallDisk struct {
	kind   string // stall-disk or stall-log, for its errors
	strace string
	pids   clusters.PidLister
	// logs, when set, names the files whose fsyncs are held (stall-log);
	// nil holds every fsync (stall-disk).
	logs  clusters.LogFiler
	mu    sync.Mutex
	procs map[string]*tracer // by node
}

// tracer is one strace process and the result of its Wait.
type tracer struct {
	cmd  *exec.Cmd
	done chan error
}

func newStallDisk(env Env, _ *rand.Rand) (Nemesis, error) {
	s, p, err := newStaller(env, "stall-disk")
	if err != nil {
		return nil, err
	}
	return &Leader{p: p, apply: s.stall, undo: s.unstall, start: FStallDisk, end: FUnstallDisk,
		verb: "stalled (every fsync held)", env: env, kind: "stall-disk"}, nil
}

func newStallLog(env Env, _ *rand.Rand) (Nemesis, error) {
	s, p, err := newStaller(env, "stall-log")
	if err != nil {
		return nil, err
	}
	lf, ok := env.Cluster().(clusters.LogFiler)
	if !ok {
		return nil, fmt.Errorf("stall-log nemesis: the service does not name its servers' log files (clusters.LogFiler): %w", clusters.ErrUnsupported)
	}
	s.logs = lf
	return &Leader{p: p, apply: s.stall, undo: s.unstall, start: FStallLog, end: FUnstallLog,
		verb: "stalled (its log's fsyncs held)", env: env, kind: "stall-log"}, nil
}

// newStaller returns the mechanism of the stall kinds and the cluster's
// leader finder.
func newStaller(env Env, kind string) (*stallDisk, clusters.Primary, error) {
	p, ok1 := env.Cluster().(clusters.Primary)
	pl, ok2 := env.Cluster().(clusters.PidLister)
	if !ok1 || !ok2 {
		return nil, nil, fmt.Errorf("%s nemesis: the cluster's servers are not local processes with a leader (clusters.Primary, clusters.PidLister): %w", kind, clusters.ErrUnsupported)
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		return nil, nil, fmt.Errorf("%s nemesis: %w: strace is not in PATH (install the package strace; scripts/deps.sh does)", kind, clusters.ErrMissingBinary)
	}
	return &stallDisk{kind: kind, strace: strace, pids: pl, procs: make(map[string]*tracer)}, p, nil
}

// stall attaches strace to node's server, every thread, holding each
// fsync for an hour (the fault ends it sooner by detaching), and waits
// until the server is traced.
func (s *stallDisk) stall(ctx context.Context, node string) error {
	pid, ok := s.pids.Pids()[node]
	if !ok {
		return fmt.Errorf("%s: node %s has no running server process", s.kind, node)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.procs[node]; busy {
		return nil
	}
	args := []string{"-f", "-qq", "-p", strconv.Itoa(pid), "-o", os.DevNull,
		"-e", "trace=" + stallSyscalls, "-e", "inject=" + stallSyscalls + ":delay_enter=3600000000"}
	if s.logs != nil {
		paths, err := s.logs.LogFiles(node)
		if err != nil {
			return fmt.Errorf("%s: %w", s.kind, err)
		}
		for _, p := range paths {
			args = append(args, "-P", p) // only calls on these paths are traced, and so held
		}
	}
	cmd := exec.Command(s.strace, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start strace on %s (pid %d): %w", s.kind, node, pid, err)
	}
	t := &tracer{cmd: cmd, done: make(chan error, 1)}
	go func() { t.done <- cmd.Wait() }()
	if err := t.awaitTraced(ctx, pid); err != nil {
		_ = t.stop()
		return fmt.Errorf("%s: strace on %s (pid %d): %w%s", s.kind, node, pid, err, quoted(stderr.String()))
	}
	s.procs[node] = t
	return nil
}

// unstall detaches strace from node's server: its held fsyncs go on.
func (s *stallDisk) unstall(_ context.Context, node string) error {
	s.mu.Lock()
	t, ok := s.procs[node]
	delete(s.procs, node)
	s.mu.Unlock()
	if !ok {
		return nil
	}
	if err := t.stop(); err != nil {
		return fmt.Errorf("%s on %s: %w", s.kind, node, err)
	}
	return nil
}

// awaitTraced waits until pid's TracerPid is strace's, or strace exited.
func (t *tracer) awaitTraced(ctx context.Context, pid int) error {
	deadline := time.Now().Add(stallAttachWait)
	for time.Now().Before(deadline) {
		if tp, err := tracerOf(pid); err == nil && tp == t.cmd.Process.Pid {
			// The first thread is traced; strace attaches the others
			// within milliseconds, and the next fsync of any is held.
			time.Sleep(50 * time.Millisecond)
			return nil
		}
		select {
		case err := <-t.done:
			t.done <- err // for stop
			return fmt.Errorf("strace exited before it attached (%v; is ptrace permitted here?)", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("strace did not attach within %s", stallAttachWait)
}

// tracerOf reads the TracerPid of pid from /proc.
func tracerOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no TracerPid line")
}

// stop detaches strace (SIGINT) and waits for it, killing it if it has
// not exited within two seconds (the kernel detaches a dead tracer's
// tracees).
func (t *tracer) stop() error {
	_ = t.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-t.done:
		return nil
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
		<-t.done
		return errors.New("strace did not detach within 2s; killed it")
	}
}

// quoted returns ": " and s's first line, or "" for an empty s.
func quoted(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	line, _, _ := strings.Cut(s, "\n")
	return ": " + line
}
