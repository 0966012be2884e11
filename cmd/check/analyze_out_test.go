package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storedRun writes a run directory named name under test, with the
// double-holder golden history and the files a run records beside it.
func storedRun(t *testing.T, test, name string) (dir string) {
	t.Helper()
	dir = filepath.Join(test, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "double-holder", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"history.jsonl": string(b),
		"results.json":  `{"valid": false, "setup_s": 0.25, "workload_s": 30}` + "\n",
		"summary.json":  `{"valid": false}` + "\n",
		"report.html":   "<html>the run's own report</html>\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAnalyzeLeavesTheRunAlone: check analyze writes its results to
// RUN/analysis (or --out), and every file the run recorded stays
// byte-identical; --in-place is the one way to replace them.
func TestAnalyzeLeavesTheRunAlone(t *testing.T) {
	test := t.TempDir()
	run1 := storedRun(t, test, "20261126T100000")
	before := snapshot(t, run1)
	code, out, stderr := run("analyze", run1)
	if code != exitInvalid || !strings.Contains(out, filepath.Join(run1, "analysis", "report.html")) {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	after := snapshot(t, run1)
	for name, v := range before {
		if name != run1 && after[name] != v { // the directory gains analysis/
			t.Errorf("%s changed", name)
		}
	}
	for _, name := range []string{"results.json", "summary.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(run1, "analysis", name)); err != nil {
			t.Errorf("analysis/%s: %v", name, err)
		}
	}

	// --out puts them where asked, and the run is still untouched.
	elsewhere := filepath.Join(t.TempDir(), "out")
	if code, out, stderr := run("analyze", "--out", elsewhere, run1); code != exitInvalid || !strings.Contains(out, elsewhere) {
		t.Fatalf("--out: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "results.json")); err != nil {
		t.Fatal(err)
	}
	now := snapshot(t, run1)
	analysis := func(k, _ string) bool { return strings.Contains(k, "analysis") }
	maps.DeleteFunc(now, analysis)
	maps.DeleteFunc(after, analysis)
	if !maps.Equal(now, after) {
		t.Error("--out changed the run's files")
	}

	// --in-place replaces the run's own results, as asked.
	if code, _, stderr := run("analyze", "--in-place", run1); code != exitInvalid {
		t.Fatalf("--in-place: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(run1, "results.json")); strings.Contains(string(b), "setup_s") {
		t.Error("--in-place left the run's results.json as it was")
	}
	if code, _, stderr := run("analyze", "--in-place", "--out", elsewhere, run1); code != exitError || !strings.Contains(stderr, "give one") {
		t.Errorf("--in-place with --out: exit %d %q", code, stderr)
	}
}

// TestAnalyzeTakesTheNewestRun: analyze of a test's directory checks its
// newest run, and says which.
func TestAnalyzeTakesTheNewestRun(t *testing.T) {
	test := t.TempDir()
	storedRun(t, test, "20261126T100000")
	newest := storedRun(t, test, "20261126T110000")
	// A directory without a history is not a run.
	if err := os.MkdirAll(filepath.Join(test, "20261126T120000"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("analyze", test)
	if code != exitInvalid || !strings.Contains(stderr, "newest run") || !strings.Contains(out, filepath.Join(newest, "history.jsonl")) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(newest, "analysis", "results.json")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("analyze", t.TempDir()); code != exitError || !strings.Contains(stderr, "no history.jsonl") {
		t.Errorf("an empty directory: exit %d %q", code, stderr)
	}
}
