package clusters

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

	"github.com/lockcheck/lockcheck/internal/cachedir"
	"github.com/lockcheck/lockcheck/internal/suggest"
)

// ServerVersion is one version of a service's server that a run can ask
// for (check run --service-version): the one Debian installs, or one the
// project builds from the server's Go module on first use and keeps in
// the cache directory. A service lists its versions in its own
// registration (Service.Versions), the default first.
type ServerVersion struct {
	// Name is the --service-version value ("3.6.16").
	Name string
	// Aliases are other names for it ("debian").
	Aliases []string
	// Summary says where the server comes from, for check list.
	Summary string
	// Server returns the path of the version's server binary, building it
	// first when it is not in the cache yet (one line of progress to w
	// before a build and one after it).
	Server func(ctx context.Context, w io.Writer) (string, error)
	// Reported returns the version the server binary at path reports of
	// itself ("" when it cannot tell), which test.json records.
	Reported func(path string) string
}

// Names returns the version's name and aliases.
func (v ServerVersion) Names() []string { return append([]string{v.Name}, v.Aliases...) }

// FindVersion returns the version of s called name (a name or an alias),
// its default version for "", or an error naming the versions s has. A
// service that lists no versions has only the one installed: "" finds
// the zero version (Server nil), any name is refused.
func (s Service) FindVersion(name string) (ServerVersion, error) {
	if name == "" {
		if len(s.Versions) == 0 {
			return ServerVersion{}, nil
		}
		return s.Versions[0], nil
	}
	if len(s.Versions) == 0 {
		return ServerVersion{}, fmt.Errorf("--service-version %s: service %s has only the server installed on this machine (services with versions: %s)",
			name, s.Name, strings.Join(servicesWithVersions(), ", "))
	}
	var names []string
	for _, v := range s.Versions {
		for _, n := range v.Names() {
			if n == name {
				return v, nil
			}
		}
		names = append(names, v.Name)
	}
	err := suggest.Unknown(s.Name+" version", name, names)
	return ServerVersion{}, fmt.Errorf("--service-version: %w", err)
}

// servicesWithVersions names the services that list versions.
func servicesWithVersions() []string {
	var out []string
	for _, s := range Services() {
		if len(s.Versions) > 0 {
			out = append(out, s.Name)
		}
	}
	if len(out) == 0 {
		out = []string{"none"}
	}
	return out
}

// GoModuleServer describes a server binary built from a main package of a
// Go module at one version, outside lockcheck's own module.
type GoModuleServer struct {
	// Module is the module path ("go.etcd.io/etcd/server/v3").
	Module string
	// Package is the main package to build; "" means Module.
	Package string
	// Version is the module version ("v3.6.16").
	Version string
	// Binary names the built file ("etcd").
	Binary string
	// Timeout bounds how long a build may take; 0 means 30 minutes.
	Timeout time.Duration
}

// Dir is the binary's cache directory: cachedir.Dir()/servers/MODULE@VERSION,
// the module's slashes written as underscores.
func (g GoModuleServer) Dir() string {
	return filepath.Join(cachedir.Dir(), "servers", strings.ReplaceAll(g.Module, "/", "_")+"@"+g.Version)
}

// Path is where the built binary is kept.
func (g GoModuleServer) Path() string { return filepath.Join(g.Dir(), g.Binary) }

// Server returns the cached binary, building it first when it is missing:
// in a throwaway module of its own under the cache directory (the module's
// own go.mod may have replace directives, which `go install PKG@VERSION`
// refuses), with the go command on PATH, its modules from the Go module
// proxy. Two runs that need it at once build it once: the second waits on
// the first's lock file.
func (g GoModuleServer) Server(ctx context.Context, w io.Writer) (string, error) {
	out := g.Path()
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	what := g.Module + "@" + g.Version
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: building %s needs the go command in PATH", ErrMissingBinary, what)
	}
	if err := os.MkdirAll(g.Dir(), 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", what, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(g.Dir(), ".lock"))
	if err != nil {
		return "", fmt.Errorf("build %s: %w", what, err)
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
	fmt.Fprintf(w, "building %s from %s (first use; a few minutes; kept in %s)\n", g.Binary, what, g.Dir())
	start := time.Now()
	if err := g.build(ctx, gobin, out); err != nil {
		return "", fmt.Errorf("build %s: %w", what, err)
	}
	fmt.Fprintf(w, "built %s from %s in %.0f s\n", g.Binary, what, time.Since(start).Seconds())
	return out, nil
}

// build runs go mod init, go get and go build in a fresh module directory,
// writing to a temporary name that is renamed to out at the end; the go
// command's output goes to build.log beside it.
func (g GoModuleServer) build(ctx context.Context, gobin, out string) error {
	mod, err := os.MkdirTemp(g.Dir(), "module-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mod)
	logPath := filepath.Join(g.Dir(), "build.log")
	lg, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lg.Close()
	pkg := g.Package
	if pkg == "" {
		pkg = g.Module
	}
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	defer os.Remove(tmp)
	steps := [][]string{
		{"mod", "init", "lockcheck.invalid/server-build"},
		{"get", g.Module + "@" + g.Version},
		{"build", "-trimpath", "-o", tmp, pkg},
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, gobin, args...)
		cmd.Dir = mod
		// Outside lockcheck's module and workspace, with this go command
		// (no toolchain download), the build's own flags only.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false -mod=mod", "CGO_ENABLED=0")
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

// lockFile takes an exclusive flock on path, waiting (and giving up when
// ctx ends), and returns its release.
func lockFile(ctx context.Context, path string) (func(), error) {
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
