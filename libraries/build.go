package libraries

import (
	"bufio"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/internal/cachedir"
)

// ModulePath is lockcheck's own module, whose source tree a worker is
// built from.
const ModulePath = "github.com/lockcheck/lockcheck"

// ErrNoSource is returned when no lockcheck source tree can be found to
// build a worker from.
var ErrNoSource = errors.New("no lockcheck source tree found (set LOCKCHECK_SRC to the folder of its go.mod)")

// SourceRoot returns the folder of lockcheck's go.mod: $LOCKCHECK_SRC, else
// the first folder up from this binary (bin/check in a clone) or from the
// working directory that holds it.
func SourceRoot() (string, error) {
	if d := os.Getenv("LOCKCHECK_SRC"); d != "" {
		if isRoot(d) {
			return d, nil
		}
		return "", fmt.Errorf("LOCKCHECK_SRC=%s: no go.mod of module %s there", d, ModulePath)
	}
	var starts []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, d := range starts {
		for {
			if isRoot(d) {
				return d, nil
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return "", ErrNoSource
}

// isRoot reports whether dir holds the go.mod of lockcheck's module.
func isRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(l, "module")) == ModulePath
		}
	}
	return false
}

// Worker returns a worker binary (cmd/lockcheck-worker, which serves the
// worker protocol as `check worker` does) that links the library at
// version (a canonical one, "v3.6.16"), building it first when the cache
// has none for this binary: lockcheck's own go.mod and go.sum are copied
// to the cache folder, the library's modules moved to version there (go
// get -modfile), and the worker built from the source tree with that
// module file. Progress goes to w. The folder is keyed by the library, the
// version and this binary's own contents, so a rebuilt lockcheck builds
// its worker again.
func Worker(ctx context.Context, l Library, version string, w io.Writer) (string, error) {
	src, err := SourceRoot()
	if err != nil {
		return "", fmt.Errorf("--library-version %s: %w", version, err)
	}
	self, err := selfKey()
	if err != nil {
		return "", fmt.Errorf("--library-version %s: %w", version, err)
	}
	dir := filepath.Join(cachedir.Dir(), "workers", l.Name+"@"+version+"-"+self)
	modfile := filepath.Join(dir, "go.mod")
	get := []string{"get", "-modfile=" + modfile}
	for _, m := range l.Modules {
		get = append(get, m+"@"+version)
	}
	b := cachedir.GoBuild{Dir: dir, Binary: "lockcheck-worker", What: l.Modules[0] + "@" + version, WorkDir: src,
		Prepare: func() error {
			for _, name := range []string{"go.mod", "go.sum"} {
				data, err := os.ReadFile(filepath.Join(src, name))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					return err
				}
			}
			return nil
		},
		Steps: [][]string{get, {"build", "-modfile=" + modfile, "-o", "{out}", "./cmd/lockcheck-worker"}}}
	return b.Build(ctx, w)
}

// selfKey is the first 12 hex digits of the SHA-256 of this binary.
func selfKey() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Linked returns the version of the library the binary at path links, ""
// when it cannot tell.
func (l Library) Linked(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	return moduleVersion(bi, l.Modules[0])
}
