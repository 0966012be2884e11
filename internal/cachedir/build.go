package cachedir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrNoGo is returned when a build needs the go command and PATH has none.
var ErrNoGo = errors.New("the go command is not in PATH")

// GoBuild is a binary built once with the go command and kept in a folder
// of the cache directory: a server from its Go module, a worker linked
// with another version of a client library.
type GoBuild struct {
	// Dir is the folder it is kept in, with its build.log and lock file.
	Dir string
	// Binary names the built file in Dir.
	Binary string
	// What names the build in its progress lines and errors
	// ("go.etcd.io/etcd/server/v3@v3.6.16").
	What string
	// WorkDir is where the go command runs; "" means a fresh folder in Dir,
	// removed after the build (a throwaway module of the build's own).
	WorkDir string
	// Env is added to the environment of every go command.
	Env []string
	// Prepare, when set, runs in Dir before the first step (it may write
	// the files the steps read).
	Prepare func() error
	// Steps are the go command's arguments, one command each; the word
	// {out} stands for the file the last step writes (renamed to Binary
	// once every step passed).
	Steps [][]string
	// Timeout bounds the whole build; 0 means 30 minutes.
	Timeout time.Duration
}

// Path is where the built binary is kept.
func (g GoBuild) Path() string { return filepath.Join(g.Dir, g.Binary) }

// Build returns the kept binary, building it first when it is missing,
// with one progress line to w before the build and one after it. Two
// processes that need it at once build it once: the second waits on the
// first's lock file.
func (g GoBuild) Build(ctx context.Context, w io.Writer) (string, error) {
	out := g.Path()
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building %s: %w", g.What, ErrNoGo)
	}
	if err := os.MkdirAll(g.Dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", g.What, err)
	}
	unlock, err := Lock(ctx, filepath.Join(g.Dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("build %s: %w", g.What, err)
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil { // built while we waited
		return out, nil
	}
	timeout := g.Timeout
	if timeout == 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fmt.Fprintf(w, "building %s from %s (first use; a few minutes; kept in %s)\n", g.Binary, g.What, g.Dir)
	start := time.Now()
	if err := g.build(ctx, gobin, out); err != nil {
		return "", fmt.Errorf("build %s: %w", g.What, err)
	}
	fmt.Fprintf(w, "built %s from %s in %.0f s\n", g.Binary, g.What, time.Since(start).Seconds())
	return out, nil
}

// build runs the steps, writing to a temporary name that is renamed to out
// at the end; the go command's output goes to build.log in Dir.
func (g GoBuild) build(ctx context.Context, gobin, out string) error {
	work := g.WorkDir
	if work == "" {
		mod, err := os.MkdirTemp(g.Dir, "module-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(mod)
		work = mod
	}
	if g.Prepare != nil {
		if err := g.Prepare(); err != nil {
			return err
		}
	}
	logPath := filepath.Join(g.Dir, "build.log")
	lg, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lg.Close()
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	defer os.Remove(tmp)
	for _, step := range g.Steps {
		args := make([]string, len(step))
		for i, a := range step {
			args[i] = strings.ReplaceAll(a, "{out}", tmp)
		}
		cmd := exec.CommandContext(ctx, gobin, args...)
		cmd.Dir = work
		// Outside any workspace, with this go command (no toolchain
		// download), the build's own flags only.
		cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false -mod=mod"), g.Env...)
		cmd.Stdout, cmd.Stderr = lg, lg
		fmt.Fprintf(lg, "$ go %s\n", strings.Join(args, " "))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s: %w (log: %s%s)", args[0], err, logPath, lastLine(logPath))
		}
	}
	return os.Rename(tmp, out)
}

// lastLine returns ": " and the last non-blank line of the file at path,
// or "".
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}

// Lock takes an exclusive flock on path, waiting (and giving up when ctx
// ends), and returns its release.
func Lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for another build's lock %s: %w", path, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
