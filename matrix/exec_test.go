package matrix

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/internal/dockertest"
)

// fakeRunPrelude starts a stand-in for the check binary's `run`: it reads
// --store and --seed and makes the run's directory, $dir, with its
// test.json.
const fakeRunPrelude = `#!/bin/sh
store= seed=
for a in "$@"; do
  case "$prev" in --store) store=$a;; --seed) seed=$a;; esac
  prev=$a
done
dir="$store/fake-test/20261123T130000"
mkdir -p "$dir"
echo '{"name":"fake-test"}' > "$dir/test.json"
`

// fakeCheck is a stand-in for the check binary's `run` (not for any lock
// service): it stores a run in --store and ends by --seed: seed % 4 = 0
// valid, 1 invalid, 2 not exercised, 3 an error. It records its
// arguments in args.txt next to the run.
const fakeCheck = fakeRunPrelude + `echo "$@" > "$store/args.txt"
case $((seed % 4)) in
0) echo '{"valid":true,"anomalies":[]}' > "$dir/results.json"; echo "valid"; exit 0;;
1) echo '{"valid":false,"anomalies":[{"kind":"double-holder","start":2000000000,"explanation":"two holders"}]}' > "$dir/results.json"; exit 1;;
2) echo '{"valid":"unknown","not_exercised":"no fault hit a holder","anomalies":[]}' > "$dir/results.json"; exit 2;;
3) echo "check: set up cluster: boom" >&2; exit 3;;
esac
`

func fakeExecutor(t *testing.T) *Executor {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "check")
	if err := os.WriteFile(exe, []byte(fakeCheck), 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	mdir, err := NewDir(store, StoreDir, fakeMatrix().Started)
	if err != nil {
		t.Fatal(err)
	}
	return &Executor{Exe: exe, Store: store, Dir: mdir, Jobs: 2}
}

