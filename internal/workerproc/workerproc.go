// Package workerproc is the controller's end of the worker protocol
// (docs/worker-protocol.md): it starts a worker process in its own process
// group, writes requests to its stdin one JSON line each, reads its stdout
// line by line and hands each reply to the call that asked for it and each
// event to a callback. `check run` (runner) and `check conformance`
// (conformance) both speak to workers through it; they differ only in what
// they make of a line that breaks the protocol, which Options.Line decides.
package workerproc

import (
	"bufio"
	"bytes"
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

// MaxLine is the longest stdout line a worker may write, newline included;
// a longer one is a protocol error.
const MaxLine = 1 << 20

// ErrNoReply means a request got no reply: the worker did not answer in
// time, exited, broke the protocol, or the call was cancelled.
var ErrNoReply = errors.New("no reply from worker")

// ErrProtocol means the worker wrote a line that is not a protocol reply or
// event: a broken worker, never a fault's doing.
var ErrProtocol = errors.New("wrote a line that is not protocol")

// Timeout is the ErrNoReply of a worker that did not answer within its
// time: it may still be alive (as against one that exited).
type Timeout struct{ After time.Duration }

func (e *Timeout) Error() string        { return fmt.Sprintf("%v within %s", ErrNoReply, e.After) }
func (e *Timeout) Is(target error) bool { return target == ErrNoReply }

// Verdict is what Options.Line makes of one stdout line.
type Verdict int

const (
	// Deliver passes the line's reply to the call waiting for its id.
	Deliver Verdict = iota
	// Event passes the line's reply, an event, to Options.OnEvent.
	Event
	// Skip drops the line (the Line hook has dealt with it).
	Skip
)

// Line judges one stdout line (without its newline; whole is false for a
// last line with no newline). It returns what to do with the parsed reply,
// or an error that ends the reading: the worker is killed, and every call
// then fails with that error.
type Line func(p *Proc, line string, whole bool) (workloads.Reply, Verdict, error)

// Options say how to start and read a worker.
type Options struct {
	// Env is added to the controller's environment.
	Env []string
	// Stderr receives the worker's stderr.
	Stderr io.Writer
	// Line judges each stdout line; nil is Strict.
	Line Line
	// OnEvent receives the events the worker reports on its own.
	OnEvent func(workloads.Reply)
	// OnStray is called for a reply that arrives while a call waits for
	// another id (a late reply to an earlier request); nil drops it.
	OnStray func(want int64, got workloads.Reply)
	// OnReply, when set, is called with each reply on the goroutine
	// that read it, before the reply is handed to the call waiting for it
	// (a late one too): the controller records completions there, in the
	// order the replies were read.
	OnReply func(workloads.Reply)
	// AfterExit runs once the process has exited and been waited for.
	AfterExit func()
	// Mux, when set, is the channel the worker's stdout goes to, shared
	// with other workers and read in the order they wrote (see Mux).
	Mux *Mux
}

// Proc is one running worker process.
type Proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	opts    Options
	replies chan workloads.Reply
	done    chan struct{} // closed when the process has exited and been waited for
	readErr error         // why reading stopped early, nil at the end of stdout
	exitErr error         // the process's exit status, once done
	cpu     time.Duration // user + system time, once done
	killed  sync.Once
	// partial is the start of a line a worker on a Mux has not ended
	// yet (under the mux's lock).
	partial   []byte
	mu        sync.Mutex
	nextID    int64
	closeOnce sync.Once
}

// Start starts argv in its own process group (killed with the controller)
// and begins reading its stdout.
func Start(argv []string, o Options) (*Proc, error) {
	if len(argv) == 0 {
		return nil, errors.New("no worker command")
	}
	if o.Line == nil {
		o.Line = Strict
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stderr = o.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	var stdout io.ReadCloser
	if o.Mux != nil {
		cmd.Stdout = o.Mux.w
	} else if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %q: %w", argv[0], err)
	}
	p := &Proc{cmd: cmd, stdin: stdin, opts: o, replies: make(chan workloads.Reply, 64), done: make(chan struct{})}
	if o.Mux != nil {
		o.Mux.add(p)
		go p.waitMux()
		return p, nil
	}
	go p.read(stdout)
	return p, nil
}

