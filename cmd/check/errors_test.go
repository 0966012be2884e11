package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNumericFlagsValidatedAsGiven: an explicit 0 or a negative duration is
// an error with the accepted range, never silently replaced by a default.
func TestNumericFlagsValidatedAsGiven(t *testing.T) {
	tests := []struct {
		flag, value, want string
	}{
		{"--workers", "0", "--workers 0: want 1 to 200"},
		{"--workers", "201", "--workers 201: want 1 to 200"},
		{"--keys", "0", "--keys 0: want 1 to 1000"},
		{"--lease", "0", "--lease 0: want 1ms to 1h"},
		{"--nodes", "0", "--nodes 0: want 1, 3 or 5"},
		{"--time", "0", "--time 0: want 1ms to 24h"},
		{"--think", "-1s", "--think -1s: want 0 to 1h"},
		{"--retry", "-1ms", "--retry -1ms: want 1ms to 1m"},
		{"--retry", "0", "--retry 0: want 1ms to 1m"},
		{"--acquire-timeout", "-1s", "--acquire-timeout -1s: want 1ms to 24h"},
		{"--acquire-timeout", "0", "--acquire-timeout 0: want more than 0"},
		{"--nemesis-duration", "0", "--nemesis-duration 0: want more than 0"},
		{"--nemesis-interval", "-1s", "--nemesis-interval -1s: want 1ms to 24h"},
		{"--check-timeout", "-1s", "--check-timeout -1s: want 1ms to 24h"},
		{"--check-timeout", "0", "--check-timeout 0: want 1ms to 24h"},
		{"--stuck-bound", "-1s", "--stuck-bound -1s: want 1ms to 24h (0: off)"},
		{"--op-timeout", "-1s", "--op-timeout -1s: want 1ms to 1h"},
		{"--stock", "0", "--stock 0: want more than 0"},
		{"--stock", "-5", "--stock -5: want 1 or more"},
		{"--seed", "-2", "--seed -2: want 0 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			code, _, stderr := run("run", "--lock", "redis-set-px", "--store", t.TempDir(), tt.flag, tt.value)
			if code != exitError || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 3 and one line with %q", code, stderr, tt.want)
			}
		})
	}
}

// TestBadFlagIsOneLine: Go's whole usage is not printed after the error.
func TestBadFlagIsOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--lokc", "x"},
		{"run", "--workers", "many"},
		{"analyze", "--frob"},
		{"bench", "--rounds", "x"},
	} {
		code, stdout, stderr := run(args...)
		if code != exitError || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--help)") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and one line pointing to --help", args, code, stdout, stderr)
		}
	}
	code, _, stderr := run("run", "--help")
	if code != exitValid || !strings.Contains(stderr, "-workers") {
		t.Errorf("run --help: exit %d, stderr %q; want exit 0 and the flags", code, stderr)
	}
}

// TestAnalyzeEmptyAndTornHistories: an empty history is an error (exit 3),
// a torn last line is checked up to that line with a warning, a malformed
// line elsewhere is an error naming the line.
func TestAnalyzeEmptyAndTornHistories(t *testing.T) {
	clean, err := os.ReadFile("testdata/clean/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(clean)), "\n")
	whole := strings.Join(lines[:len(lines)-1], "")
	tests := []struct {
		name, history string
		code          int
		stderr        string
	}{
		{"empty", "", exitError, "holds no operations: nothing to check"},
		{"blank lines only", "\n\n", exitError, "holds no operations"},
		{"torn last line", whole + `{"index":99,"time":`, exitValid, "warning: "},
		{"malformed line in the middle", lines[0] + "{oops\n" + whole, exitError, "line 2: malformed op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(tt.history), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run("analyze", dir)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q\n%s", code, stderr, tt.code, tt.stderr, stdout)
			}
			if tt.name == "torn last line" && !strings.Contains(stderr, fmt.Sprintf("line %d is torn", len(lines))) {
				t.Errorf("warning does not name line %d: %q", len(lines), stderr)
			}
		})
	}
}

// TestMissingWorkerCommandEndsAtOnce is the acceptance of issue 9 item 2: a
// worker command that does not exist ends the run within 5 s with exit 3
// and one line naming the file, instead of a whole --time and "no grants".
func TestMissingWorkerCommandEndsAtOnce(t *testing.T) {
	store := t.TempDir()
	start := time.Now()
	code, _, stderr := run("run", "--lock", "redis-set-px", "--worker-cmd", "/nonexistent", "--time", "30s", "--quiet", "--store", store)
	took := time.Since(start)
	if code != exitError || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `"/nonexistent"`) || !strings.Contains(stderr, "no such file") {
		t.Fatalf("exit %d, stderr %q; want exit 3 and one line naming /nonexistent", code, stderr)
	}
	// The cluster must be set up first; 5 s is the bound on a quiet machine,
	// and the run's 30 s is what must not be waited.
	if took > 15*time.Second {
		t.Errorf("took %s: the run waited instead of ending at once", took)
	}
	if _, err := os.Stat(filepath.Join(store, "latest", "history.jsonl")); err != nil {
		t.Errorf("no history kept: %v", err)
	}
}

// TestKilledRunsTempDirIsSweptByTheNextRun: a run killed with SIGKILL
// cannot remove its temporary directory; the next run removes it, because
// its recorded owner is gone.
func TestKilledRunsTempDirIsSweptByTheNextRun(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "check")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	tmpdir := filepath.Join(tmp, "tmp")
	if err := os.Mkdir(tmpdir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+tmpdir)
	cmd := exec.Command(bin, "run", "--lock", "redis-set-px", "--time", "60s", "--quiet", "--store", filepath.Join(tmp, "store"))
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for deadline := time.Now().Add(60 * time.Second); len(dirs) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		dirs, _ = filepath.Glob(filepath.Join(tmpdir, "lockcheck-redis-*", ".owner"))
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if len(dirs) != 1 {
		t.Fatalf("want one owned temporary directory of the running check, got %v", dirs)
	}
	stale := filepath.Dir(dirs[0])
	time.Sleep(200 * time.Millisecond) // the killed run's servers die with it (Pdeathsig)
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("the killed run's directory is already gone: %v", err)
	}
	next := exec.Command(bin, "run", "--lock", "redis-set-px", "--worker-cmd", "/nonexistent", "--quiet", "--store", filepath.Join(tmp, "store"))
	next.Env = env
	if out, err := next.CombinedOutput(); next.ProcessState.ExitCode() != exitError {
		t.Fatalf("next run: %v\n%s", err, out)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the next run left the killed run's %s (stat: %v)", stale, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmpdir, "lockcheck-*")); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
