package clusters

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run the check binary as a user would and SIGKILL it: nothing
// it started may outlive it, and nothing it made in the temporary directory
// may outlive the next run. Each gives its runs a private TMPDIR, so other
// tests' directories and processes do not count.

// buildCheck builds the check binary into a test directory.
func buildCheck(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not in PATH: cannot build the check binary")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	bin := filepath.Join(t.TempDir(), "check")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/check")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/check: %v\n%s", err, out)
	}
	return bin
}

// privateTmp makes a TMPDIR for the runs of one test, open to everyone as
// /tmp is (a database server runs as its own user when the test runs as
// root). At the end it kills whatever still runs with that TMPDIR (what
// the test started, should it fail) and removes it.
func privateTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "leftover-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		left := withTmp(dir)
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		waitNoneLeft(left, dir, 10*time.Second)
		_ = os.RemoveAll(dir)
	})
	return dir
}

// runDirs lists the lockcheck directories of runs under tmp: every
// TempPrefix entry but the database templates, which are caches meant to
// stay.
func runDirs(t *testing.T, tmp string) []string {
	t.Helper()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) && !strings.Contains(e.Name(), "-template-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// startCheck starts bin with args and TMPDIR=tmp, in its own process group
// and killed if the test dies, and returns it with a channel that gets
// every line it prints (closed when its output ends).
func startCheck(t *testing.T, bin, tmp string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody reads any more
			}
		}
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd, lines
}

// waitLine waits up to limit for a line containing want and returns the
// lines read; it fails the test if the output ends first.
func waitLine(t *testing.T, lines <-chan string, want string, limit time.Duration) []string {
	t.Helper()
	var seen []string
	deadline := time.After(limit)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before %q:\n%s", want, strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if strings.Contains(l, want) {
				return seen
			}
		case <-deadline:
			t.Fatalf("no %q within %s:\n%s", want, limit, strings.Join(seen, "\n"))
		}
	}
}

// procInfo is what /proc says of one process.
type procInfo struct {
	pid, ppid int
	state     byte
	start     string
	cmdline   string
}

// processes reads every process from /proc.
func processes() map[int]procInfo {
	stats := procStats()
	out := make(map[int]procInfo, len(stats))
	for pid, f := range stats {
		if len(f) < 20 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		out[pid] = procInfo{pid: pid, ppid: ppid, state: f[0][0], start: string(f[19]),
			cmdline: strings.TrimSpace(string(bytes.ReplaceAll(cl, []byte{0}, []byte{' '})))}
	}
	return out
}

// descendants returns the live (not zombie) processes whose parent chain
// leads to pid.
func descendants(all map[int]procInfo, pid int) []procInfo {
	kids := make(map[int][]int)
	for _, p := range all {
		kids[p.ppid] = append(kids[p.ppid], p.pid)
	}
	var out []procInfo
	queue := []int{pid}
	for len(queue) > 0 {
		for _, c := range kids[queue[0]] {
			if all[c].state != 'Z' {
				out = append(out, all[c])
			}
			queue = append(queue, c)
		}
		queue = queue[1:]
	}
	return out
}

// withTmp returns the live processes whose environment has TMPDIR=tmp:
// everything a run with that TMPDIR started, whoever its parent is now
// (an orphan's parent is init). A zombie has no environment left.
func withTmp(tmp string) []procInfo {
	var out []procInfo
	want := []byte("TMPDIR=" + tmp + "\x00")
	for _, p := range processes() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
		if err == nil && p.state != 'Z' && bytes.Contains(env, want) {
			out = append(out, p)
		}
	}
	return out
}

// stillThere returns those of ps that run yet: same pid and start time,
// not a zombie.
func stillThere(ps []procInfo) []procInfo {
	now := processes()
	var out []procInfo
	for _, p := range ps {
		if q, ok := now[p.pid]; ok && q.start == p.start && q.state != 'Z' {
			out = append(out, q)
		}
	}
	return out
}

