package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/workloads"
)

// workerProc is the controller's end of one worker process: requests go to
// its stdin, replies come from its stdout, one JSON line each.
type workerProc struct {
	slot, process int
	cmd           *exec.Cmd
	stdin         io.WriteCloser
	replies       chan workloads.Reply
	done          chan struct{} // closed when the process has exited
	readErr       error
	nextID        int64
	mu            sync.Mutex
	onEvent       func(workloads.Reply)
}

// errNoReply means the worker did not answer in time or exited.
var errNoReply = errors.New("no reply from worker")

// startWorker starts one worker process in its own process group and opens
// it with cfg.
// onEvent receives the events the worker reports on its own.
func startWorker(ctx context.Context, argv, env []string, cfg workloads.Config, stderr *os.File, timeout time.Duration, onEvent func(workloads.Reply)) (*workerProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("worker stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("worker stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %q: %w", argv[0], err)
	}
	w := &workerProc{process: cfg.Process, cmd: cmd, stdin: stdin,
		replies: make(chan workloads.Reply, 16), done: make(chan struct{}), onEvent: onEvent}
	go w.read(stdout)
	reply, err := w.call(ctx, workloads.Request{F: workloads.FOpen, Config: &cfg}, timeout)
	if err == nil && reply.Type != "ok" {
		err = errors.New(reply.Error)
	}
	if err == nil && reply.Protocol != workloads.ProtocolVersion {
		err = fmt.Errorf("worker speaks protocol %d, want %d", reply.Protocol, workloads.ProtocolVersion)
	}
	if err != nil {
		w.kill()
		return nil, fmt.Errorf("open worker for process %d: %w", cfg.Process, err)
	}
	return w, nil
}

func (w *workerProc) read(stdout io.Reader) {
	defer close(w.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var r workloads.Reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			w.readErr = fmt.Errorf("malformed reply %q: %w", sc.Text(), err)
			return
		}
		if r.Event != "" && r.ID == 0 {
			if w.onEvent != nil {
				w.onEvent(r)
			}
			continue
		}
		w.replies <- r
	}
	w.readErr = sc.Err()
	_ = w.cmd.Wait()
}

// pid returns the worker's pid, which is also its process group id.
func (w *workerProc) pid() int { return w.cmd.Process.Pid }

// call sends one request and waits for its reply, at most timeout.
func (w *workerProc) call(ctx context.Context, req workloads.Request, timeout time.Duration) (workloads.Reply, error) {
	w.mu.Lock()
	w.nextID++
	req.ID = w.nextID
	w.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return workloads.Reply{}, err
	}
	if _, err := w.stdin.Write(append(b, '\n')); err != nil {
		return workloads.Reply{}, fmt.Errorf("%w: write request: %v", errNoReply, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case r := <-w.replies:
			if r.ID != req.ID {
				continue // a late reply to an earlier request
			}
			return r, nil
		case <-w.done:
			return workloads.Reply{}, fmt.Errorf("%w: worker exited (%v)", errNoReply, w.readErr)
		case <-t.C:
			return workloads.Reply{}, fmt.Errorf("%w within %s", errNoReply, timeout)
		case <-ctx.Done():
			return workloads.Reply{}, fmt.Errorf("%w: %v", errNoReply, ctx.Err())
		}
	}
}

// kill stops the worker's whole process group with SIGKILL and waits for it.
func (w *workerProc) kill() {
	_ = syscall.Kill(-w.pid(), syscall.SIGKILL)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
	}
	_ = w.stdin.Close()
}

// close asks the worker to exit, and kills it if it does not within grace.
func (w *workerProc) close(grace time.Duration) {
	_ = syscall.Kill(-w.pid(), syscall.SIGCONT)
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_, _ = w.call(ctx, workloads.Request{F: workloads.FClose}, grace)
	_ = w.stdin.Close()
	select {
	case <-w.done:
	case <-ctx.Done():
	}
	w.kill()
}
