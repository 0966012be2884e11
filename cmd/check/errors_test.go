package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
		{"--seed", "-2", "want a whole number, 0 or more"},
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
	code, out, stderr := run("run", "--help")
	if code != exitValid || !strings.Contains(out, "-workers") || stderr != "" {
		t.Errorf("run --help: exit %d, stdout %q, stderr %q; want exit 0 and the flags on stdout", code, out, stderr)
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
	bin := buildCheck(t, tmp)
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

// snapshot returns every file of dir with its mode, time and contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := make(map[string]string)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b := []byte(nil)
		if !d.IsDir() {
			if b, err = os.ReadFile(path); err != nil {
				return err
			}
		}
		files[path] = fmt.Sprintf("%s %d %s %q", info.Mode(), info.Size(), info.ModTime().Format(time.RFC3339Nano), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestAnalyzeRefusesImpossibleHistories is the acceptance of issue 28
// item 3: a history whose structure no run can record is refused with exit
// 3 and one line naming its line, before any checker runs and without
// writing or changing any file of the run directory.
func TestAnalyzeRefusesImpossibleHistories(t *testing.T) {
	holder, err := os.ReadFile("testdata/double-holder/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(holder), "\n")
	edit := func(line int, from, to string) string {
		l := append([]string(nil), lines...)
		if !strings.Contains(l[line-1], from) {
			t.Fatalf("line %d of the test history lacks %q", line, from)
		}
		l[line-1] = strings.Replace(l[line-1], from, to, 1)
		return strings.Join(l, "")
	}
	drop := func(line int) string {
		l := append([]string(nil), lines...)
		return strings.Join(append(l[:line-1], l[line:]...), "")
	}
	tests := []struct {
		name, history, want string
	}{
		{"completion before its invocation", edit(7, `"time":7000`, `"time":500`),
			"history.jsonl: line 7: process 1's acquire completes at 500ns, before its invocation on line 6 at 6µs; not checked"},
		{"completion with no open invocation", drop(6),
			"history.jsonl: line 6: process 1 completes acquire (ok) with no open invocation; not checked"},
		{"two open invocations", drop(2),
			"history.jsonl: line 2: process 0 invokes cs while its acquire invoked on line 1 is open; not checked"},
		{"unknown f", edit(8, `"f":"cs"`, `"f":"write"`),
			`history.jsonl: line 8: unknown f "write" (worker ops: acquire, release, cs, crash, event; nemesis ops: seed, final, `},
		{"blank lines", "\n" + edit(7, `"time":7000`, `"time":500`),
			"history.jsonl: line 8: process 1's acquire completes at 500ns, before its invocation on line 7 at 6µs; not checked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"history.jsonl": tt.history,
				"test.json":     `{"name":"redis-set-px-pause","lock":"redis-set-px","nemesis":"pause","seed":7,"time":20000000000}`,
				"results.json":  "{\"valid\": true}\n", // an earlier verdict, to be left alone
				"report.html":   "<html></html>\n",
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old := time.Now().Add(-time.Hour)
			for name := range files {
				if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, dir)
			code, stdout, stderr := run("analyze", dir)
			if code != exitError || stdout != "" || strings.Count(stderr, "\n") != 1 ||
				!strings.HasPrefix(stderr, "check: "+filepath.Join(dir, tt.want)) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 3 and the one line\ncheck: %s", code, stdout, stderr, filepath.Join(dir, tt.want))
			}
			after := snapshot(t, dir)
			for path, was := range before {
				if after[path] != was {
					t.Errorf("analyze changed %s", path)
				}
			}
			for path := range after {
				if _, ok := before[path]; !ok {
					t.Errorf("analyze wrote %s", path)
				}
			}
		})
	}
}

// TestAnalyzeRefusesAnUnknownLock: a test.json naming a lock design this
// build does not know is refused (exit 3, one line naming the lock),
// since the design decides how the history is judged; the history alone is
// still checked with defaults.
func TestAnalyzeRefusesAnUnknownLock(t *testing.T) {
	b, err := os.ReadFile("testdata/clean/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.json"), []byte(`{"lock":"redis-gone","nemesis":"pause"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run("analyze", dir)
	want := "check: " + filepath.Join(dir, "test.json") + `: unknown lock "redis-gone" (known: `
	if code != exitError || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) ||
		!strings.Contains(stderr, "analyze a copy of history.jsonl kept apart from test.json") {
		t.Fatalf("exit %d, stderr %q; want exit 3 and one line starting %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); !os.IsNotExist(err) {
		t.Errorf("results.json written for a refused run (stat: %v)", err)
	}
	bare := t.TempDir()
	if err := os.WriteFile(filepath.Join(bare, "history.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := run("analyze", filepath.Join(bare, "history.jsonl")); code != exitValid {
		t.Fatalf("the bare history: exit %d\n%s%s", code, out, stderr)
	}
}

// TestHelpExitsZero: -h and --help print the command's usage and exit 0,
// for every command.
func TestHelpExitsZero(t *testing.T) {
	commands := []string{"run", "analyze", "list", "serve", "worker", "bench", "matrix", "repro", "conformance"}
	for _, c := range commands {
		if !strings.Contains(usage, "\n  "+c+" ") {
			t.Fatalf("the usage does not list %s: the test's list is out of date", c)
		}
		for _, flag := range []string{"-h", "--help"} {
			t.Run(c+" "+flag, func(t *testing.T) {
				code, stdout, stderr := run(c, flag)
				if code != exitValid || !strings.HasPrefix(stdout, "usage of check "+c) || stderr != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and the usage", code, stdout, stderr)
				}
			})
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		if code, stdout, _ := run(args...); code != exitValid || !strings.HasPrefix(stdout, "usage: check") {
			t.Errorf("%v: exit %d, stdout %q; want exit 0 and the usage", args, code, stdout)
		}
	}
	if code, _, stderr := run("list", "extra"); code != exitError || !strings.HasPrefix(stderr, "check: unexpected argument \"extra\"") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("list extra: exit %d, stderr %q; want exit 3 naming the argument", code, stderr)
	}
}

// panicWriter panics on every write.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("writer exploded\nsecond line") }

// TestPanicIsAnInternalError: a panic in a command is exit 3 and one line
// naming the file its stack went to: the run directory when the command
// knows it, else the temporary directory.
func TestPanicIsAnInternalError(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b, err := os.ReadFile("testdata/clean/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(runDir, "history.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		dir  string
	}{
		{"no run dir", []string{"list"}, tmp},
		{"in the run dir", []string{"analyze", runDir}, runDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			code := Main(tt.args, panicWriter{}, &stderr)
			// check list writes through a tabwriter, which wraps the panic.
			re := regexp.MustCompile(`^check: internal error: (tabwriter: panic during Write \()?writer exploded second line\)?; stack in (\S+)\n$`)
			m := re.FindStringSubmatch(stderr.String())
			if code != exitError || m == nil {
				t.Fatalf("exit %d, stderr %q; want exit 3 and one line matching %s", code, stderr.String(), re)
			}
			if filepath.Dir(m[2]) != tt.dir {
				t.Errorf("stack in %s, want it in %s", m[2], tt.dir)
			}
			stack, err := os.ReadFile(m[2])
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"check " + strings.Join(tt.args, " ") + "\n", "\npanic: ", "writer exploded\nsecond line", "goroutine ", "panicWriter.Write"} {
				if !strings.Contains(string(stack), want) {
					t.Errorf("stack file lacks %q:\n%s", want, stack)
				}
			}
		})
	}
	// A stack that cannot be written anywhere is still one line.
	var stderr strings.Builder
	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	if code := internalError(&stderr, filepath.Join(tmp, "missing"), []string{"list"}, "boom", nil); code != exitError ||
		!strings.HasPrefix(stderr.String(), "check: internal error: boom; stack not written: create stack file: ") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
