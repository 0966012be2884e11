package clusters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Proc is a child process started in its own process group. Stop signals the
// whole group, so nothing the process started outlives it.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	err  error
	// stopping is set once the harness has asked the process to end
	// (Kill, Stop, a terminating Signal): its exit is then expected.
	stopping atomic.Bool
}

// StartProc starts argv in a new process group with stdout and stderr going
// to log (which may be nil). The child is also sent SIGKILL if the controller
// dies without cleaning up. When ctx carries an exit watch (WithExitWatch),
// the watch is told if the process exits without the harness asking it to.
func StartProc(ctx context.Context, name string, argv []string, dir string, log *os.File) (*Proc, error) {
	return StartProcEnv(ctx, name, argv, nil, dir, log)
}

// StartProcEnv is StartProc with env added to the controller's environment
// (a later entry overrides an earlier one of the same name).
func StartProcEnv(ctx context.Context, name string, argv, env []string, dir string, log *os.File) (*Proc, error) {
	return StartProcAs(ctx, name, argv, env, dir, log, nil)
}

// StartProcAs is StartProcEnv run as the user cred names (nil: as the
// controller's user), for servers that refuse to run as root.
func StartProcAs(ctx context.Context, name string, argv, env []string, dir string, log *os.File, cred *syscall.Credential) (*Proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Dir = dir
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, done: make(chan struct{})}
	watch := ExitWatchFrom(ctx)
	logPath := ""
	if log != nil {
		logPath = log.Name()
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		// The watch hears of the exit before Done closes, so whoever sees
		// Done (a start-up that failed, Kill) knows the report was made.
		if watch != nil && !p.stopping.Load() {
			watch(ServerExit{Name: name, Pid: cmd.Process.Pid, Status: exitStatus(err), Log: logPath, Tail: logTail(logPath, tailLines)})
		}
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id, which is also its process group id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process group.
func (p *Proc) Signal(sig syscall.Signal) error {
	if terminates(sig) {
		p.stopping.Store(true)
	}
	if p.Exited() {
		return nil
	}
	if err := syscall.Kill(-p.Pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s (pgid %d): %w", p.Name, p.Pid(), err)
	}
	return nil
}

// Kill sends SIGKILL to the group and waits for the process to exit.
func (p *Proc) Kill() error {
	// A stopped group must be continued to act on anything but SIGKILL;
	// SIGKILL works on stopped processes too.
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kill %s (pid %d): still running after SIGKILL", p.Name, p.Pid())
	}
}

// Stop asks the group to exit with SIGTERM (continuing it first, in case it
// is paused), and kills it when it has not exited within grace.
func (p *Proc) Stop(ctx context.Context, grace time.Duration) error {
	p.stopping.Store(true)
	if p.Exited() {
		return nil
	}
	_ = p.Signal(syscall.SIGCONT)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	return p.Kill()
}

// Poll calls f every 50 ms until it succeeds, ctx ends or timeout passes;
// the error then names what was not ready and f's last error. An error f
// wraps in pollStop ends it at once.
func Poll(ctx context.Context, timeout time.Duration, f func() error, what string) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		var stop pollStop
		if errors.As(err, &stop) {
			return stop.err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s: %w", what, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// PollEach polls (see Poll) until check(i) finds each of n things ready;
// check returns the i-th's name and why it is not ready, and the error
// names the first that is not.
func PollEach(ctx context.Context, timeout time.Duration, what string, n int, check func(i int) (string, error)) error {
	return Poll(ctx, timeout, func() error {
		for i := 0; i < n; i++ {
			if name, err := check(i); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}, what)
}

// Children returns the pids of pid's child processes, read from /proc. A
// server that puts its workers in process groups of their own (the
// PostgreSQL postmaster makes each backend a session leader) cannot be
// signalled as a group; the harness signals it and these pids instead.
func Children(pid int) []int {
	var out []int
	for c, f := range procStats() {
		if ppid, _ := strconv.Atoi(string(f[1])); ppid == pid {
			out = append(out, c)
		}
	}
	return out
}

// procStats reads /proc/<pid>/stat of every process: by pid, the fields
// after the command name (state, ppid, pgrp, ...; field n of proc(5) is
// at index n-3). A process whose stat cannot be read or has fewer than two
// such fields is left out.
func procStats() map[int][][]byte {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	out := make(map[int][][]byte, len(stats))
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if len(f) < 2 || err != nil {
			continue
		}
		out[pid] = f
	}
	return out
}

// SignalTree sends sig to p's process group and to each of p's children
// (which may have groups of their own).
func SignalTree(p *Proc, sig syscall.Signal) error {
	kids := Children(p.Pid())
	err := p.Signal(sig)
	for _, c := range kids {
		if e := syscall.Kill(c, sig); e != nil && !errors.Is(e, syscall.ESRCH) {
			err = errors.Join(err, fmt.Errorf("signal %s child %d: %w", p.Name, c, e))
		}
	}
	return err
}

// KillTree SIGKILLs p and its children and waits until p has exited and
// no child is left.
func KillTree(p *Proc) error {
	kids := Children(p.Pid())
	err := p.Kill()
	for _, c := range kids {
		_ = syscall.Kill(c, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range kids {
		for syscall.Kill(c, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return err
}