// Strict is the Line of a run: a reply (an id) is delivered, an event (an
// event and no id) goes to OnEvent, and anything else ends the worker with
// ErrProtocol.
func Strict(_ *Proc, line string, _ bool) (workloads.Reply, Verdict, error) {
	var r workloads.Reply
	if err := json.Unmarshal([]byte(line), &r); err != nil || (r.ID == 0 && r.Event == "") {
		return r, Skip, fmt.Errorf("%w: %s", ErrProtocol, QuoteShort(line))
	}
	if r.Event != "" && r.ID == 0 {
		return r, Event, nil
	}
	return r, Deliver, nil
}

// read reads stdout to its end (or the first line Line refuses), then waits
// for the process.
func (p *Proc) read(stdout io.Reader) {
	defer close(p.done)
	br := bufio.NewReaderSize(stdout, 64*1024)
	for p.readErr == nil {
		line, err := readLine(br)
		if len(line) > 0 || err == errLong {
			p.take(line, err)
		}
		if err != nil {
			break
		}
	}
	if p.readErr != nil {
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		_, _ = io.Copy(io.Discard, stdout)
	}
	p.exited(p.cmd.Wait())
}

// waitMux waits for a worker on a Mux to exit, then hands over what it
// wrote before it did, a last line with no newline too.
func (p *Proc) waitMux() {
	defer close(p.done)
	err := p.cmd.Wait()
	m := p.opts.Mux
	m.remove(p)
	m.mu.Lock()
	if len(p.partial) > 0 && p.readErr == nil {
		p.take(string(p.partial), io.EOF)
	}
	p.partial = nil
	m.mu.Unlock()
	p.exited(err)
}

// feed takes a chunk of a worker's stdout read from a Mux: it hands over
// each line the chunk ends. Called under the mux's lock.
func (p *Proc) feed(b []byte) {
	for p.readErr == nil && len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.partial = append(p.partial, b...)
			if len(p.partial) > MaxLine {
				p.take("", errLong)
			}
			break
		}
		line := b[:i+1]
		if len(p.partial) > 0 {
			line = append(p.partial, line...)
			p.partial = nil
		}
		b = b[i+1:]
		if len(line) > MaxLine {
			p.take("", errLong)
			break
		}
		p.take(string(line), nil)
	}
	if p.readErr != nil {
		p.partial = nil
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	}
}

// exited keeps the process's exit status err and CPU time and runs
// AfterExit.
func (p *Proc) exited(err error) {
	p.exitErr = err
	if ps := p.cmd.ProcessState; ps != nil {
		p.cpu = ps.UserTime() + ps.SystemTime()
	}
	if p.opts.AfterExit != nil {
		p.opts.AfterExit()
	}
}

// errLong is readLine's error for a line over MaxLine.
var errLong = errors.New("line too long")

// readLine reads one line, its newline kept, at most MaxLine bytes.
func readLine(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		chunk, err := br.ReadSlice('\n')
		b.Write(chunk)
		if b.Len() > MaxLine {
			return "", errLong
		}
		if err != bufio.ErrBufferFull {
			return b.String(), err
		}
	}
}

// take judges one line and passes its reply on.
func (p *Proc) take(line string, err error) {
	if err == errLong {
		p.readErr = fmt.Errorf("%w: a line over %d bytes", ErrProtocol, MaxLine)
		return
	}
	r, v, err := p.opts.Line(p, strings.TrimSuffix(line, "\n"), strings.HasSuffix(line, "\n"))
	switch {
	case err != nil:
		p.readErr = err
	case v == Event && p.opts.OnEvent != nil:
		p.opts.OnEvent(r)
	case v == Deliver:
		if p.opts.OnReply != nil {
			p.opts.OnReply(r)
		}
		p.replies <- r
	}
}

// LastID returns the id of the last request sent (ids run 1, 2, ...).
func (p *Proc) LastID() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nextID
}

