package clusters

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// clockShimSource is the C source of the clock shim (clockshim/clockshim.c),
// compiled on demand when no built library is found.
//
//go:embed clockshim/clockshim.c
var clockShimSource []byte

// ClockShimName is the file name of the built clock shim.
const ClockShimName = "libclockshim.so"

// ClockFileEnv names the environment variable that tells the clock shim which
// offset file to read.
const ClockFileEnv = "LOCKCHECK_CLOCK_FILE"

// ClockShimEnv names the environment variable that points at a built clock
// shim, overriding the search of ClockShim.
const ClockShimEnv = "LOCKCHECK_CLOCKSHIM"

var clockShimOnce struct {
	sync.Mutex
	path string
}

// ClockShim returns the path of the clock shim, an LD_PRELOAD library that
// adds the offset in the file named by LOCKCHECK_CLOCK_FILE to
// CLOCK_REALTIME, gettimeofday and time (see clockshim/clockshim.c). It
// looks, in order, at $LOCKCHECK_CLOCKSHIM, next to the running executable,
// at bin/ under the working directory (what `make shim` builds), and
// otherwise compiles the embedded source with gcc into a cache directory
// keyed by the source's hash. A missing gcc is an error wrapping
// ErrMissingBinary.
func ClockShim() (string, error) {
	clockShimOnce.Lock()
	defer clockShimOnce.Unlock()
	if clockShimOnce.path != "" {
		return clockShimOnce.path, nil
	}
	if p := os.Getenv(ClockShimEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("clock shim from $%s: %w", ClockShimEnv, err)
		}
		clockShimOnce.path = p
		return p, nil
	}
	var candidates []string
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), ClockShimName))
	}
	candidates = append(candidates, filepath.Join("bin", ClockShimName))
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			abs, err := filepath.Abs(c)
			if err != nil {
				return "", fmt.Errorf("clock shim %s: %w", c, err)
			}
			clockShimOnce.path = abs
			return abs, nil
		}
	}
	p, err := buildClockShim()
	if err != nil {
		return "", err
	}
	clockShimOnce.path = p
	return p, nil
}

// buildClockShim compiles the embedded source into the user's cache
// directory, unless a library of the same source is already there.
func buildClockShim() (string, error) {
	sum := sha256.Sum256(clockShimSource)
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "lockcheck", "clockshim-"+hex.EncodeToString(sum[:8]))
	out := filepath.Join(dir, ClockShimName)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return "", fmt.Errorf("%w: gcc not found in PATH, needed to build the clock shim: install the Debian package gcc (scripts/deps.sh does)", ErrMissingBinary)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build clock shim: %w", err)
	}
	src := filepath.Join(dir, "clockshim.c")
	if err := os.WriteFile(src, clockShimSource, 0o644); err != nil {
		return "", fmt.Errorf("build clock shim: %w", err)
	}
	// Build under a temporary name and rename, so concurrent builds (two
	// test binaries) never see a half-written library.
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gcc, "-O2", "-Wall", "-shared", "-fPIC", "-o", tmp, src)
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build clock shim with gcc: %w: %s", err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build clock shim: %w", err)
	}
	return out, nil
}

// WriteClockOffset stores offset in the clock file at path, in the layout
// the shim reads (a native-endian int64 of nanoseconds at byte 0). It writes
// in place, never truncating, so a process that has the file mapped reads
// the new offset at its next clock call.
func WriteClockOffset(path string, offset time.Duration) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("write clock offset: %w", err)
	}
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], uint64(int64(offset)))
	_, err = f.WriteAt(b[:], 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write clock offset %s: %w", path, err)
	}
	return nil
}

// ClockShimEnvFor returns the environment that starts a process under the
// clock shim at shim, reading its offset from file.
func ClockShimEnvFor(shim, file string) []string {
	return []string{"LD_PRELOAD=" + shim, ClockFileEnv + "=" + file}
}
