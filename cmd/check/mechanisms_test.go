package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mechanismCode matches a mechanism's short name: M1, M10.
var mechanismCode = regexp.MustCompile(`\bM[0-9]+\b`)

// TestListMechanisms checks that `check list` ends with a legend of the
// mechanisms, that every M code it cites is in the legend, and that every
// M code the docs and the README cite is too.
func TestListMechanisms(t *testing.T) {
	code, out, _ := run("list")
	if code != exitValid {
		t.Fatalf("check list: exit %d", code)
	}
	body, legend, ok := strings.Cut(out, "\nmechanisms (the M codes above; docs/concepts.md tells each in full):\n")
	if !ok {
		t.Fatalf("check list has no legend of the mechanisms:\n%s", out)
	}
	var codes []string
	for _, m := range mechanisms {
		codes = append(codes, m.code)
		if !regexp.MustCompile(`(?m)^  ` + m.code + ` +` + regexp.QuoteMeta(m.what) + `$`).MatchString(legend) {
			t.Errorf("the legend lacks %s: %s", m.code, m.what)
		}
	}
	cited := map[string]string{"check list": body, "README.md": read(t, filepath.Join("..", "..", "README.md"))}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs: %v %v", docs, err)
	}
	for _, d := range docs {
		cited[filepath.Base(d)] = read(t, d)
	}
	if !strings.Contains(body, "(M5)") {
		t.Error("check list cites no mechanism: the test would see nothing")
	}
	for where, text := range cited {
		for _, c := range mechanismCode.FindAllString(text, -1) {
			if !slices.Contains(codes, c) {
				t.Errorf("%s cites %s, which the legend does not define", where, c)
			}
		}
	}
}

// TestConceptsDefinesMechanisms checks that docs/concepts.md defines every
// mechanism of the legend in its table.
func TestConceptsDefinesMechanisms(t *testing.T) {
	concepts := read(t, filepath.Join("..", "..", "docs", "concepts.md"))
	for _, m := range mechanisms {
		if !strings.Contains(concepts, "\n| "+m.code+" | ") {
			t.Errorf("docs/concepts.md does not define %s", m.code)
		}
	}
}

// read returns a file's text.
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
