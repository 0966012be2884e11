package conformance

import (
	"bufio"
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

// proc is one worker process under test: requests go to its stdin, and
// every line of its stdout is read raw and judged before it is parsed.
type proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan workloads.Reply
	done    chan struct{} // closed when stdout ended and the process exited
	nextID  int64
	report  *Report
	killed  sync.Once

	mu       sync.Mutex
	answered map[int64]bool
	asked    map[int64]bool
}

// start starts argv in its own process group, its stderr appended to
// stderr.
func start(argv, env []string, stderr *os.File, rep *Report) (*proc, error) {
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
	p := &proc{cmd: cmd, stdin: stdin, replies: make(chan workloads.Reply, 64), done: make(chan struct{}),
		report: rep, answered: make(map[int64]bool), asked: make(map[int64]bool)}
	go p.read(stdout)
	return p, nil
}

// read judges every stdout line: a reply (an object with an id), an event
// (an object with event and no id), or a break of the rules on whole lines
// and protocol-only stdout.
func (p *proc) read(stdout io.Reader) {
	defer close(p.done)
	br := bufio.NewReaderSize(stdout, 64*1024)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			p.judge(strings.TrimSuffix(line, "\n"), strings.HasSuffix(line, "\n"))
		}
		if err != nil {
			break
		}
	}
	_ = p.cmd.Wait()
}

func (p *proc) judge(line string, whole bool) {
	if !whole {
		p.report.breaks(RuleWholeLines, "the last stdout line has no newline: %q", clip(line))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		if strings.Contains(line, `"event"`) || strings.Count(line, "{") > 1 {
			p.report.breaks(RuleWholeLines, "a line that is not one JSON object (two lines interleaved, or a line cut short): %q", clip(line))
		} else {
			p.report.breaks(RuleStdoutOnly, "stdout line that is not a protocol line: %q", clip(line))
		}
		return
	}
	var r workloads.Reply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		p.report.breaks(RuleStdoutOnly, "stdout line that is not a reply or an event: %q (%v)", clip(line), err)
		return
	}
	_, hasID := raw["id"]
	switch {
	case r.Event != "" && r.ID == 0:
		p.report.mu.Lock()
		p.report.events++
		p.report.mu.Unlock()
		return
	case !hasID:
		p.report.breaks(RuleStdoutOnly, "stdout line with neither an id nor an event: %q", clip(line))
		return
	}
	p.mu.Lock()
	dup, known := p.answered[r.ID], p.asked[r.ID]
	p.answered[r.ID] = true
	p.mu.Unlock()
	switch {
	case !known:
		p.report.breaks(RuleReplies, "a reply with id %d, which no request had: %q", r.ID, clip(line))
		return
	case dup:
		p.report.breaks(RuleReplies, "a second reply to request %d: %q", r.ID, clip(line))
		return
	}
	p.replies <- r
}

// errExited means the worker exited before it replied.
var errExited = errors.New("the worker exited without replying")

// errTimeout means no reply came in time.
var errTimeout = errors.New("no reply in time")

// call sends req and waits up to timeout for its reply. A reply to another
// request arriving first breaks the order rule.
func (p *proc) call(req workloads.Request, timeout time.Duration) (workloads.Reply, time.Duration, error) {
	p.nextID++
	req.ID = p.nextID
	p.mu.Lock()
	p.asked[req.ID] = true
	p.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return workloads.Reply{}, 0, err
	}
	start := time.Now()
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return workloads.Reply{}, 0, fmt.Errorf("%w (write request: %v)", errExited, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case r := <-p.replies:
			if r.ID != req.ID {
				p.report.breaks(RuleReplies, "request %d (%s) got the reply to request %d first", req.ID, req.F, r.ID)
				continue
			}
			return r, time.Since(start), nil
		case <-p.done:
			return workloads.Reply{}, time.Since(start), errExited
		case <-t.C:
			return workloads.Reply{}, time.Since(start), errTimeout
		}
	}
}

// exited waits up to d for the process to exit.
func (p *proc) exited(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// kill stops the worker's whole process group, once: a second kill does
// nothing (the group's id may belong to another process by then).
func (p *proc) kill() {
	p.killed.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.exited(10 * time.Second)
		_ = p.stdin.Close()
	})
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
