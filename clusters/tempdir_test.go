package clusters

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepTempDirs removes exactly the directories whose owner is gone: a
// dead process, or a live pid whose start time differs (pid reuse); it keeps
// a live owner's, one without an owner record and names it does not own.
func TestSweepTempDirs(t *testing.T) {
	self, err := processOwner(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	dead, err := processOwner(child.Process.Pid)
	_ = child.Process.Kill()
	_ = child.Wait()
	if err != nil {
		t.Fatal(err)
	}
	reused := self
	reused.start++
	otherBoot := self
	otherBoot.boot = "not-this-boot"
	root := t.TempDir()
	tests := []struct {
		name   string
		owner  string // "" for no owner file
		remove bool
	}{
		{"lockcheck-redis-live", self.String(), false},
		{"lockcheck-redis-dead", dead.String(), true},
		{"lockcheck-zk-reused", reused.String(), true},
		{"lockcheck-zk-rebooted", otherBoot.String(), true},
		{"lockcheck-sentinel-noowner", "", false},
		{"lockcheck-bench-garbled", "pid=abc", false},
		{"other-dead", dead.String(), false},
	}
	for _, tt := range tests {
		dir := filepath.Join(root, tt.name)
		if err := os.MkdirAll(filepath.Join(dir, "lock0"), 0o755); err != nil {
			t.Fatal(err)
		}
		if tt.owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(tt.owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	removed, err := SweepTempDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(root, tt.name))
		if gone := os.IsNotExist(err); gone != tt.remove {
			t.Errorf("%s: removed %v, want %v (removed: %v)", tt.name, gone, tt.remove, removed)
		}
	}
}

// TestTempDirRecordsItsOwner: a directory TempDir makes names this process,
// which is alive, so no other run sweeps it away.
func TestTempDirRecordsItsOwner(t *testing.T) {
	dir, err := TempDir("test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if !strings.HasPrefix(filepath.Base(dir), TempPrefix+"test-") {
		t.Errorf("dir %s lacks the prefix", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseOwner(string(b))
	if err != nil || o.pid != os.Getpid() || !o.alive() {
		t.Fatalf("owner %+v (%v): want this live process", o, err)
	}
	if _, err := SweepTempDirs(filepath.Dir(dir)); err != nil {
		t.Logf("sweep: %v", err) // other users' directories may not be removable
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the sweep removed a live owner's directory: %v", err)
	}
}

// FuzzParseOwner: no input panics, and what parses prints back the same.
func FuzzParseOwner(f *testing.F) {
	f.Add("pid=12 start=345 boot=abc\n")
	f.Add("pid=-1 start=0 boot=")
	f.Add("pid=1 pid=2")
	f.Fuzz(func(t *testing.T, s string) {
		o, err := parseOwner(s)
		if err != nil {
			return
		}
		again, err := parseOwner(o.String())
		if err != nil || again != o {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, o, o.String(), again, err)
		}
	})
}
