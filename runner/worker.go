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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/workloads"
)

// openTimeout is how long a --worker-cmd worker may take to answer open.
const openTimeout = 10 * time.Second

// bundledOpenTimeout is how long lockcheck's own workers may take to answer
// open: the built-in Go worker, whose ZooKeeper and etcd clients wait for
// their session within it (under a load average of 40, a three-server
// ensemble took more than 10 s to give five clients their sessions), and a
// design's own worker in another language (a JVM or a Python interpreter),
// which starts slowly on a loaded machine. A worker that cannot connect
// says so in its reply at once; only a slow one waits this long.
const bundledOpenTimeout = 30 * time.Second

// openTimeout is how long a worker of this run may take to answer open.
func (r *run) openTimeout() time.Duration {
	if len(r.test.WorkerCmd) == 0 {
		return bundledOpenTimeout
	}
	return openTimeout
}

// workerProc is the controller's end of one worker process: requests go to
// its stdin, replies come from its stdout, one JSON line each.
type workerProc struct {
	slot, process int
	cmd           *exec.Cmd
	stdin         io.WriteCloser
	stderr        *stderrTail
	replies       chan workloads.Reply
	done          chan struct{} // closed when the process has exited and been waited for
	readErr       error         // why the reader stopped: a protocol error, or nil at the end of stdout
	exitErr       error         // the process's exit status, once done
	cpu           time.Duration // the process's user + system time, once done
	nextID        int64
	mu            sync.Mutex
	onEvent       func(workloads.Reply)
}

// quietSysmon is the GODEBUG setting builtinWorkerEnv adds.
const quietSysmon = "schedtrace=2147483647"

// builtinWorkerEnv is the environment added for this binary's own worker
// (check worker). GODEBUG=schedtrace with the longest period keeps the Go
// runtime's sysmon thread out of its deep sleep, from which every system
// call after an idle moment wakes it and resets it to 20 µs naps. A worker
// goes idle and busy again at every poll of a lock, and these wake-ups,
// not its work, were half of the workers' CPU time (docs/performance.md).
// The only visible effect is one scheduler trace line on stderr every
// 24.8 days of uptime, which the worker log drops.
func builtinWorkerEnv() []string {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "schedtrace=") {
		return nil
	}
	if godebug != "" {
		godebug += ","
	}
	return []string{"GODEBUG=" + godebug + quietSysmon}
}

// errNoReply means the worker did not answer in time or exited.
var errNoReply = errors.New("no reply from worker")

// replyTimeout is the errNoReply of a worker that did not answer within
// its time: it may still be alive (as against one that exited or whose
// pipe broke).
type replyTimeout struct{ after time.Duration }

func (e *replyTimeout) Error() string        { return fmt.Sprintf("%v within %s", errNoReply, e.after) }
func (e *replyTimeout) Is(target error) bool { return target == errNoReply }

// errProtocol means the worker wrote a line that is not a protocol reply or
// event: a broken worker, never a fault's doing.
var errProtocol = errors.New("wrote a line that is not protocol")

// workerError is a worker that could not be started or opened. Broken is
// set when no fault can explain it (the command cannot be started, the
// worker exited before answering open, wrote a line that is not protocol or
// speaks another protocol version): the run ends at once. A refused or late
// open is not Broken, since a fault in force may explain it.
type workerError struct {
	Process int
	Broken  bool
	// Refused is set when the worker answered open with fail.
	Refused bool
	Err     error
	// Started is set when the process was started.
	Started bool
	// Stderr is the worker's last non-empty stderr line.
	Stderr string
}

func (e *workerError) Error() string {
	s := fmt.Sprintf("worker for process %d: %v", e.Process, e.Err)
	if !e.Started {
		return s
	}
	if e.Stderr == "" {
		return s + "; it wrote nothing to stderr"
	}
	return fmt.Sprintf("%s; its last stderr line: %q", s, e.Stderr)
}

func (e *workerError) Unwrap() error { return e.Err }