// waitNoneLeft waits up to limit for none of ps and nothing with
// TMPDIR=tmp to run; it returns what is left then.
func waitNoneLeft(ps []procInfo, tmp string, limit time.Duration) []procInfo {
	deadline := time.Now().Add(limit)
	for {
		left := stillThere(ps)
		for _, p := range withTmp(tmp) {
			if !slices.ContainsFunc(left, func(q procInfo) bool { return q.pid == p.pid }) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describe(ps []procInfo) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  pid %d (parent %d, %c): %s", p.pid, p.ppid, p.state, p.cmdline)
	}
	return b.String()
}

// TestKilledRunsLeaveNoDirectory is issue 28's acceptance (a): `check run`
// of a PostgreSQL and of a MariaDB design, each SIGKILLed once its cluster
// is ready, leave no process behind within 5 s, and after one more run (of
// any design: its sweep removes what the killed runs left) no run
// directory is left under the temporary directory.
func TestKilledRunsLeaveNoDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the check binary and starts database servers")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip(err)
	}
	var locks []string
	if err := havePostgres(); err == nil {
		locks = append(locks, "pg-advisory")
	} else {
		t.Logf("no PostgreSQL run: %v", err)
	}
	if err := haveMariaDB(); err == nil {
		locks = append(locks, "mysql-get-lock")
	} else {
		t.Logf("no MariaDB run: %v", err)
	}
	if len(locks) == 0 {
		t.Skip("neither PostgreSQL nor MariaDB is installed")
	}
	bin := buildCheck(t)
	tmp := privateTmp(t)
	store := t.TempDir()
	for _, lock := range locks {
		cmd, lines := startCheck(t, bin, tmp, "run", "--lock", lock, "--time", "60s", "--store", store)
		waitLine(t, lines, "cluster ready", 3*time.Minute)
		tree := descendants(processes(), cmd.Process.Pid)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if left := waitNoneLeft(tree, tmp, 5*time.Second); len(left) > 0 {
			t.Errorf("%s: 5 s after the SIGKILL of check run, left:%s", lock, describe(left))
		}
		// What the sweep is for: the run could not remove its own.
		t.Logf("%s killed (%d processes under it); left in TMPDIR: %v", lock, len(tree), runDirs(t, tmp))
	}
	cmd, lines := startCheck(t, bin, tmp, "run", "--lock", "redis-set-px", "--time", "3s", "--quiet", "--store", store)
	var out []string
	for l := range lines {
		out = append(out, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the next run: %v\n%s", err, strings.Join(out, "\n"))
	}
	if left := runDirs(t, tmp); len(left) > 0 {
		t.Errorf("after the next run, left in TMPDIR: %v", left)
	}
}

// TestKilledMatrixLeavesNoProcess is issue 28's acceptance (b): `check
// matrix --jobs 2` SIGKILLed while both its runs are under way leaves no
// `check run`, server or worker running 5 s later; and the sweep then
// removes every directory its runs made.
func TestKilledMatrixLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the check binary and starts servers")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip(err)
	}
	first := "redis-set-px"
	if err := havePostgres(); err == nil {
		first = "pg-advisory" // a server run as another user, with children of its own
	}
	bin := buildCheck(t)
	tmp := privateTmp(t)
	dir := t.TempDir()
	cells := filepath.Join(dir, "cells.txt")
	text := fmt.Sprintf("%s none D --lock %s --nemesis none --time 60s\n"+
		"redis-set-px none D --lock redis-set-px --nemesis none --time 60s\n", first, first)
	if err := os.WriteFile(cells, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, lines := startCheck(t, bin, tmp, "matrix", "--cells", cells, "--seeds", "1", "--jobs", "2",
		"--store", filepath.Join(dir, "store"))
	go func() {
		for range lines { // drain
		}
	}()
	// Wait until both runs are under way: two `check run` children, each
	// with workers.
	var tree []procInfo
	deadline := time.Now().Add(3 * time.Minute)
	for {
		all := processes()
		tree = descendants(all, cmd.Process.Pid)
		busy := 0
		for _, p := range tree {
			if p.ppid == cmd.Process.Pid && strings.Contains(p.cmdline, " run ") {
				for _, d := range descendants(all, p.pid) {
					if strings.HasPrefix(d.cmdline, bin+" worker") {
						busy++
						break
					}
				}
			}
		}
		if busy == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the matrix's two runs did not both start workers within 3 minutes; its processes:%s", describe(tree))
		}
		if err := syscall.Kill(cmd.Process.Pid, 0); errors.Is(err, syscall.ESRCH) {
			t.Fatal("the matrix exited before its runs started workers")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("killed the matrix with %d processes under it", len(tree))
	if left := waitNoneLeft(tree, tmp, 5*time.Second); len(left) > 0 {
		t.Fatalf("5 s after the SIGKILL of check matrix, left:%s", describe(left))
	}
	if _, err := SweepTempDirs(tmp); err != nil {
		t.Fatal(err)
	}
	if left := runDirs(t, tmp); len(left) > 0 {
		t.Errorf("after a sweep, left in TMPDIR: %v", left)
	}
}

// havePostgres and haveMariaDB say whether a database server's programs
// are installed (as the services' Look functions, which live in
// services/sqldb, find them).
func havePostgres() error {
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) > 0 {
		return nil
	}
	return errors.New("no /usr/lib/postgresql/*/bin/initdb")
}

func haveMariaDB() error {
	_, err := exec.LookPath("mariadb-install-db")
	return err
}
