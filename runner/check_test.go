package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TestCheckWritesTheDrawingAndLetsItGo checks that Check writes
// linearizability.html for a history no order fits and returns a result
// with no Visualize left anywhere in it: the drawing holds the checkers'
// inputs, which a long run's report must not keep alive.
func TestCheckWritesTheDrawingAndLetsItGo(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("..", "checker", "testdata", "histories", "double-holder-pause", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if res := checker.Default(checker.Options{}).Check(context.Background(), h); res.Visualize == nil {
		t.Fatal("the test history has nothing to draw: pick one no order fits")
	}
	dir := t.TempDir()
	res, err := Check(context.Background(), dir, h, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid != checker.Invalid {
		t.Errorf("verdict %v, want invalid", res.Valid)
	}
	if st, err := os.Stat(filepath.Join(dir, "linearizability.html")); err != nil || st.Size() == 0 {
		t.Errorf("linearizability.html not written: %v", err)
	}
	var visit func(r checker.Result)
	visit = func(r checker.Result) {
		if r.Visualize != nil {
			t.Errorf("result %q still has its Visualize", r.Checker)
		}
		for _, sub := range r.Results {
			visit(sub)
		}
	}
	visit(res)
}
