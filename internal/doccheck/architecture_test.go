package doccheck

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is the import path of lockcheck's own packages.
const module = "github.com/lockcheck/lockcheck/"

// packageRow is a row of docs/architecture.md's package table:
// | `pkg` | holds | imports |.
var packageRow = regexp.MustCompile("^\\| `([a-z0-9_/-]+)` \\|(.*)\\|(.*)\\|\\s*$")

// packageTable returns the rows of docs/architecture.md's package table:
// each package's "imports" cell by its path.
func packageTable(t *testing.T, top string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(top, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := make(map[string]string)
	for _, line := range strings.Split(string(data), "\n") {
		if m := packageRow.FindStringSubmatch(line); m != nil {
			rows[m[1]] = m[3]
		}
	}
	return rows
}

// goPackages returns every directory of the repository that holds a Go
// package (a tracked non-test .go file outside testdata), relative to the
// root, with the lockcheck packages its non-test files import (relative to
// the module).
func goPackages(t *testing.T, top string) map[string][]string {
	t.Helper()
	pkgs := make(map[string]map[string]bool)
	fset := token.NewFileSet()
	for _, rel := range trackedFiles(t, top) {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || slices.Contains(strings.Split(rel, "/"), "testdata") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(top, rel), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		dir := path.Dir(rel)
		if pkgs[dir] == nil {
			pkgs[dir] = make(map[string]bool)
		}
		for _, imp := range f.Imports {
			if own, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module); ok {
				pkgs[dir][own] = true
			}
		}
	}
	out := make(map[string][]string, len(pkgs))
	for p, imps := range pkgs {
		out[p] = slices.Sorted(maps.Keys(imps))
	}
	return out
}

// namesImport reports whether an "imports" cell names lockcheck package
// imp: as `imp`, or as `base` when it names the package by its last
// element (`workerproc` for internal/workerproc), or by "everything".
func namesImport(cell, imp string) bool {
	return strings.Contains(cell, "everything") ||
		strings.Contains(cell, "`"+imp+"`") ||
		strings.Contains(cell, "`"+path.Base(imp)+"`")
}

// TestArchitectureTable keeps docs/architecture.md's package table true to
// the code: every Go package of the repository has a row, every row is a
// package, and a row's "imports" cell names every lockcheck package the
// package imports, so the layering the page states is the one the code
// has.
func TestArchitectureTable(t *testing.T) {
	top := root(t)
	rows := packageTable(t, top)
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md: no package table found (rows | `pkg` | holds | imports |)")
	}
	pkgs := goPackages(t, top)
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		cell, ok := rows[p]
		if !ok {
			t.Errorf("docs/architecture.md: package %s has no row in the package table", p)
			continue
		}
		for _, imp := range pkgs[p] {
			if !namesImport(cell, imp) {
				t.Errorf("docs/architecture.md: %s imports %s, but its row's imports cell (%s) does not name it", p, imp, strings.TrimSpace(cell))
			}
		}
	}
	for p := range rows {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/architecture.md: the package table has a row for %s, which holds no Go package", p)
		}
	}
}

// TestNamesImport pins what counts as naming an import in a cell.
func TestNamesImport(t *testing.T) {
	cases := []struct {
		cell, imp string
		want      bool
	}{
		{"`history`, Porcupine", "history", true},
		{"stdlib only", "history", false},
		{"`clusters`, `internal/workerproc`", "internal/workerproc", true},
		{"`workerproc`", "internal/workerproc", true},
		{"`checker`", "history", false},
		{"`historyx`", "history", false},
		{"everything", "nemesis", true},
	}
	for _, c := range cases {
		if got := namesImport(c.cell, c.imp); got != c.want {
			t.Errorf("namesImport(%q, %q) = %v, want %v", c.cell, c.imp, got, c.want)
		}
	}
}
