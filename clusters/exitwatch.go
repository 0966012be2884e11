package clusters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ServerExit describes a server process that exited although the harness
// did not ask it to: no Kill, Stop or terminating signal of the harness
// came first. It is an error, so a run can end with it.
type ServerExit struct {
	// Name is the process's name, the node's name for a server ("lock0",
	// "storage", "zk1", "pg0").
	Name string
	// Pid is the process id it had.
	Pid int
	// Status is how it ended: "exit status 1", "signal: killed".
	Status string
	// Log is the path of the log its output went to ("" for none).
	Log string
	// Tail is the log's last lines, oldest first.
	Tail []string
}

// Error names the server, its exit status and the last lines of its log.
func (e *ServerExit) Error() string {
	s := fmt.Sprintf("server %s (pid %d) exited during the run with no fault asking for it: %s", e.Name, e.Pid, e.Status)
	if e.Log == "" {
		return s
	}
	s += fmt.Sprintf("; log %s", e.Log)
	if len(e.Tail) > 0 {
		s += " ends: " + strings.Join(e.Tail, " | ")
	}
	return s
}

// ExitFunc is told of a server process's unexpected exit. It is called
// from the goroutine that waited for the process, once per process.
type ExitFunc func(ServerExit)

type exitWatchKey struct{}

// WithExitWatch returns a context under which every process started with
// StartProc (and its variants) reports to f if it exits without the
// harness asking it to. A topology's Setup and Restart start their servers
// under the context they are given, so a run that passes such a context
// learns of every server that dies on its own.
func WithExitWatch(ctx context.Context, f ExitFunc) context.Context {
	return context.WithValue(ctx, exitWatchKey{}, f)
}

// ExitWatchFrom returns the ExitFunc ctx carries (WithExitWatch), or nil:
// a topology whose servers are not local processes (containers) reports
// their unasked exits to it itself.
func ExitWatchFrom(ctx context.Context) ExitFunc {
	if ctx == nil {
		return nil
	}
	f, _ := ctx.Value(exitWatchKey{}).(ExitFunc)
	return f
}

// terminates reports whether sig is one the harness sends to end a process
// (so its exit after it is expected), as against SIGSTOP or SIGCONT.
func terminates(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT:
		return true
	}
	return false
}

// exitStatus words how a waited-for process ended.
func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}

// tailLines is how many log lines a ServerExit carries, and tailWidth how
// many bytes of each.
const (
	tailLines = 5
	tailWidth = 160
)

// logTail returns the last n non-empty lines of the file at path (read from
// its last 8 KiB), or nil when it cannot be read.
func logTail(path string, n int) []string {
	if path == "" {
		return nil
	}
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return nil
	}
	defer f.Close()
	const window = 8 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		if _, err := f.Seek(-window, io.SeekEnd); err != nil {
			return nil
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		if l := strings.TrimSpace(string(line)); l != "" {
			if len(l) > tailWidth {
				l = l[:tailWidth] + "..."
			}
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
