package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/clusters"
	_ "github.com/lockcheck/lockcheck/services"
)

// toolkits are the packages every service's folder builds on: they hold
// no service of their own and name none.
var toolkits = []string{"clusters", "containers"}

// genericParts are the parts of hyphenated service names that are plain
// words, not names: redis-cluster, pgbouncer-session,
// pgbouncer-transaction.
var genericParts = map[string]bool{"cluster": true, "session": true, "transaction": true}

// maxToolkitFiles bounds the node toolkit's size in non-test files.
const maxToolkitFiles = 20

// serviceWords returns the words that name a registered service: every
// service name and each part of a hyphenated one ("redis-sentinel" gives
// "redis" and "sentinel") but the generic words of genericParts, and the
// names its Server field gives.
func serviceWords() []string {
	var words []string
	for _, s := range clusters.Services() {
		words = append(words, strings.ToLower(s.Name))
		for _, w := range strings.Split(strings.ToLower(s.Name), "-") {
			if !genericParts[w] {
				words = append(words, w)
			}
		}
		if s.Server != "" {
			words = append(words, strings.ToLower(s.Server))
		}
	}
	slices.Sort(words)
	return slices.Compact(words)
}

// codeLines returns a Go file's lines with comments cut off (a line
// comment, or a line inside a block comment), keeping the line numbers.
func codeLines(src string) []string {
	lines := strings.Split(src, "\n")
	inBlock := false
	for i, l := range lines {
		if inBlock {
			if j := strings.Index(l, "*/"); j >= 0 {
				inBlock, l = false, l[j+2:]
			} else {
				l = ""
			}
		}
		if j := strings.Index(l, "/*"); j >= 0 && !strings.Contains(l[:j], "\"") && !strings.Contains(l[:j], "`") {
			if k := strings.Index(l[j:], "*/"); k >= 0 {
				l = l[:j] + l[j+k+2:]
			} else {
				inBlock, l = true, l[:j]
			}
		}
		if j := strings.Index(l, "//"); j >= 0 && strings.Count(l[:j], "\"")%2 == 0 && strings.Count(l[:j], "`")%2 == 0 {
			l = l[:j]
		}
		lines[i] = l
	}
	return lines
}

// TestToolkitNamesNoService: the node toolkit (clusters) and the
// container toolkit (containers) name no registered service in their
// code, comments aside, so that a service lives in its own folder; and
// the node toolkit stays small.
func TestToolkitNamesNoService(t *testing.T) {
	top := root(t)
	words := serviceWords()
	if !slices.Contains(words, "zookeeper") || !slices.Contains(words, "sentinel") {
		t.Fatalf("service words %v: the services are not registered", words)
	}
	named := regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `)`)
	for _, pkg := range toolkits {
		files, err := filepath.Glob(filepath.Join(top, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			n++
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range codeLines(string(src)) {
				if m := named.FindString(l); m != "" {
					t.Errorf("%s/%s:%d names the service %q: %s", pkg, filepath.Base(f), i+1, m, strings.TrimSpace(l))
				}
			}
		}
		if pkg == "clusters" && n > maxToolkitFiles {
			t.Errorf("clusters has %d non-test files, more than %d", n, maxToolkitFiles)
		}
	}
}

func TestCodeLines(t *testing.T) {
	src := "a := 1 // redis\n/* etcd\nzookeeper */ b := \"// nats\"\nc := `/* x */`"
	got := codeLines(src)
	want := []string{"a := 1 ", "", " b := \"// nats\"", "c := `/* x */`"}
	if !slices.Equal(got, want) {
		t.Errorf("codeLines = %q, want %q", got, want)
	}
}

// serviceHomes are the folders whose code may name a service: the
// services' own folders (and services/services.go, which imports them
// all), the designs (workloads), the scenarios, the reproduced bug
// reports (bugs), the lessons (learn) and the worker kit's examples
// (kit/examples), each a worker for one service.
var serviceHomes = []string{"services", "workloads", "scenarios", "bugs", "learn", "kit/examples"}

// TestSharedCodeNamesNoService: outside the services' homes, the code
// (comments aside) names no service but Redis, whose server also keeps the
// protected resource: what checker, report, nemesis, runner, conformance
// and cmd/check need from a service comes through a capability or a
// registered record.
func TestSharedCodeNamesNoService(t *testing.T) {
	top := root(t)
	var words []string
	for _, w := range serviceWords() {
		if !strings.Contains(w, "redis") {
			words = append(words, w)
		}
	}
	for _, w := range []string{"zookeeper", "etcd", "sentinel", "postgres", "mariadb", "pgbouncer", "nats"} {
		if !slices.Contains(words, w) {
			t.Fatalf("service words %v lack %q: the services are not registered", words, w)
		}
	}
	named := regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `)`)
	checked := 0
	err := filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || slices.Contains(serviceHomes, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, l := range codeLines(string(src)) {
			if m := named.FindString(l); m != "" {
				t.Errorf("%s:%d names the service %q outside its folder: %s", rel, i+1, m, strings.TrimSpace(l))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("only %d files checked: the walk missed the tree", checked)
	}
}
