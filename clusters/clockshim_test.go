package clusters

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// probeSource prints CLOCK_REALTIME, CLOCK_MONOTONIC, gettimeofday and time
// in nanoseconds, one per field.
const probeSource = `#include <stdio.h>
#include <time.h>
#include <sys/time.h>
int main(void) {
	struct timespec r, m; struct timeval tv;
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	gettimeofday(&tv, 0);
	time_t t = time(0);
	printf("%lld %lld %lld %lld\n", (long long)r.tv_sec * 1000000000LL + r.tv_nsec,
		(long long)m.tv_sec * 1000000000LL + m.tv_nsec,
		(long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL,
		(long long)t * 1000000000LL);
	return 0;
}
`

type probeReading struct{ real, mono, tod, time time.Duration }

func runProbe(t *testing.T, probe string, env []string) probeReading {
	t.Helper()
	cmd := exec.Command(probe)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 4 {
		t.Fatalf("probe printed %q", out)
	}
	var v [4]time.Duration
	for i := range v {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			t.Fatalf("probe printed %q: %v", out, err)
		}
		v[i] = time.Duration(n)
	}
	return probeReading{v[0], v[1], v[2], v[3]}
}

func near(got, want, tol time.Duration) bool {
	d := got - want
	return d < tol && d > -tol
}

// TestClockShimProbe runs a tiny C program under the shim: its wall clocks
// move by the offset, its monotonic clock does not.
func TestClockShimProbe(t *testing.T) {
	shim, err := ClockShim()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, probe := filepath.Join(dir, "probe.c"), filepath.Join(dir, "probe")
	if err := os.WriteFile(src, []byte(probeSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("gcc", "-o", probe, src).CombinedOutput(); err != nil {
		t.Fatalf("compile probe: %v: %s", err, b)
	}
	file := filepath.Join(dir, "clock")
	for _, tc := range []struct {
		name   string
		offset time.Duration
		write  bool
	}{
		{"forward", 20 * time.Second, true},
		{"backward", -90 * time.Minute, true},
		{"zero", 0, true},
		{"sub-second negative", -1500 * time.Millisecond, true},
		{"missing file", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(file)
			if tc.write {
				if err := WriteClockOffset(file, tc.offset); err != nil {
					t.Fatal(err)
				}
			}
			before := runProbe(t, probe, nil)
			shifted := runProbe(t, probe, ClockShimEnvFor(shim, file))
			after := runProbe(t, probe, nil)
			// Bracketing the shimmed run between two plain ones bounds
			// what the real clocks read during it.
			tol := after.mono - before.mono + 5*time.Millisecond
			if !near(shifted.real-before.real, tc.offset, tol) {
				t.Errorf("CLOCK_REALTIME moved by %s, want %s (±%s)", shifted.real-before.real, tc.offset, tol)
			}
			if !near(shifted.tod-before.tod, tc.offset, tol) {
				t.Errorf("gettimeofday moved by %s, want %s", shifted.tod-before.tod, tc.offset)
			}
			if !near(shifted.time-before.time, tc.offset, tol+time.Second) {
				t.Errorf("time moved by %s, want %s", shifted.time-before.time, tc.offset)
			}
			if shifted.mono < before.mono || shifted.mono > after.mono {
				t.Errorf("CLOCK_MONOTONIC under the shim %d is outside the plain runs' %d..%d", shifted.mono, before.mono, after.mono)
			}
		})
	}
}

// TestClockShimWithoutGCC: with no built library and no gcc, ClockShim's
// build says which package to install.
func TestClockShimWithoutGCC(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err := buildClockShim()
	if !errors.Is(err, ErrMissingBinary) || !strings.Contains(err.Error(), "package gcc") {
		t.Errorf("got %v, want ErrMissingBinary naming the package gcc", err)
	}
}