// Call sends one request, its id set, and waits at most timeout for its
// reply. Every error wraps ErrNoReply: *Timeout when the time ran out, the
// reading's error when the worker broke the protocol, else its exit or
// ctx's error.
//
// A request with Then set takes an id more for each step it asks the
// worker to run next (workloads.ThenSteps): their replies come with the
// ids after the request's, the last of them LastID(), and Await waits for
// each.
func (p *Proc) Call(ctx context.Context, req workloads.Request, timeout time.Duration) (workloads.Reply, error) {
	p.mu.Lock()
	p.nextID++
	req.ID = p.nextID
	p.nextID += int64(workloads.ThenSteps(req.Then))
	p.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return workloads.Reply{}, err
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		if p.Exited() && p.readErr != nil {
			return workloads.Reply{}, fmt.Errorf("%w: %w", ErrNoReply, p.readErr)
		}
		return workloads.Reply{}, fmt.Errorf("%w: write request: %v", ErrNoReply, err)
	}
	return p.Await(ctx, req.ID, timeout)
}

// Await waits at most timeout for the reply with id, one sent for a
// request already written; its errors are Call's.
func (p *Proc) Await(ctx context.Context, id int64, timeout time.Duration) (workloads.Reply, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case r := <-p.replies:
			if r.ID != id {
				if p.opts.OnStray != nil {
					p.opts.OnStray(id, r)
				}
				continue
			}
			return r, nil
		case <-p.done:
			// The reader hands every reply over before it closes done, so
			// a reply that came just before the worker exited (close's, say)
			// is still waiting: select may have picked done first.
			if r, ok := p.leftReply(id); ok {
				return r, nil
			}
			if p.readErr != nil {
				return workloads.Reply{}, fmt.Errorf("%w: %w", ErrNoReply, p.readErr)
			}
			return workloads.Reply{}, fmt.Errorf("%w: worker exited (%v)", ErrNoReply, p.exitErr)
		case <-t.C:
			return workloads.Reply{}, &Timeout{timeout}
		case <-ctx.Done():
			return workloads.Reply{}, fmt.Errorf("%w: %w", ErrNoReply, ctx.Err())
		}
	}
}

// leftReply takes the reply to request id from those the reader handed
// over before it stopped, false when there is none; the others are strays.
func (p *Proc) leftReply(id int64) (workloads.Reply, bool) {
	for {
		select {
		case r := <-p.replies:
			if r.ID == id {
				return r, true
			}
			if p.opts.OnStray != nil {
				p.opts.OnStray(id, r)
			}
		default:
			return workloads.Reply{}, false
		}
	}
}

// Done is closed once the process has exited and been waited for.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited and been waited for.
func (p *Proc) Exited() bool { return isClosed(p.done) }

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// WaitExit waits up to d for the process to exit and reports whether it did.
func (p *Proc) WaitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// ReadErr is why reading stopped before the end of stdout (a protocol
// error), nil otherwise; valid once Exited.
func (p *Proc) ReadErr() error {
	if !p.Exited() {
		return nil
	}
	return p.readErr
}

// ExitErr is the process's exit status; valid once Exited.
func (p *Proc) ExitErr() error {
	if !p.Exited() {
		return nil
	}
	return p.exitErr
}

// CPU returns the user + system time the process used, once it has exited;
// 0 before.
func (p *Proc) CPU() time.Duration {
	if !p.Exited() {
		return 0
	}
	return p.cpu
}

// Pid returns the worker's pid, which is also its process group id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Kill stops the worker's whole process group with SIGKILL, once, and
// waits up to 10 s for it: a second Kill does nothing (the group's id may
// belong to another process by then).
func (p *Proc) Kill() {
	p.killed.Do(func() {
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		p.WaitExit(10 * time.Second)
		p.closeStdin()
	})
}

// Close asks the worker to exit (it is continued first, in case a fault
// stopped it), and kills it if it has not within grace.
func (p *Proc) Close(grace time.Duration) {
	_ = syscall.Kill(-p.Pid(), syscall.SIGCONT)
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_, _ = p.Call(ctx, workloads.Request{F: workloads.FClose}, grace)
	p.closeStdin()
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	p.Kill()
}

func (p *Proc) closeStdin() { p.closeOnce.Do(func() { _ = p.stdin.Close() }) }

// QuoteShort quotes s, cut to 120 bytes.
func QuoteShort(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%q...", s[:120])
	}
	return fmt.Sprintf("%q", s)
}
