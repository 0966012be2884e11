package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/runner"
)

// TestLibraryVersionRefused: a client-library version for a design that
// wraps no Go library, one that is no version, one of another major line,
// and one with workers of another command are exit 3 with one line naming
// the cause, before anything starts; so is a matrix that asks for one.
func TestLibraryVersionRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no library", []string{"run", "--lock", "redis-set-px", "--library-version", "9.23.0"}, "design redis-set-px wraps no Go client library"},
		{"no version", []string{"run", "--lock", "etcd-mutex", "--library-version", "latest"}, `--library-version "latest": not a version of etcd-client`},
		{"another major", []string{"run", "--lock", "etcd-mutex", "--library-version", "2.3.8"}, "etcd-client is major version 3"},
		{"worker command", []string{"run", "--lock", "etcd-mutex", "--library-version", "3.6.16", "--worker-cmd", "true"}, "goes with lockcheck's own workers"},
		{"matrix", []string{"matrix", "--lock", "redsync", "--nemesis", "pause", "--library-version", "4.18.0,x"}, `cell redsync@client-x pause: --library-version "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refusedInOneLine(t, tt.args, tt.want) })
	}
}

// TestLibraryVersionKept: the rerun command of a run with a library
// version, and a repro of it, ask for the same version.
func TestLibraryVersionKept(t *testing.T) {
	tt := runner.Test{Lock: "etcd-mutex", Nemesis: "none", LibraryVersion: "3.6.16", Time: time.Second}
	for name, args := range map[string][]string{"rerun": runner.Command(tt), "repro": testArgs(tt)} {
		if !strings.Contains(strings.Join(args, " "), "--library-version 3.6.16") {
			t.Errorf("%s command %q lost --library-version 3.6.16", name, args)
		}
	}
}

// TestLibraryVersionRun builds a worker linked with go-zookeeper v1.0.3
// (lockcheck pins v1.0.4) into a fresh cache, runs go-zookeeper-lock with
// it, and checks that test.json records the version the worker linked;
// a second run takes the cached worker without building again.
func TestLibraryVersionRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker and runs real servers")
	}
	tmp := t.TempDir()
	bin := buildCheck(t, tmp)
	store := filepath.Join(tmp, "store")
	runOnce := func() string {
		cmd := exec.Command(bin, "run", "--lock", "go-zookeeper-lock", "--nemesis", "none", "--time", "3s", "--workers", "2",
			"--library-version", "1.0.3", "--store", store)
		cmd.Env = append(os.Environ(), "LOCKCHECK_CACHE="+filepath.Join(tmp, "cache"))
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("check run: exit %d (%v)\n%s", code, err, out)
		}
		return string(out)
	}
	if out := runOnce(); !strings.Contains(out, "building lockcheck-worker from github.com/go-zookeeper/zk@v1.0.3") {
		t.Errorf("first run did not say it built the worker:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(store, "latest", "test.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		LibraryVersion string            `json:"library_version"`
		Versions       map[string]string `json:"versions"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.LibraryVersion != "1.0.3" || rec.Versions["github.com/go-zookeeper/zk"] != "v1.0.3" {
		t.Errorf("test.json: library_version %q, versions %v; want 1.0.3 linked", rec.LibraryVersion, rec.Versions)
	}
	if out := runOnce(); strings.Contains(out, "building lockcheck-worker") {
		t.Errorf("second run built the worker again:\n%s", out)
	}
}

// TestReproRepeatKeepsRunFlags: the command a repro prints to repeat it
// keeps the run flags it passed to every run (a library version, a
// lease), not only the scenario and the seed.
func TestReproRepeatKeepsRunFlags(t *testing.T) {
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{nil, ""},
		{[]string{"--library-version", "3.6.16"}, " --library-version 3.6.16"},
		{[]string{"--lease", "5s", "--fencing"}, " --lease 5s --fencing"},
	} {
		if got := runFlagsNote(tt.extra); got != tt.want {
			t.Errorf("runFlagsNote(%q) = %q, want %q", tt.extra, got, tt.want)
		}
	}
}
