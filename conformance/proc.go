package conformance

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/internal/workerproc"
	"github.com/lockcheck/lockcheck/workloads"
)

// proc is one worker process under test, spoken to through the same
// controller end as a run's workers (workerproc): every line of its stdout
// is judged raw before it is parsed, and a line that breaks a rule is
// reported and dropped instead of ending the worker.
type proc struct {
	*workerproc.Proc
	report *Report

	mu       sync.Mutex
	answered map[int64]bool
}

// start starts argv in its own process group, its stderr appended to
// stderr.
func start(argv, env []string, stderr *os.File, rep *Report) (*proc, error) {
	p := &proc{report: rep, answered: make(map[int64]bool)}
	wp, err := workerproc.Start(argv, workerproc.Options{
		Env: env, Stderr: stderr,
		Line: func(wp *workerproc.Proc, line string, whole bool) (workloads.Reply, workerproc.Verdict, error) {
			r, v := p.judge(line, whole, wp.LastID())
			return r, v, nil
		},
		OnStray: func(want int64, got workloads.Reply) {
			rep.breaks(RuleReplies, "request %d got the reply to request %d first", want, got.ID)
		},
	})
	if err != nil {
		return nil, err
	}
	p.Proc = wp
	return p, nil
}

// judge sorts a stdout line: a reply (an object with an id) is delivered,
// an event (an object with event and no id) counted; a break of the rules
// on whole lines and protocol-only stdout is reported and the line dropped.
// Requests 1 to asked have been sent.
func (p *proc) judge(line string, whole bool, asked int64) (workloads.Reply, workerproc.Verdict) {
	var r workloads.Reply
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
		return r, workerproc.Skip
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		p.report.breaks(RuleStdoutOnly, "stdout line that is not a reply or an event: %q (%v)", clip(line), err)
		return r, workerproc.Skip
	}
	_, hasID := raw["id"]
	switch {
	case r.Event != "" && r.ID == 0:
		p.report.mu.Lock()
		p.report.events++
		p.report.mu.Unlock()
		return r, workerproc.Skip
	case !hasID:
		p.report.breaks(RuleStdoutOnly, "stdout line with neither an id nor an event: %q", clip(line))
		return r, workerproc.Skip
	}
	p.mu.Lock()
	dup := p.answered[r.ID]
	p.answered[r.ID] = true
	p.mu.Unlock()
	switch {
	case r.ID < 1 || r.ID > asked:
		p.report.breaks(RuleReplies, "a reply with id %d, which no request had: %q", r.ID, clip(line))
		return r, workerproc.Skip
	case dup:
		p.report.breaks(RuleReplies, "a second reply to request %d: %q", r.ID, clip(line))
		return r, workerproc.Skip
	}
	return r, workerproc.Deliver
}

// call sends req and waits up to timeout for its reply; it returns how
// long that took.
func (p *proc) call(req workloads.Request, timeout time.Duration) (workloads.Reply, time.Duration, error) {
	start := time.Now()
	r, err := p.Call(context.Background(), req, timeout)
	return r, time.Since(start), err
}

// exited waits up to d for the process to exit.
func (p *proc) exited(d time.Duration) bool { return p.WaitExit(d) }

// kill stops the worker's whole process group, once.
func (p *proc) kill() { p.Kill() }

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
