package runner

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// stderrTail passes a worker's stderr on to the run's worker log, one
// prefixed line per write, and keeps the last non-empty line, which a
// broken worker's error quotes.
type stderrTail struct {
	out    io.Writer
	prefix string
	// dropSched drops the Go runtime's scheduler trace lines ("SCHED
	// ..."), which builtinWorkerEnv's GODEBUG may print.
	dropSched bool

	mu      sync.Mutex
	partial []byte
	last    string
}

// maxPartial bounds a line kept while waiting for its newline.
const maxPartial = 4096

// Write implements io.Writer.
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.line(t.partial[:i])
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > maxPartial {
		t.line(t.partial)
		t.partial = nil
	}
	if len(t.partial) == 0 {
		t.partial = nil
	}
	return len(p), nil
}

func (t *stderrTail) line(b []byte) {
	s := strings.TrimRight(string(b), "\r")
	if t.dropSched && strings.HasPrefix(s, "SCHED ") {
		return
	}
	if strings.TrimSpace(s) != "" {
		t.last = strings.TrimSpace(s)
	}
	if t.out != nil {
		_, _ = io.WriteString(t.out, t.prefix+s+"\n")
	}
}

// flush writes out a last line that had no newline.
func (t *stderrTail) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.partial) > 0 {
		t.line(t.partial)
		t.partial = nil
	}
}

// Last returns the last non-empty line written so far, an unterminated one
// included.
func (t *stderrTail) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.partial)); s != "" {
		return s
	}
	return t.last
}
