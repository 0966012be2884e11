package clusters

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
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
	pkg := cmp.Or(g.Package, g.Module)
	b := cachedir.GoBuild{Dir: g.Dir(), Binary: g.Binary, What: g.Module + "@" + g.Version, Timeout: g.Timeout,
		Env: []string{"CGO_ENABLED=0"},
		Steps: [][]string{
			{"mod", "init", "lockcheck.invalid/server-build"},
			{"get", g.Module + "@" + g.Version},
			{"build", "-trimpath", "-o", "{out}", pkg},
		}}
	path, err := b.Build(ctx, w)
	if errors.Is(err, cachedir.ErrNoGo) {
		return "", fmt.Errorf("%w: building %s needs the go command in PATH", ErrMissingBinary, b.What)
	}
	return path, err
}
