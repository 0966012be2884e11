package clusters

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSweepTempDirs removes exactly the directories whose owner is gone: a
// dead process, or a live pid whose start time differs (pid reuse); it keeps
// a live owner's, one without an owner record and names it does not own. A
// zombie owner has exited: its directory goes.
func TestSweepTempDirs(t *testing.T) {
	self, err := processOwner(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	dead := deadOwner(t)
	// A child that has exited and not been waited for: a zombie, as the
	// orphans of a killed run stay under an init that does not reap.
	zchild := exec.Command("true")
	if err := zchild.Start(); err != nil {
		t.Fatal(err)
	}
	defer zchild.Wait()
	var zombie owner
	for deadline := time.Now().Add(10 * time.Second); ; {
		o, state, err := processStat(zchild.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if state == 'Z' {
			zombie = o
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d not a zombie after 10 s (state %c)", o.pid, state)
		}
		time.Sleep(5 * time.Millisecond)
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
		{"lockcheck-redis-zombie", zombie.String(), true},
		{"lockcheck-zk-reused", reused.String(), true},
		{"lockcheck-zk-rebooted", otherBoot.String(), true},
		{"lockcheck-sentinel-noowner", "", false},
		{"lockcheck-bench-garbled", "pid=abc", false},
		{"other-dead", dead.String(), false},
	}
	want := make(map[string]bool, len(tests))
	for _, tt := range tests {
		want[tt.name] = tt.remove
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
	assertSwept(t, root, want)
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

// TestSweepTempDirsOfAnotherUser: run as root, lockcheck gives a database
// server's directory to the server's user. The sweep goes by who wrote the
// owner record, not who owns the directory: a directory of another uid
// whose record this user wrote, naming a dead process, is removed, files
// of that uid inside it too; one whose record the other uid wrote, or
// whose owner lives, or whose record does not parse, stays.
func TestSweepTempDirsOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give directories to another uid")
	}
	const other = 65534 // nobody
	self, err := processOwner(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	dead := deadOwner(t)
	root := t.TempDir()
	tests := []struct {
		name        string
		owner       string
		recordOwner int // uid of the owner record
		remove      bool
	}{
		{"lockcheck-postgres-dead", dead.String(), 0, true},
		{"lockcheck-postgres-live", self.String(), 0, false},
		{"lockcheck-mariadb-garbled", "pid=1 start=x", 0, false},
		{"lockcheck-mariadb-theirs", dead.String(), other, false},
	}
	want := make(map[string]bool, len(tests))
	for _, tt := range tests {
		want[tt.name] = tt.remove
		dir := filepath.Join(root, tt.name)
		data := filepath.Join(dir, "data", "base")
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "1"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		rec := filepath.Join(dir, ownerFile)
		if err := os.WriteFile(rec, []byte(tt.owner), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(rec, tt.recordOwner, tt.recordOwner); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{dir, filepath.Join(dir, "data"), data, filepath.Join(data, "1")} {
			if err := os.Lchown(p, other, other); err != nil {
				t.Fatal(err)
			}
		}
	}
	assertSwept(t, root, want)
}

// TestSweepKeepsTheRecordUntilLast: a sweep that cannot remove everything
// (a server of the dead run still writing, a file it may not delete) keeps
// the owner record, so a later sweep still knows the directory is stale.
func TestSweepKeepsTheRecordUntilLast(t *testing.T) {
	dead := deadOwner(t)
	root := t.TempDir()
	dir := filepath.Join(root, "lockcheck-postgres-stuck")
	for _, sub := range []string{"a", "b", "z"} {
		if err := os.MkdirAll(filepath.Join(dir, sub, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(dead.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() { removeAll = os.RemoveAll }()
	removeAll = func(path string) error {
		if filepath.Base(path) == "b" {
			return &os.PathError{Op: "unlinkat", Path: path, Err: syscall.ENOTEMPTY}
		}
		return os.RemoveAll(path)
	}
	if removed, err := SweepTempDirs(root); err == nil || len(removed) != 0 {
		t.Fatalf("a failing sweep: removed %v, error %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ownerFile)); err != nil {
		t.Fatalf("a failed sweep lost the owner record: %v", err)
	}
	removeAll = os.RemoveAll
	if removed, err := SweepTempDirs(root); err != nil || len(removed) != 1 {
		t.Fatalf("second sweep: removed %v, %v", removed, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there: %v", dir, err)
	}
}

// assertSwept sweeps root and checks which of its directories went: want
// says, by name, whether each should.
// deadOwner is the owner record of a process that has exited and been
// waited for.
func deadOwner(t *testing.T) owner {
	t.Helper()
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
	return dead
}

func assertSwept(t *testing.T, root string, want map[string]bool) {
	t.Helper()
	removed, err := SweepTempDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, remove := range want {
		_, err := os.Stat(filepath.Join(root, name))
		if gone := os.IsNotExist(err); gone != remove {
			t.Errorf("%s: removed %v, want %v (removed: %v)", name, gone, remove, removed)
		}
	}
}
