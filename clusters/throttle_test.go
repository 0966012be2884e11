package clusters

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSweepThrottlesRemovesOrphans: a throttle cgroup whose owner is gone
// (a controller killed with SIGKILL) is found by its name, emptied into
// its parent and removed; one whose owner lives, and one whose name does
// not parse, are left alone.
func TestSweepThrottlesRemovesOrphans(t *testing.T) {
	var h hierarchy
	for _, c := range cgroupHierarchies() {
		if c.mechanism == ThrottleCgroup1 || c.mechanism == ThrottleCgroup2 {
			probe := filepath.Join(c.self, ThrottlePrefix+"probe")
			if os.Mkdir(probe, 0o755) == nil {
				_ = syscall.Rmdir(probe)
				h = c
				break
			}
		}
	}
	if h.mount == "" {
		t.Skip("no writable cgroup hierarchy with a cpu controller")
	}
	// The owner: a process that has exited.
	gone := exec.Command("true")
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	o, err := processOwner(gone.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = gone.Wait()
	self, err := processOwner(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(h.self, fmt.Sprintf("%s%d-%d-1", ThrottlePrefix, o.pid, o.start))
	live := filepath.Join(h.self, fmt.Sprintf("%s%d-%d-999", ThrottlePrefix, self.pid, self.start))
	odd := filepath.Join(h.self, ThrottlePrefix+"not-ours")
	for _, d := range []string{orphan, live, odd} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		defer syscall.Rmdir(d)
	}
	// A process the dead owner left in its cgroup.
	left := exec.Command("sleep", "30")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = left.Process.Kill(); _ = left.Wait() }()
	if err := writeCgroup(orphan, "cgroup.procs", fmt.Sprint(left.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	removed, err := SweepThrottles()
	if err != nil {
		t.Fatal(err)
	}
	// Another run's orphans may go too; the test's own live and odd ones
	// may not.
	if !slices.Contains(removed, orphan) || slices.Contains(removed, live) || slices.Contains(removed, odd) {
		t.Errorf("swept %v, want %s and not %s or %s", removed, orphan, live, odd)
	}
	if _, err := os.Stat(orphan); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still there: %v", orphan, err)
	}
	for _, d := range []string{live, odd} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s swept: %v", d, err)
		}
	}
	if got := procCgroup(h, left.Process.Pid); got != h.self {
		t.Errorf("the left process is in %s, want its owner's parent cgroup %s", got, h.self)
	}
}

// TestThrottleRefusesBadQuotas: a quota or period the kernel would not
// take is an error, not a throttle that does nothing.
func TestThrottleRefusesBadQuotas(t *testing.T) {
	for _, tc := range []struct {
		quota  float64
		period time.Duration
		pids   []int
	}{{0, time.Second, []int{1}}, {1, time.Second, []int{1}}, {0.1, time.Millisecond, []int{1}}, {0.1, 2 * time.Second, []int{1}}, {0.1, time.Second, nil}} {
		if th, err := ThrottleProcs(tc.pids, tc.quota, tc.period, "", 0); err == nil || !strings.HasPrefix(err.Error(), "throttle:") {
			t.Errorf("quota %g period %s pids %v: %v %v, want an error", tc.quota, tc.period, tc.pids, th, err)
		}
	}
}
