package libraries

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Library is a Go client library that lock designs wrap: the modules of
// one of its releases, which a run can link at another version.
type Library struct {
	// Name is how a design and check list call it ("etcd-client").
	Name string
	// Summary says what it is, for check list.
	Summary string
	// Modules are the Go modules of one release, moved to a version
	// together; the first names the library's version
	// ("go.etcd.io/etcd/client/v3", then api/v3 and client/pkg/v3).
	Modules []string
	// Tried are versions the Go module proxy served that a worker was
	// built and run with, for check list and the docs (others may build
	// too).
	Tried []string
}

var (
	mu   sync.RWMutex
	libs = map[string]Library{}
)

// Register adds a library; the file of a design that wraps it calls it
// from init. A library without a name or modules, or registered twice,
// is a programming error and panics.
func Register(l Library) {
	if l.Name == "" || len(l.Modules) == 0 {
		panic(fmt.Sprintf("libraries: library %q needs a name and a module", l.Name))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := libs[l.Name]; ok {
		panic(fmt.Sprintf("libraries: library %q registered twice", l.Name))
	}
	libs[l.Name] = l
}

// All returns every registered library, sorted by name.
func All() []Library {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Library, 0, len(libs))
	for _, l := range libs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Find returns the library called name, or an error naming the ones there
// are.
func Find(name string) (Library, error) {
	mu.RLock()
	l, ok := libs[name]
	mu.RUnlock()
	if ok {
		return l, nil
	}
	var names []string
	for _, l := range All() {
		names = append(names, l.Name)
	}
	return Library{}, suggest.Unknown("library", name, names)
}

// Pinned returns the version of the library this binary links (the one
// lockcheck's go.mod pins), "" when the binary carries no module
// information.
func (l Library) Pinned() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return moduleVersion(bi, l.Modules[0])
}

// moduleVersion returns the version of module path in bi, following a
// replacement, or "".
func moduleVersion(bi *debug.BuildInfo, path string) string {
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

// Canonical returns version as the Go module proxy names it: with its
// leading v ("3.6.16" gives "v3.6.16"). A version that is no semantic
// version of the library's major line is an error.
func (l Library) Canonical(version string) (string, error) {
	v := version
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) != 3 || slices.Contains(parts, "") || strings.ContainsAny(v, " /@") {
		return "", fmt.Errorf("--library-version %q: not a version of %s (MAJOR.MINOR.PATCH, as the Go module proxy names it: %s)",
			version, l.Name, strings.Join(append([]string{l.Pinned()}, l.Tried...), ", "))
	}
	if major := majorOf(l.Modules[0]); major != "" && parts[0] != major {
		return "", fmt.Errorf("--library-version %s: %s is major version %s (module %s)", version, l.Name, major, l.Modules[0])
	}
	return v, nil
}

// majorOf returns the major version a module path names ("3" for
// go.etcd.io/etcd/client/v3), "" for one that names none (v0 or v1).
func majorOf(module string) string {
	i := strings.LastIndex(module, "/v")
	if i < 0 {
		return ""
	}
	n := module[i+2:]
	if n == "" || strings.Trim(n, "0123456789") != "" {
		return ""
	}
	return n
}
