package libraries

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCanonical(t *testing.T) {
	etcd := Library{Name: "etcd-client", Modules: []string{"go.etcd.io/etcd/client/v3"}}
	zk := Library{Name: "go-zookeeper", Modules: []string{"github.com/go-zookeeper/zk"}}
	tests := []struct {
		lib     Library
		in      string
		want    string
		wantErr string
	}{
		{etcd, "3.6.16", "v3.6.16", ""},
		{etcd, "v3.5.0", "v3.5.0", ""},
		{etcd, "3.7.0-rc.0", "v3.7.0-rc.0", ""},
		{etcd, "2.3.8", "", "etcd-client is major version 3"},
		{etcd, "3.6", "", "not a version of etcd-client"},
		{etcd, "latest", "", "not a version of etcd-client"},
		{etcd, "3..1", "", "not a version"},
		{etcd, "3.6.16@x", "", "not a version"},
		{zk, "1.0.3", "v1.0.3", ""},
		{zk, "0.9.0", "v0.9.0", ""},
	}
	for _, tt := range tests {
		got, err := tt.lib.Canonical(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Canonical(%q) = %q, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
		case err != nil || got != tt.want:
			t.Errorf("Canonical(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestMajorOf(t *testing.T) {
	for in, want := range map[string]string{
		"go.etcd.io/etcd/client/v3":        "3",
		"github.com/go-redsync/redsync/v4": "4",
		"github.com/go-zookeeper/zk":       "",
		"example.com/a/vx":                 "",
		"example.com/a/v":                  "",
	} {
		if got := majorOf(in); got != want {
			t.Errorf("majorOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// toyOnce registers the toy library once, however often the test runs.
var toyOnce sync.Once

func TestRegisterAndFind(t *testing.T) {
	toyOnce.Do(func() { Register(Library{Name: "toy-lib", Modules: []string{"example.com/toy"}}) })
	if l, err := Find("toy-lib"); err != nil || l.Modules[0] != "example.com/toy" {
		t.Fatalf("Find(toy-lib) = %v, %v", l, err)
	}
	if _, err := Find("toy-lb"); err == nil || !strings.Contains(err.Error(), "toy-lib") {
		t.Errorf("Find of a typo: %v; want an error naming toy-lib", err)
	}
	for name, bad := range map[string]Library{"twice": {Name: "toy-lib", Modules: []string{"x"}}, "no module": {Name: "toy-none"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered without a panic", name)
				}
			}()
			Register(bad)
		}()
	}
}

// TestSourceRoot: LOCKCHECK_SRC is taken when it holds lockcheck's go.mod
// and refused when it does not; without it, the tree this test runs in is
// found from the working directory.
func TestSourceRoot(t *testing.T) {
	got, err := SourceRoot()
	if err != nil || !isRoot(got) {
		t.Fatalf("SourceRoot() = %q, %v; want the tree of this test", got, err)
	}
	t.Setenv("LOCKCHECK_SRC", got)
	if again, err := SourceRoot(); err != nil || again != got {
		t.Errorf("with LOCKCHECK_SRC=%s: %q, %v", got, again, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOCKCHECK_SRC", other)
	if _, err := SourceRoot(); err == nil || !strings.Contains(err.Error(), "no go.mod of module "+ModulePath) {
		t.Errorf("LOCKCHECK_SRC of another module: %v", err)
	}
}
