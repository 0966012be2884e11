package doccheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is the bound README.md must stay under: it is a manual,
// and the reference lives in docs/.
const maxReadmeLines = 200

// root returns the repository's top directory (two levels above this
// package).
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root %s: %v", dir, err)
	}
	return dir
}

// pages returns README.md and every docs/*.md, relative to the root.
func pages(t *testing.T, top string) []string {
	t.Helper()
	out := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(top, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, err := filepath.Rel(top, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

var (
	// fence opens or closes a fenced code block.
	fence = regexp.MustCompile("^\\s*(```|~~~)")
	// codeSpan is an inline code span; links inside one are not links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// inlineLink is [text](target) or ![alt](target "title").
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refLink is a reference definition: [name]: target.
	refLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// heading is an ATX heading.
	heading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	// headingLink is a link inside a heading, whose text the anchor keeps.
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	// scheme marks a link that leaves the repository (https:, mailto:).
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// link is one link target found on a page.
type link struct {
	line   int
	target string
}

// scan returns a page's link targets and the anchors of its headings,
// leaving out fenced code blocks and inline code spans.
func scan(text string) (links []link, anchors map[string]bool) {
	anchors = make(map[string]bool)
	seen := make(map[string]int)
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			slug := slugify(m[2])
			if k := seen[slug]; k > 0 {
				anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			links = append(links, link{n, m[1]})
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, "``"), -1) {
			links = append(links, link{n, m[1]})
		}
	}
	return links, anchors
}

// slugify is GitHub's heading anchor: lower case, markup and punctuation
// other than '-' and '_' dropped, spaces turned into '-'.
func slugify(h string) string {
	h = strings.NewReplacer("`", "", "*", "").Replace(h)
	h = headingLink.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestLinksResolve fails for a relative link in README.md or docs/*.md that
// names no file of the repository, or an anchor that names no heading of
// the markdown page it points into.
func TestLinksResolve(t *testing.T) {
	top := root(t)
	anchorsOf := make(map[string]map[string]bool) // page (slash path) -> anchors
	linksOf := make(map[string][]link)
	read := func(page string) (map[string]bool, error) {
		if a, ok := anchorsOf[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(page)))
		if err != nil {
			return nil, err
		}
		l, a := scan(string(b))
		anchorsOf[page], linksOf[page] = a, l
		return a, nil
	}
	checked := 0
	for _, page := range pages(t, top) {
		if _, err := read(page); err != nil {
			t.Fatal(err)
		}
		for _, l := range linksOf[page] {
			if scheme.MatchString(l.target) || strings.HasPrefix(l.target, "//") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(l.target, "#")
			target := page
			if path != "" {
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), filepath.FromSlash(path))))
				if target == ".." || strings.HasPrefix(target, "../") || filepath.IsAbs(path) {
					t.Errorf("%s:%d: link %q leaves the repository", page, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(top, filepath.FromSlash(target))); err != nil {
					t.Errorf("%s:%d: link %q: no file %s in the repository", page, l.line, l.target, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			anchors, err := read(target)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
				continue
			}
			if !anchors[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", page, l.line, l.target, target, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found in README.md or docs/: the scan is broken")
	}
}

// TestReadmeIsShort fails when README.md has maxReadmeLines lines or more,
// or a line over 200 characters.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) >= maxReadmeLines {
		t.Errorf("README.md has %d lines, want fewer than %d: move reference material to docs/", len(lines), maxReadmeLines)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > 200 {
			t.Errorf("README.md:%d: %d characters, want at most 200", i+1, n)
		}
	}
	for _, cmd := range []string{"make run", "make test"} {
		if !bytes.Contains(b, []byte(cmd)) {
			t.Errorf("README.md does not give the command %q", cmd)
		}
	}
}

// outside matches a citation of the notes that are not part of the
// repository (the shared folder beside it and its pages). The pattern is
// built from pieces so that this file does not match it.
var outside = regexp.MustCompile(strings.Join([]string{
	`\.\./` + `shared`,
	`shared` + `/(VERDICTS|DESIGN|STYLE)`,
	`DESIGN` + `\.md`,
	`VERDICTS` + `\.md`,
	`STYLE` + `\.md`,
}, "|"))

// trackedFiles returns the repository's tracked files (git ls-files), or,
// where git or the .git directory is missing, every file under top but
// .git, bin and store.
func trackedFiles(t *testing.T, top string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command("git", "ls-files", "-z")
		cmd.Dir = top
		out, err := cmd.Output()
		if err == nil {
			var files []string
			for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
				if f != "" {
					files = append(files, f)
				}
			}
			return files
		}
		t.Logf("git ls-files: %v; walking the tree instead", err)
	}
	var files []string
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", "store":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoOutsideCitations fails when a tracked file cites the shared folder
// or its DESIGN, VERDICTS or STYLE pages: a user who clones the repository
// cannot follow them.
func TestNoOutsideCitations(t *testing.T) {
	top := root(t)
	files := trackedFiles(t, top)
	if len(files) == 0 {
		t.Fatal("no files found")
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(f)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 || !outside.Match(b) {
			continue // binary, or clean
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d: cites %q, which is not in the repository; say it in docs/ instead", f, i+1, m)
			}
		}
	}
}
