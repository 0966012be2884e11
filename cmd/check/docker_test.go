package main

import (
	"strings"
	"testing"
)

// TestClusterDockerErrors: --cluster docker where no engine answers, or for
// a service with no container topology, and a bad --cluster value, each
// exit 3 with one line that says why.
func TestClusterDockerErrors(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no engine", []string{"--cluster", "docker", "--lock", "redis-set-px"}, "--cluster docker: no Docker engine answers at unix:///nonexistent/docker.sock"},
		{"no container topology", []string{"--cluster", "docker", "--lock", "pg-advisory"}, "--cluster docker: service postgres has no container topology"},
		{"bad value", []string{"--cluster", "kube", "--lock", "redis-set-px"}, `--cluster "kube": want docker, external or local`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(append([]string{"run", "--time", "2s", "--store", t.TempDir()}, tt.args...)...)
			if code != 3 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q (stdout %q); want exit 3 and one line with %q", code, stderr, stdout, tt.want)
			}
		})
	}
}
