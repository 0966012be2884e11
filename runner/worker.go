package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/internal/workerproc"
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

// workerProc is the controller's end of one worker process (the shared
// workerproc.Proc), with the tail of its stderr for error messages.
type workerProc struct {
	*workerproc.Proc
	process int
	stderr  *stderrTail
	// thenCS is set when the worker runs a critical section right after a
	// grant on request (its open reply listed workloads.ThenCS), and
	// thenRelease when it also releases the lock after it
	// (workloads.ThenCSRelease).
	thenCS, thenRelease bool
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
var errNoReply = workerproc.ErrNoReply

// replyTimeout is the errNoReply of a worker that did not answer within
// its time: it may still be alive (as against one that exited or whose
// pipe broke).
type replyTimeout = workerproc.Timeout

// errProtocol means the worker wrote a line that is not a protocol reply or
// event: a broken worker, never a fault's doing.
var errProtocol = workerproc.ErrProtocol

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
// id. Its stdout goes to mux when that is set (the run's built-in
// workers). onEvent receives the events the worker reports on its own,
// onReply every reply, on the goroutine that read it (workerproc.Options).
// Every error is a *workerError.
func startWorker(ctx context.Context, argv, env []string, cfg workloads.Config, log io.Writer, timeout time.Duration,
	mux *workerproc.Mux, onEvent, onReply func(workloads.Reply)) (*workerProc, error) {
	fail := func(broken bool, err error, tail *stderrTail) error { // always a *workerError
		e := &workerError{Process: cfg.Process, Broken: broken, Err: err}
		if tail != nil {
			e.Started, e.Stderr = true, tail.Last()
		}
		return e
	}
	tail := &stderrTail{out: log, prefix: fmt.Sprintf("process %d: ", cfg.Process)}
	for _, e := range env {
		if strings.HasPrefix(e, "GODEBUG=") && strings.Contains(e, quietSysmon) {
			tail.dropSched = true
		}
	}
	p, err := workerproc.Start(argv, workerproc.Options{Env: env, Stderr: tail, OnEvent: onEvent, OnReply: onReply,
		AfterExit: tail.flush, Mux: mux})
	if err != nil {
		return nil, fail(true, err, nil)
	}
	w := &workerProc{Proc: p, process: cfg.Process, stderr: tail}
	reply, err := w.Call(ctx, workloads.Request{F: workloads.FOpen, Config: &cfg}, timeout)
	var late *replyTimeout
	timedOut := errors.As(err, &late)
	if err != nil && !timedOut && !w.Exited() {
		// A failed write means the worker is exiting: let it finish, so
		// the error says so and quotes its last words. This holds when
		// another slot's failure cancelled ctx meanwhile too: a worker
		// that exited is this slot's own failure, not a cancelled one.
		w.WaitExit(2 * time.Second)
	}
	broken, refused := false, false
	switch {
	case w.Exited() && errors.Is(w.ReadErr(), errProtocol):
		broken, err = true, w.ReadErr()
	case err != nil && w.Exited():
		broken = true
		err = fmt.Errorf("exited before answering open (%v)", w.ExitErr())
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
		w.Kill()
		e := fail(broken, err, tail)
		e.(*workerError).Refused = refused
		return nil, e
	}
	w.thenCS = slices.Contains(reply.Then, workloads.ThenCS)
	w.thenRelease = slices.Contains(reply.Then, workloads.ThenCSRelease)
	return w, nil
}
