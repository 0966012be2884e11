package checker

// The nemesis kinds declare their exercise rules with their records; the
// checker's tests judge histories of every built-in kind, so they link the
// kinds in.
import (
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	_ "github.com/lockcheck/lockcheck/nemesis"
)

func TestDeclaredRule(t *testing.T) {
	x := &exerciseRun{lease: 1500 * time.Millisecond}
	r, ok := declaredRule(history.ExerciseRule{Nemesis: "test-stall", F: "test-stall", Shape: history.ExerciseHolder,
		Missed: "no stall outlasted {lease}"})
	if !ok || r.Nemesis != "test-stall" || r.F != "test-stall" || r.Judge == nil {
		t.Fatalf("declaredRule: %+v %v", r, ok)
	}
	if got := r.Missed(x); got != "no stall outlasted the 1.5 s lease" {
		t.Errorf("Missed = %q", got)
	}
	r, ok = declaredRule(history.ExerciseRule{Nemesis: "test-quiet", F: "test-quiet", Shape: history.ExerciseNode})
	if !ok {
		t.Fatal("a rule with no sentence was refused")
	}
	if got := r.Missed(x); got != "no test-quiet fault could have produced an anomaly" {
		t.Errorf("default Missed = %q", got)
	}
	if _, ok := declaredRule(history.ExerciseRule{Nemesis: "test-odd", F: "test-odd", Shape: "no-such-shape"}); ok {
		t.Error("a rule naming no shape of the checker's was taken")
	}
}
