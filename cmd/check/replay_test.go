package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/schedule"
)

// TestTriggerInputErrors: every mistake in a triggered fault, a schedule
// file or a replay's arguments is exit 3 with one line naming it.
func TestTriggerInputErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.json", `{"faults": [{"spec": "pause@grant"}, {"spec": "pause@grnt"}]}`)
	runDir := filepath.Join(dir, "run")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write("run/test.json", `{"name":"x","lock":"redis-set-px","nemesis":"none","seed":7,"time":2000000000}`)
	write("run/results.json", `{"valid":"valid","anomalies":[]}`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown event", []string{"run", "--lock", "redis-set-px", "--nemesis", "pause@grnt"}, `fault "pause@grnt": unknown event "grnt"; did you mean "grant"?`},
		{"bad duration", []string{"run", "--lock", "redis-set-px", "--nemesis", "pause@grant:soon"}, `fault "pause@grant:soon": duration "soon"`},
		{"unknown kind", []string{"run", "--lock", "redis-set-px", "--nemesis", "pase@grant"}, `unknown nemesis "pase"`},
		{"none and a trigger", []string{"run", "--lock", "redis-set-px", "--nemesis", "none,pause@grant"}, "cannot be combined"},
		{"missing schedule", []string{"run", "--lock", "redis-set-px", "--schedule", filepath.Join(dir, "nope.json")}, "no such file"},
		{"bad schedule", []string{"run", "--lock", "redis-set-px", "--schedule", bad}, "fault 2: fault \"pause@grnt\""},
		{"matrix cell", []string{"matrix", "--lock", "redis-set-px", "--nemesis", "pause@grant#0"}, `"#0": want #N`},
		{"replay without a dir", []string{"replay"}, "usage: check replay RUN_DIR"},
		{"replay of a scenario", []string{"replay", "--scenario", "redis-pause"}, "takes a run directory"},
		{"replay without a schedule", []string{"replay", runDir}, "has no schedule to replay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(append(tt.args, "--store", t.TempDir())...)
			if code != exitError || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 3 and one line with %q", code, stderr, tt.want)
			}
		})
	}
}

// TestReplayRunsTheSchedule runs a triggered pause through the binary,
// then replays its run directory: each replay applies the same schedule,
// and the rate printed agrees with the verdicts and the exit code.
func TestReplayRunsTheSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers")
	}
	tmp := t.TempDir()
	bin := buildCheck(t, tmp)
	store := filepath.Join(tmp, "store")
	spec := "pause@grant+5ms:lease+600ms"
	cmd := exec.Command(bin, "run", "--lock", "redis-set-px", "--nemesis", spec, "--lease", "300ms", "--think", "500ms",
		"--workers", "4", "--time", "20s", "--stop-on-anomaly", "--quiet", "--seed", "1", "--store", store)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitInvalid {
		t.Fatalf("check run: exit %d (%v), want 1\n%s", code, err, out)
	}
	first := filepath.Join(store, "latest")
	cmd = exec.Command(bin, "replay", first, "--count", "2", "--store", store)
	out, err = cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	m := regexp.MustCompile(`(?m)^replay: double-holder recurred in (\d) of 2 runs$`).FindSubmatch(out)
	if m == nil || !strings.Contains(string(out), "replay: "+first+": 1 fault(s): "+spec) {
		t.Fatalf("check replay: exit %d (%v); want the schedule and the double holder's rate\n%s", code, err, out)
	}
	if n, _ := strconv.Atoi(string(m[1])); (n > 0) != (code == exitInvalid) || code != exitInvalid && code != exitValid {
		t.Fatalf("check replay: exit %d with double-holder in %s of 2 runs\n%s", code, m[1], out)
	}
	runs, err := filepath.Glob(filepath.Join(store, "repro", "*", "runs", "*", "*", "*", schedule.FileName))
	if err != nil || len(runs) != 2 {
		t.Fatalf("replayed runs' schedules: %v %v", runs, err)
	}
	for _, p := range runs {
		rec, err := schedule.Load(p)
		if err != nil || len(rec.Faults) != 1 || rec.Faults[0].Spec != spec {
			t.Errorf("%s: %+v %v, want %s", p, rec, err, spec)
		}
	}
}

// TestShrinkPlantedBug shrinks a run of a worker planted with a bug that
// needs no fault (workloads.PlantDropLock: odd processes let their lock go
// at once and work on): whatever faults and workers the run had, the
// smallest case has no fault and two workers, and it still fails.
func TestShrinkPlantedBug(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers")
	}
	tmp := t.TempDir()
	bin := buildCheck(t, tmp)
	store := filepath.Join(tmp, "store")
	env := append(os.Environ(), "LOCKCHECK_PLANT=drop-lock")
	cmd := exec.Command(bin, "run", "--lock", "redis-set-px", "--nemesis", "pause@grant+5ms:lease+1s,partition", "--workers", "6",
		"--time", "8s", "--quiet", "--seed", "1", "--store", store)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitInvalid {
		t.Fatalf("check run: exit %d (%v), want 1\n%s", code, err, out)
	}
	cmd = exec.Command(bin, "shrink", filepath.Join(store, "latest"), "--count", "3", "--rate", "0.6", "--seed", "1", "--store", store)
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if code != exitInvalid || !regexp.MustCompile(`(?m)^shrink: smallest, after \d+ candidates \(\d+ kept\): no fault, 2 workers: double-holder in [23] of 3$`).Match(out) {
		t.Fatalf("check shrink: exit %d (%v); want exit 1 and no fault, 2 workers\n%s", code, err, out)
	}
	m := regexp.MustCompile(`(?m)^shrink: (check run .*)$`).FindSubmatch(out)
	if m == nil || !strings.Contains(string(m[1]), "--nemesis none --workers 2") {
		t.Fatalf("no check run line for no fault and 2 workers\n%s", out)
	}
}

// buildCheck builds this command into dir and returns the binary's path.
func buildCheck(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "check")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}
