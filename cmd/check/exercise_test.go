package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeNotExercised: a stored run whose pauses were all shorter than
// the lease is not exercised: exit 2, and the verdict line says why.
func TestAnalyzeNotExercised(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "not-exercised", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("analyze", dir)
	if code != exitUnknown {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitUnknown, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "unknown: not exercised: no pause lasted longer than the 1 s lease") {
		t.Errorf("verdict line %q: want the not-exercised reason", last)
	}
	if !strings.Contains(out, "exercise  unknown not exercised: ") {
		t.Errorf("the checker list does not say the exercise checker's reason:\n%s", out)
	}
}
