package workloads

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/libraries"
)

// TestDesignLibraries: every library a design names is registered, with
// modules lockcheck's go.mod requires (the versions it pins), and every
// registered library is wrapped by some design.
func TestDesignLibraries(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, d := range Designs() {
		if d.Library == "" {
			continue
		}
		used[d.Library] = true
		l, err := libraries.Find(d.Library)
		if err != nil {
			t.Errorf("design %s: %v", d.Name, err)
			continue
		}
		if len(d.Worker) > 0 {
			t.Errorf("design %s has its own worker and a Go library", d.Name)
		}
		for _, m := range l.Modules {
			if !strings.Contains(string(gomod), "\t"+m+" v") {
				t.Errorf("library %s: go.mod requires no %s", l.Name, m)
			}
		}
	}
	for _, l := range libraries.All() {
		if !used[l.Name] {
			t.Errorf("library %s is wrapped by no design", l.Name)
		}
	}
}
