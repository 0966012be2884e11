package clusters

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindVersion(t *testing.T) {
	etcd := Service{Name: "etcd", Versions: []ServerVersion{{Name: "3.4.23", Aliases: []string{"debian"}}, {Name: "3.6.16"}}}
	bare := Service{Name: "redis"}
	tests := []struct {
		name    string
		svc     Service
		ask     string
		want    string // the version found, when no error
		wantErr string
	}{
		{"default", etcd, "", "3.4.23", ""},
		{"by name", etcd, "3.6.16", "3.6.16", ""},
		{"by alias", etcd, "debian", "3.4.23", ""},
		{"unknown", etcd, "3.5.0", "", `unknown etcd version "3.5.0"`},
		{"prefix is no name", etcd, "3.6", "", `unknown etcd version "3.6"`},
		{"none listed, none asked", bare, "", "", ""},
		{"none listed", bare, "7", "", "service redis has only the server installed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.svc.FindVersion(tt.ask)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("FindVersion(%q) = %v, %v; want one line with %q", tt.ask, v.Name, err, tt.wantErr)
				}
			case err != nil || v.Name != tt.want:
				t.Fatalf("FindVersion(%q) = %q, %v; want %q", tt.ask, v.Name, err, tt.want)
			}
		})
	}
}

// TestGoModuleServerCached: a binary already in the cache is returned as
// it is, with no go command (PATH is empty) and no progress.
func TestGoModuleServerCached(t *testing.T) {
	t.Setenv("LOCKCHECK_CACHE", t.TempDir())
	t.Setenv("PATH", "")
	g := GoModuleServer{Module: "example.com/srv/v2", Version: "v2.1.0", Binary: "srv"}
	if !strings.HasPrefix(g.Path(), os.Getenv("LOCKCHECK_CACHE")) || !strings.Contains(g.Path(), "example.com_srv_v2@v2.1.0") {
		t.Fatalf("path %s: want it under $LOCKCHECK_CACHE, keyed by module and version", g.Path())
	}
	if _, err := g.Server(context.Background(), io.Discard); err == nil || !strings.Contains(err.Error(), "needs the go command") {
		t.Fatalf("no cached binary and no go: got %v, want an error naming the go command", err)
	}
	if err := os.MkdirAll(filepath.Dir(g.Path()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g.Path(), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	got, err := g.Server(context.Background(), &progress)
	if err != nil || got != g.Path() || progress.Len() != 0 {
		t.Fatalf("cached: got %q, %v, progress %q; want %s at once", got, err, progress.String(), g.Path())
	}
}