func TestExecutorRuns(t *testing.T) {
	x := fakeExecutor(t)
	cells := []Cell{
		{Row: "a", Column: "b", Expect: Depends, Args: []string{"--lock", "redis-set-px"}},
		{Row: "s", Column: "scenario", Expect: Unsafe, Args: []string{"--scenario", "redis-pause"}},
	}
	out := x.Run(context.Background(), cells, []uint64{4, 5, 6, 7})
	var got []string
	for _, r := range out[0].Runs {
		got = append(got, string(r.Verdict))
	}
	if strings.Join(got, " ") != "valid invalid not-exercised error" {
		t.Fatalf("verdicts %v", got)
	}
	r := out[0].Runs[1]
	if r.Story != "two holders" || r.FirstAnomalyS == nil || *r.FirstAnomalyS != 2 ||
		r.Dir != "matrix/20261123T130000/runs/002-a-b-s5/fake-test/20261123T130000" {
		t.Fatalf("invalid run %+v", r)
	}
	if e := out[0].Runs[3]; e.Error != "check: set up cluster: boom" || e.Exit != 3 {
		t.Fatalf("error run %+v", e)
	}
	// A scenario cell runs with --stop-on-anomaly first; every run gets
	// --quiet, its own --store and its --seed last.
	args, err := os.ReadFile(filepath.Join(x.Dir, "runs", "005-s-scenario-s4", "args.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := "run --stop-on-anomaly --scenario redis-pause --quiet --store " + filepath.Join(x.Dir, "runs", "005-s-scenario-s4") + " --seed 4"
	if strings.TrimSpace(string(args)) != want {
		t.Fatalf("args %q, want %q", args, want)
	}
}

func TestExecutorStopAndCancel(t *testing.T) {
	x := fakeExecutor(t)
	x.Jobs = 1
	x.Stop = func(c CellResult) bool {
		for _, r := range c.Runs {
			if r.Verdict == Invalid {
				return true
			}
		}
		return false
	}
	cells := []Cell{{Row: "a", Column: "b", Args: []string{"--lock", "x"}}}
	out := x.Run(context.Background(), cells, []uint64{8, 9, 10, 11})
	if n := len(out[0].Runs); n != 2 || out[0].Runs[1].Verdict != Invalid {
		t.Fatalf("failfast: %+v", out[0].Runs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x = fakeExecutor(t)
	out = x.Run(ctx, cells, []uint64{1, 2})
	for _, r := range out[0].Runs {
		if r.Verdict != Interrupted {
			t.Fatalf("run after cancel: %+v", r)
		}
	}
}

// TestExecutorDockerHosts runs two real cells in the cell image on the
// local engine named twice (two "hosts", one slot each): each run's
// directory is copied out of its container, and no cell container is left.
func TestExecutorDockerHosts(t *testing.T) {
	dockertest.Skip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine answers: %s", strings.TrimSpace(string(out)))
	}
	if exec.CommandContext(ctx, "docker", "image", "inspect", DefaultCellImage).Run() != nil {
		t.Skipf("cell image %s missing (scripts/images.sh build check)", DefaultCellImage)
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	mdir, err := NewDir(store, StoreDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	host := "unix:///var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		host = h
	}
	x := &Executor{Store: store, Dir: mdir, Jobs: 2, RunTimeout: 3 * time.Minute,
		Docker: &Docker{Hosts: []string{host, host}}}
	cells := []Cell{{Row: "redis-set-px", Column: "none", Expect: Depends,
		Args: []string{"--lock", "redis-set-px", "--nemesis", "none", "--time", "3s"}}}
	out := x.Run(ctx, cells, []uint64{1, 2})
	for _, r := range out[0].Runs {
		if r.Verdict == Error || r.Verdict == Interrupted || r.Dir == "" {
			t.Errorf("seed %d: %s (%s), dir %q", r.Seed, r.Verdict, r.Error, r.Dir)
			continue
		}
		if _, err := os.Stat(filepath.Join(store, r.Dir, "history.jsonl")); err != nil {
			t.Errorf("seed %d: run dir not copied out: %v", r.Seed, err)
		}
		t.Logf("seed %d: %s in %.1f s, %s", r.Seed, r.Verdict, r.WallS, r.Dir)
	}
	left, err := exec.CommandContext(ctx, "docker", "ps", "-aq", "--filter", fmt.Sprintf("label=%s=%d", CellLabel, os.Getpid())).Output()
	if err != nil || len(strings.TrimSpace(string(left))) > 0 {
		t.Errorf("cell containers left: %q (err %v)", left, err)
	}
}

// sleeperCheck is a `check run` stand-in that records its pid under
// $PIDS/<seed> and then sleeps as that same process.
const sleeperCheck = `#!/bin/sh
for a in "$@"; do
  case "$prev" in --seed) seed=$a;; esac
  prev=$a
done
echo $$ > "$PIDS/$seed.tmp" && mv "$PIDS/$seed.tmp" "$PIDS/$seed"
exec sleep 300
`

// TestExecutorChildrenDieWithIt: a matrix killed with SIGKILL takes its
// runs in flight with it (issue 28). The matrix here is this test binary
// run again as a helper (LOCKCHECK_MATRIX_HELPER), running two cells of a
// stand-in that sleeps; once both have started, the test SIGKILLs the
// helper and both runs must be gone within 5 s.
func TestExecutorChildrenDieWithIt(t *testing.T) {
	if dir := os.Getenv("LOCKCHECK_MATRIX_HELPER"); dir != "" {
		store := filepath.Join(dir, "store")
		mdir, err := NewDir(store, StoreDir, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		x := &Executor{Exe: filepath.Join(dir, "check"), Store: store, Dir: mdir, Jobs: 2}
		x.Run(context.Background(), []Cell{{Row: "a", Column: "b", Args: []string{"--lock", "x"}}}, []uint64{1, 2})
		t.Fatal("the runs ended: the test was to kill this helper first")
	}
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	if err := os.Mkdir(pids, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "check"), []byte(sleeperCheck), 0o755); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestExecutorChildrenDieWithIt$", "-test.count=1")
	helper.Env = append(os.Environ(), "LOCKCHECK_MATRIX_HELPER="+dir, "PIDS="+pids)
	out := &strings.Builder{}
	helper.Stdout, helper.Stderr = out, out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var runs []int
	deadline := time.Now().Add(time.Minute)
	for len(runs) < 2 {
		runs = runs[:0]
		for _, seed := range []string{"1", "2"} {
			if b, err := os.ReadFile(filepath.Join(pids, seed)); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					runs = append(runs, pid)
				}
			}
		}
		if time.Now().After(deadline) {
			_ = helper.Process.Kill()
			_ = helper.Wait()
			t.Fatalf("the helper matrix did not start both runs within a minute:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { // should the test fail: stop what it started
		for _, pid := range runs {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; {
		var left []int
		for _, pid := range runs {
			if running(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs %v still running 5 s after the SIGKILL of their matrix", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports whether process pid exists and is not a zombie (an
// orphan's zombie stays under an init that does not reap).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestRunChildKeepsItsProcessGroup: runChild adds the parent-death signal
// to a command's own attributes, keeping its process group.
func TestRunChildKeepsItsProcessGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := runChild(cmd); err != nil {
		t.Fatal(err)
	}
	if a := cmd.SysProcAttr; !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("attributes %+v: want Setpgid and Pdeathsig SIGKILL", a)
	}
}
