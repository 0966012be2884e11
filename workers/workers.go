// Package workers holds the lock workers lockcheck ships in other languages
// (python/: redis-py's and kazoo's locks; java/: Curator's
// InterProcessMutex, compiled with javac on first use), embedded in the check binary, and
// turns a design's worker command (workloads.Design.Worker) into one that
// runs: each bundled file is written once under the cache directory and
// named by its path there. It imports only the standard library and internal/cachedir.
package workers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/internal/cachedir"
)

//go:embed python/*.py java/*.java java/plain/*.java
var files embed.FS

// JavaClassPath is the class path of the Java workers: Debian's Curator
// (libcurator-recipes-java, whose manifest pulls in the framework, client,
// Guava and ZooKeeper jars), Jackson and slf4j's simple logger (stderr).
const JavaClassPath = "/usr/share/java/curator-recipes.jar:/usr/share/java/jackson-databind.jar:" +
	"/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar:/usr/share/java/slf4j-simple.jar"

// JavaFlags keep a worker JVM small and quick to start: the serial
// collector, a 64 MB heap, the C1 compiler only, class data sharing of the
// JDK's classes (the default archive), no perf data file, and no bytecode
// verification of the class path (Debian's own jars and our one class;
// it cost 15-25 % of a worker's start-up CPU, measured).
var JavaFlags = []string{"-XX:+UseSerialGC", "-Xmx64m", "-Xss512k", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
	"-XX:-UsePerfData", "-XX:+UnlockDiagnosticVMOptions", "-XX:-BytecodeVerificationRemote"}

// debianPython is the interpreter Debian's python3-* packages install
// into; a python3 earlier on PATH (pyenv, a virtualenv) may not see them.
const debianPython = "/usr/bin/python3"

// CacheDir is where bundled workers are written: $LOCKCHECK_CACHE, else
// the user's cache directory's lockcheck/, else the temporary directory's.
func CacheDir() string { return cachedir.Dir() }

// Command returns the argv that runs a design's worker: every element that
// names a bundled file becomes that file's path under the cache directory,
// and "python3" becomes Debian's /usr/bin/python3 when it exists. It then
// runs the worker once with --check, which exits non-zero (saying what is
// missing) when the library it wraps is not installed.
func Command(ctx context.Context, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty worker command")
	}
	dir, err := extract()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = a
		if st, err := fs.Stat(files, a); err == nil && !st.IsDir() {
			out[i] = filepath.Join(dir, filepath.FromSlash(a))
		}
	}
	if out[0] == "python3" {
		if _, err := os.Stat(debianPython); err == nil {
			out[0] = debianPython
		}
	}
	if out[0] == "java" && len(out) > 1 && strings.HasSuffix(out[1], ".java") {
		if out, err = javaCommand(ctx, out); err != nil {
			return nil, err
		}
	}
	if err := probe(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// extract writes every bundled file under CacheDir()/workers/<digest>/
// unless it is there already, and returns that directory.
func extract() (string, error) {
	h := sha256.New()
	var paths []string
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("bundled workers: %w", err)
	}
	dir := filepath.Join(CacheDir(), "workers", hex.EncodeToString(h.Sum(nil))[:16])
	for _, p := range paths {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		b, _ := files.ReadFile(p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("bundled workers: %w", err)
		}
		tmp := fmt.Sprintf("%s.tmp%d", dst, os.Getpid())
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return "", fmt.Errorf("bundled workers: %w", err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return "", fmt.Errorf("bundled workers: %w", err)
		}
	}
	return dir, nil
}

// probe runs argv --check, within 30 s.
func probe(ctx context.Context, argv []string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], "--check")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("worker %s cannot run: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// javaCommand compiles argv[1], a Java source file, with javac into a
// classes directory next to it unless that is there already, and returns
// the java command that runs its class.
func javaCommand(ctx context.Context, argv []string) ([]string, error) {
	src := argv[1]
	class := strings.TrimSuffix(filepath.Base(src), ".java")
	classes := filepath.Join(filepath.Dir(src), "classes")
	if _, err := os.Stat(filepath.Join(classes, class+".class")); err != nil {
		tmp, err := os.MkdirTemp(filepath.Dir(src), "classes-")
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", class, err)
		}
		defer os.RemoveAll(tmp)
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "javac", "-cp", JavaClassPath, "-d", tmp, src)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("javac %s (is libcurator-recipes-java installed? scripts/deps.sh): %v: %s", class, err, strings.TrimSpace(string(out)))
		}
		if err := os.Rename(tmp, classes); err != nil {
			if _, serr := os.Stat(filepath.Join(classes, class+".class")); serr != nil {
				return nil, fmt.Errorf("compile %s: %w", class, err)
			}
		}
	}
	out := append([]string{"java"}, JavaFlags...)
	out = append(out, "-cp", classes+":"+JavaClassPath, class)
	return append(out, argv[2:]...), nil
}
