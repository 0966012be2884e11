package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAnalyzeReadOnlyStorePrintsTheVerdict: check analyze of a run
// directory that cannot be written (a read-only mount) still prints the
// verdict, says in one line what was not saved, and exits 3 (1 when it
// found an anomaly). It needs a read-only bind mount (root).
func TestAnalyzeReadOnlyStorePrintsTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		code    int
		verdict string
	}{
		{"real-redis-set-px-none", exitError, "valid: no anomalies"},
		{"double-holder-pause", exitInvalid, "invalid: "},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "checker", "testdata", "histories", tc.golden, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			src, dir := t.TempDir(), filepath.Join(t.TempDir(), "ro")
			if err := os.WriteFile(filepath.Join(src, "history.jsonl"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mount(src, dir, "", syscall.MS_BIND, ""); err != nil {
				t.Skipf("cannot bind-mount (needs root): %v", err)
			}
			t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
			if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				t.Skipf("cannot make the bind mount read-only: %v", err)
			}
			var stdout, stderr bytes.Buffer
			code := Main([]string{"analyze", dir}, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.verdict) {
				t.Errorf("stdout lacks the verdict %q:\n%s", tc.verdict, stdout.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "results not saved") || !strings.Contains(lines[0], "read-only file system") {
				t.Errorf("stderr %q: want one line on what was not saved", stderr.String())
			}
		})
	}
}
