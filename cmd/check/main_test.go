package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadInputExitsThreeWithOneLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "history.jsonl")
	good := `{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}`
	if err := os.WriteFile(bad, []byte(good+"\n"+good+"\n{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown lock", []string{"run", "--lock", "nope"}, `unknown lock "nope" (known: `},
		{"missing lock", []string{"run"}, "--lock is required"},
		{"redlock fencing", []string{"run", "--lock", "redlock", "--fencing"}, "redlock hands out no fencing token: "},
		{"unknown nemesis", []string{"run", "--lock", "redis-set-px", "--nemesis", "meteor"}, `unknown nemesis "meteor"`},
		{"none with another nemesis", []string{"run", "--lock", "redis-set-px", "--nemesis", "none,pause"}, "--nemesis none,pause: none (no faults) cannot be combined with other nemeses"},
		{"bad flag", []string{"run", "--lokc", "x"}, "flag provided but not defined"},
		{"malformed history", []string{"analyze", dir}, "line 3: malformed op"},
		{"missing run dir", []string{"analyze", filepath.Join(dir, "nope")}, "no such file"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(tt.args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if code != exitError || !strings.Contains(last, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 3 and %q", code, stderr, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(bad); !strings.Contains(string(b), "{not json") {
		t.Fatal("analyze changed the malformed history")
	}
}

func TestMissingBinaryNamesThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for lock, pkg := range map[string]string{"redis-set-px": "redis-server", "zk-ephemeral": "default-jre-headless"} {
		code, _, stderr := run("run", "--lock", lock, "--time", "1s", "--store", t.TempDir())
		if code != exitError || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "install the Debian package "+pkg) {
			t.Errorf("%s: exit %d, stderr %q; want exit 3 and one line naming %s", lock, code, stderr, pkg)
		}
	}
}

func TestAnalyzeGoldenHistories(t *testing.T) {
	tests := []struct {
		dir  string
		code int
	}{
		{"testdata/double-holder", exitInvalid},
		{"testdata/clean", exitValid},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			dir := t.TempDir()
			b, err := os.ReadFile(filepath.Join(tt.dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := run("analyze", dir)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "analysis", "results.json")); err != nil {
				t.Errorf("analyze wrote no results.json: %v", err)
			}
		})
	}
}

func TestList(t *testing.T) {
	code, out, _ := run("list")
	for _, want := range []string{"redis-set-px ", "redis-set-px-del", "redis-setnx-expire", "pause", "partition", "kill", "none",
		"pg-advisory ", "mysql-unique-row ", "session-kill", "postgres ", "mariadb ", "register-in-db"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("check list lacks %q (exit %d):\n%s", want, code, out)
		}
	}
}

// TestSIGINTLeavesNothingRunning runs the real binary, interrupts it, and
// checks that every server and worker it started is gone and that the partial
// history can be analyzed.
func TestSIGINTLeavesNothingRunning(t *testing.T) {
	tmp := t.TempDir()
	bin := buildCheck(t, tmp)
	for _, lock := range []string{"redis-set-px", "zk-ephemeral"} {
		t.Run(lock, func(t *testing.T) { interruptRun(t, bin, lock) })
	}
}

func interruptRun(t *testing.T, bin, lock string) {
	store := filepath.Join(t.TempDir(), "store")
	cmd := exec.Command(bin, "run", "--lock", lock, "--nemesis", "pause", "--workers", "4",
		"--time", "60s", "--lease", "1s", "--nemesis-interval", "1s", "--seed", "3", "--store", store)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the workers to have recorded some ops (the cluster may take
	// a while on a busy machine), then interrupt.
	deadline := time.Now().Add(150 * time.Second)
	for historyLines(store) < 30 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(processesRunning(bin)) == 0 || historyLines(store) < 30 {
		_ = cmd.Process.Kill()
		t.Fatalf("no worker processes or no history within 150 s:\n%s", out.String())
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("check run did not exit within 30 s of SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit code %d after SIGINT, want %d\n%s", code, exitInterrupted, out.String())
	}
	if left := processesRunning(bin); len(left) > 0 {
		t.Errorf("workers still running after SIGINT: %v", left)
	}
	runs, _ := filepath.Glob(filepath.Join(store, "*", "*", "nodes", "*.log"))
	pidRe := regexp.MustCompile(`pid=(\d+)`)
	for _, log := range runs {
		b, _ := os.ReadFile(log)
		for _, m := range pidRe.FindAllStringSubmatch(string(b), -1) {
			pid, _ := strconv.Atoi(m[1])
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("redis-server pid %d (%s) still running after SIGINT", pid, log)
			}
		}
	}
	if len(runs) == 0 {
		t.Error("no node logs in the run directory")
	}
	// ZooKeeper logs the config file it read; its JVM's command line holds
	// that path.
	cfgRe := regexp.MustCompile(`Reading configuration from: (\S+)`)
	jvms := 0
	for _, log := range runs {
		b, _ := os.ReadFile(log)
		for _, m := range cfgRe.FindAllStringSubmatch(string(b), -1) {
			jvms++
			if left := processesWith(m[1]); len(left) > 0 {
				t.Errorf("ZooKeeper JVM %v (%s) still running after SIGINT", left, m[1])
			}
		}
	}
	if strings.HasPrefix(lock, "zk-") && jvms == 0 {
		t.Error("no ZooKeeper config path found in the node logs: cannot tell whether the JVMs are gone")
	}
	code, aout, aerr := run("analyze", filepath.Join(store, "latest"))
	if code == exitError {
		t.Errorf("analyze of the partial history failed: %s%s", aout, aerr)
	}
}

// historyLines counts the lines of the history of the run in store.
func historyLines(store string) int {
	files, _ := filepath.Glob(filepath.Join(store, "*", "*", "history.jsonl"))
	if len(files) != 1 {
		return 0
	}
	b, _ := os.ReadFile(files[0])
	return strings.Count(string(b), "\n")
}

// processesWith returns the pids of live (not zombie) processes whose
// command line contains s.
func processesWith(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z") {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// processesRunning returns the pids of live worker processes of bin.
func processesRunning(bin string) []int { return processesWith(bin + "\x00worker") }
