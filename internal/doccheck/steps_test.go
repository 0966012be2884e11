package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stepRow is a row of docs/architecture.md's table of a run's steps:
// | what | `file` | `Func` or `Type.Method` |.
var stepRow = regexp.MustCompile("^\\| ([^|]+) \\| `([a-z0-9_/]+\\.go)` \\| `([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)` \\|\\s*$")

// TestRunSteps: every step of a run that docs/architecture.md names is
// where it says, a function or a method (on a value or a pointer) declared
// in that file; and the table names the steps a reader looks for.
func TestRunSteps(t *testing.T) {
	top := root(t)
	data, err := os.ReadFile(filepath.Join(top, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, line := range strings.Split(string(data), "\n") {
		m := stepRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		steps = append(steps, m[1])
		src, err := os.ReadFile(filepath.Join(top, m[2]))
		if err != nil {
			t.Errorf("step %q: %v", m[1], err)
			continue
		}
		if !declares(string(src), m[3]) {
			t.Errorf("step %q: %s declares no %s", m[1], m[2], m[3])
		}
	}
	all := strings.Join(steps, "\n")
	for _, want := range []string{"the command", "the plan", "the run starts", "fault injection", "checking", "the verdict", "the exit code"} {
		if !strings.Contains(all, want) {
			t.Errorf("the table of a run's steps has no %q step (steps: %q)", want, steps)
		}
	}
}

// declares reports whether src declares name: a function "Name" or a
// method "Type.Name" on Type or *Type.
func declares(src, name string) bool {
	decl := "func " + regexp.QuoteMeta(name) + "\\("
	if typ, method, ok := strings.Cut(name, "."); ok {
		decl = "func \\([a-z_][A-Za-z0-9_]* \\*?" + regexp.QuoteMeta(typ) + "\\) " + regexp.QuoteMeta(method) + "\\("
	}
	return regexp.MustCompile("(?m)^" + decl).MatchString(src)
}

// TestDeclares: functions and methods on values and pointers are found;
// a call, a comment or another type's method is not a declaration.
func TestDeclares(t *testing.T) {
	src := "// Resolve is not here\nfunc Resolve(t Test) {}\nfunc (p *Plan) Run(ctx context.Context) {}\nfunc (s Schedule) Run() {}\n\tx := Check(h)\n"
	for _, c := range []struct {
		name string
		want bool
	}{
		{"Resolve", true}, {"Plan.Run", true}, {"Schedule.Run", true},
		{"Check", false}, {"Engine.Run", false}, {"Run", false}, {"Resolv", false},
	} {
		if got := declares(src, c.name); got != c.want {
			t.Errorf("declares(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}
