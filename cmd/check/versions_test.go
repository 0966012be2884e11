package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/runner"
)

// TestServiceVersionRefused: a lock-server version the service does not
// have, a version for a service without versions, and a version with a
// cluster lockcheck does not start from local binaries are exit 3 with one
// line naming the cause, before anything starts; so is a matrix that asks
// for one.
func TestServiceVersionRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown", []string{"run", "--lock", "etcd-mutex", "--service-version", "9.9.9"}, `unknown etcd version "9.9.9" (known: 3.4.23, 3.6.16`},
		{"no versions", []string{"run", "--lock", "redis-set-px", "--service-version", "7.0.15"}, "service redis has only the server installed"},
		{"docker", []string{"run", "--lock", "etcd-mutex", "--service-version", "3.6.16", "--cluster", "docker"}, "goes with --cluster local (not docker)"},
		{"matrix", []string{"matrix", "--lock", "etcd-mutex", "--nemesis", "pause", "--service-version", "3.4.23,3.5"}, `cell etcd-mutex@3.5 pause: --service-version: unknown etcd version "3.5"`},
		{"matrix redis", []string{"matrix", "--lock", "redis-set-px", "--service-version", "7"}, "service redis has only the server installed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refusedInOneLine(t, tt.args, tt.want) })
	}
}

// refusedInOneLine runs check with args (and a store of its own) and
// fails unless it exits 3 with one line of stderr containing want.
func refusedInOneLine(t *testing.T, args []string, want string) {
	t.Helper()
	code, _, stderr := run(append(args, "--store", t.TempDir())...)
	if code != exitError || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 3 and one line with %q", code, stderr, want)
	}
}

// TestServiceVersionKept: the rerun command of a run with a version, and
// a repro of it, ask for the same version.
func TestServiceVersionKept(t *testing.T) {
	tt := runner.Test{Lock: "etcd-mutex", Nemesis: "none", ServiceVersion: "3.6.16", Time: time.Second}
	for name, args := range map[string][]string{"rerun": runner.Command(tt), "repro": testArgs(tt)} {
		if !strings.Contains(strings.Join(args, " "), "--service-version 3.6.16") {
			t.Errorf("%s command %q lost --service-version 3.6.16", name, args)
		}
	}
}

// TestListShowsVersions: check list names every version of etcd.
func TestListShowsVersions(t *testing.T) {
	code, stdout, _ := run("list")
	for _, want := range []string{"--service-version 3.4.23 or debian: Debian's etcd-server", "--service-version 3.6.16: built from go.etcd.io/etcd/server/v3 v3.6.16"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("exit %d; check list lacks %q", code, want)
		}
	}
}