// startWorker starts one worker process in its own process group and opens
// it with cfg. Its stderr goes to log, each line prefixed with its process
// id. onEvent receives the events the worker reports on its own. Every
// error is a *workerError.
func startWorker(ctx context.Context, argv, env []string, cfg workloads.Config, log io.Writer, timeout time.Duration, onEvent func(workloads.Reply)) (*workerProc, error) {
	fail := func(broken bool, err error, tail *stderrTail) error { // always a *workerError
		e := &workerError{Process: cfg.Process, Broken: broken, Err: err}
		if tail != nil {
			e.Started, e.Stderr = true, tail.Last()
		}
		return e
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	tail := &stderrTail{out: log, prefix: fmt.Sprintf("process %d: ", cfg.Process)}
	for _, e := range env {
		if strings.HasPrefix(e, "GODEBUG=") && strings.Contains(e, quietSysmon) {
			tail.dropSched = true
		}
	}
	cmd.Stderr = tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fail(true, fmt.Errorf("stdin pipe: %w", err), nil)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fail(true, fmt.Errorf("stdout pipe: %w", err), nil)
	}
	if err := cmd.Start(); err != nil {
		return nil, fail(true, fmt.Errorf("cannot start %q: %w", argv[0], err), nil)
	}
	w := &workerProc{process: cfg.Process, cmd: cmd, stdin: stdin, stderr: tail,
		replies: make(chan workloads.Reply, 16), done: make(chan struct{}), onEvent: onEvent}
	go w.read(stdout)
	reply, err := w.call(ctx, workloads.Request{F: workloads.FOpen, Config: &cfg}, timeout)
	var late *replyTimeout
	timedOut := errors.As(err, &late)
	if err != nil && !timedOut && !w.exited() {
		// A failed write means the worker is exiting: let it finish, so
		// the error says so and quotes its last words. This holds when
		// another slot's failure cancelled ctx meanwhile too: a worker
		// that exited is this slot's own failure, not a cancelled one.
		select {
		case <-w.done:
		case <-time.After(2 * time.Second):
		}
	}
	broken, refused := false, false
	switch {
	case w.exited() && errors.Is(w.readErr, errProtocol):
		broken, err = true, w.readErr
	case err != nil && w.exited():
		broken = true
		err = fmt.Errorf("exited before answering open (%v)", w.exitErr)
	case err != nil && ctx.Err() != nil:
		// Cancelled while waiting (another slot failed first, or an
		// interrupt), its worker still alive: not this worker's fault.
		if !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
	case timedOut:
		err = fmt.Errorf("no answer to open within %s", timeout)
	case err != nil:
		err = fmt.Errorf("open: %w", err)
	case reply.Type != "ok":
		refused, err = true, fmt.Errorf("open refused: %s", reply.Error)
	case reply.Protocol != workloads.ProtocolVersion:
		broken = true
		err = fmt.Errorf("worker speaks protocol %d, want %d", reply.Protocol, workloads.ProtocolVersion)
	}
	if err != nil {
		w.kill()
		e := fail(broken, err, tail)
		e.(*workerError).Refused = refused
		return nil, e
	}
	return w, nil
}

// read passes the worker's replies to call and its events to onEvent. A line
// that is neither ends the worker: it is killed, and readErr says why.
func (w *workerProc) read(stdout io.Reader) {
	defer close(w.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var r workloads.Reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || (r.ID == 0 && r.Event == "") {
			w.readErr = fmt.Errorf("%w: %s", errProtocol, quoteShort(sc.Text()))
			break
		}
		if r.Event != "" && r.ID == 0 {
			if w.onEvent != nil {
				w.onEvent(r)
			}
			continue
		}
		w.replies <- r
	}
	if err := sc.Err(); err != nil && w.readErr == nil {
		w.readErr = fmt.Errorf("%w: %v", errProtocol, err)
	}
	if w.readErr != nil {
		_ = syscall.Kill(-w.pid(), syscall.SIGKILL)
		_, _ = io.Copy(io.Discard, stdout)
	}
	w.exitErr = w.cmd.Wait()
	if ps := w.cmd.ProcessState; ps != nil {
		w.cpu = ps.UserTime() + ps.SystemTime()
	}
	w.stderr.flush()
}

// cpuTime returns the CPU time the worker process used, once it has exited
// and been waited for; 0 before.
func (w *workerProc) cpuTime() time.Duration {
	if !w.exited() {
		return 0
	}
	return w.cpu
}

// quoteShort quotes s, cut to 120 bytes.
func quoteShort(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%q...", s[:120])
	}
	return fmt.Sprintf("%q", s)
}

// exited reports whether the worker process has exited.
func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
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
		if w.exited() && w.readErr != nil {
			return workloads.Reply{}, fmt.Errorf("%w: %w", errNoReply, w.readErr)
		}
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
			if w.readErr != nil {
				return workloads.Reply{}, fmt.Errorf("%w: %w", errNoReply, w.readErr)
			}
			return workloads.Reply{}, fmt.Errorf("%w: worker exited (%v)", errNoReply, w.exitErr)
		case <-t.C:
			return workloads.Reply{}, &replyTimeout{timeout}
		case <-ctx.Done():
			return workloads.Reply{}, fmt.Errorf("%w: %w", errNoReply, ctx.Err())
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
