package matrix

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Expect is the verdict a cell expects, in the letters of the expected
// table in docs/verdicts.md.
type Expect string

// The expectations a cell can carry.
const (
	// Safe (S): every exercised run is valid.
	Safe Expect = "S"
	// Unsafe (U): at least UnsafeRate of the exercised runs are invalid.
	Unsafe Expect = "U"
	// Stuck (L): at least UnsafeRate of the exercised runs are invalid
	// with a stuck-lock anomaly.
	Stuck Expect = "L"
	// Depends (D): no expectation; the tally is reported.
	Depends Expect = "D"
	// FromCatalog (?) in a cells file takes the cell's expectation from
	// the built-in catalog (D when the catalog has none).
	FromCatalog Expect = "?"
)

// UnsafeRate is the share of exercised runs a U or L cell must find
// invalid.
const UnsafeRate = 0.9

// ParseExpect reads one of S, U, L, D or ?.
func ParseExpect(s string) (Expect, error) {
	switch e := Expect(s); e {
	case Safe, Unsafe, Stuck, Depends, FromCatalog:
		return e, nil
	}
	return "", fmt.Errorf("expectation %q: want S (valid), U (invalid), L (stuck lock), D (depends) or ? (from the catalog)", s)
}

// Cell is one cell of a matrix: a row (usually the lock design), a column
// (usually the fault), what it expects and the `check run` flags that run
// it (without --seed, --store and --quiet, which the matrix sets).
type Cell struct {
	Row    string `json:"row"`
	Column string `json:"column"`
	Expect Expect `json:"expect"`
	// Require are the danger conditions (checker.Conditions) some run of
	// the cell must reach: the cell misses when none of its runs reached
	// one of them.
	Require []string `json:"require,omitempty"`
	Args    []string `json:"args"`
}

// Name is "ROW COLUMN".
func (c Cell) Name() string { return c.Row + " " + c.Column }

// Key identifies a cell across matrices: its row, column and flags.
func (c Cell) Key() string {
	return c.Row + "\x00" + c.Column + "\x00" + strings.Join(c.Args, "\x00")
}

// Scenario returns the named scenario the cell runs, "" for none.
func (c Cell) Scenario() string { return flagMap(c.Args)["scenario"] }

// String is the cell as a line of a cells file.
func (c Cell) String() string {
	words := make([]string, len(c.Args))
	for i, a := range c.Args {
		words[i] = quoteWord(a)
	}
	head := []string{c.Row, c.Column, string(c.Expect)}
	if len(c.Require) > 0 {
		head = append(head, requirePrefix+strings.Join(c.Require, ","))
	}
	return strings.Join(append(head, words...), " ")
}

// requirePrefix starts the word of a cells line that names the conditions
// a cell requires: reach=NAME[,NAME].
const requirePrefix = "reach="

// parseRequire reads the names of a reach= word; each must be a
// registered danger condition.
func parseRequire(w string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(strings.TrimPrefix(w, requirePrefix), ",") {
		if _, ok := checker.ConditionNamed(n); !ok {
			var known []string
			for _, c := range checker.Conditions() {
				known = append(known, c.Name)
			}
			msg := fmt.Sprintf("%s: unknown danger condition %q", w, n)
			if near := suggest.Closest(n, known); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return nil, fmt.Errorf("%s (known: %s)", msg, strings.Join(known, ", "))
		}
		if slices.Contains(names, n) {
			return nil, fmt.Errorf("%s: condition %q twice", w, n)
		}
		names = append(names, n)
	}
	return names, nil
}

// reserved are the flags the matrix sets on every run itself.
var reserved = map[string]bool{"seed": true, "store": true, "quiet": true}

// ParseCells reads a cells file: one cell a line,
//
//	ROW COLUMN EXPECT [reach=NAME[,NAME]] FLAGS...
//
// where EXPECT is S, U, L, D or ?, reach= names danger conditions some
// run of the cell must reach (checker.Conditions), and FLAGS are `check
// run` flags (words
// split on blanks; single or double quotes keep blanks in a word; no
// escapes). Blank lines and lines starting with # are skipped. A cell
// needs --lock or --scenario, may not set --seed, --store or --quiet, and
// no two cells share a row and column. name (the file's) prefixes errors.
func ParseCells(r io.Reader, name string) ([]Cell, error) {
	var cells []Cell
	seen := make(map[string]int)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		c, ok, err := ParseCell(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if !ok {
			continue
		}
		k := c.Row + " " + c.Column
		if prev, dup := seen[k]; dup {
			return nil, fmt.Errorf("%s:%d: cell %q already on line %d", name, n, k, prev)
		}
		seen[k] = n
		cells = append(cells, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("%s: no cells", name)
	}
	return cells, nil
}

// ParseCell parses one line of a cells file; ok is false for a blank or
// comment line.
func ParseCell(line string) (c Cell, ok bool, err error) {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "#") {
		return Cell{}, false, nil
	}
	words, err := splitWords(t)
	if err != nil {
		return Cell{}, false, err
	}
	if len(words) < 4 {
		return Cell{}, false, fmt.Errorf("want ROW COLUMN EXPECT FLAGS..., got %d words", len(words))
	}
	c = Cell{Row: words[0], Column: words[1], Args: words[3:]}
	if strings.HasPrefix(words[3], requirePrefix) {
		if c.Require, err = parseRequire(words[3]); err != nil {
			return Cell{}, false, err
		}
		c.Args = words[4:]
	}
	for _, w := range []string{c.Row, c.Column} {
		if err := checkLabel(w); err != nil {
			return Cell{}, false, err
		}
	}
	if c.Expect, err = ParseExpect(words[2]); err != nil {
		return Cell{}, false, err
	}
	if err := CheckArgs(c.Args); err != nil {
		return Cell{}, false, err
	}
	return c, true, nil
}

// CheckArgs reports the first problem with a cell's run flags (see
// CheckFlags), or that they name neither --lock nor --scenario.
func CheckArgs(args []string) error {
	if err := CheckFlags(args); err != nil {
		return err
	}
	if m := flagMap(args); m["lock"] == "" && m["scenario"] == "" {
		return fmt.Errorf("a cell needs --lock or --scenario")
	}
	return nil
}

// CheckFlags reports the first problem with `check run` flags given to a
// matrix: a word that is not a flag where one is due, or a flag the matrix
// sets itself (--seed, --store, --quiet).
func CheckFlags(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !isFlag(a) || name == "" {
			return fmt.Errorf("%q is not a flag (flags start with --)", a)
		}
		if reserved[name] {
			return fmt.Errorf("--%s is set by the matrix for every run; leave it out", name)
		}
		if !hasValue && i+1 < len(args) && !isFlag(args[i+1]) {
			i++ // the flag's value
		}
	}
	return nil
}

// checkLabel accepts a row or column label: printable, no blanks, no |,
// no quotes, not a flag or a comment.
func checkLabel(w string) error {
	if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "#") {
		return fmt.Errorf("label %q: must not start with - or #", w)
	}
	for _, r := range w {
		if r <= ' ' || r == 0x7f || r == '|' || r == '"' || r == '\'' || r == '`' || r == '<' || r == '>' || r == '&' {
			return fmt.Errorf("label %q: no blanks, quotes, |, <, >, & or control characters", w)
		}
	}
	return nil
}

// isFlag reports whether a word is a flag rather than a value ("-1s" is a
// value).
func isFlag(w string) bool {
	return len(w) > 1 && w[0] == '-' && !(w[1] >= '0' && w[1] <= '9') && w[1] != '.'
}

// flagMap reads flags into name -> value ("true" for a flag with no value);
// a later flag wins, as in `check run`.
func flagMap(args []string) map[string]string {
	m := make(map[string]string)
	for i := 0; i < len(args); i++ {
		if !isFlag(args[i]) {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !hasValue {
			value = "true"
			if i+1 < len(args) && !isFlag(args[i+1]) {
				value = args[i+1]
				i++
			}
		}
		m[name] = value
	}
	return m
}

// splitWords splits a line on blanks; single or double quotes keep blanks
// inside a word.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case r < ' ' && r != '\t' || r == 0x7f:
			return nil, fmt.Errorf("control character %q in the line", r)
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// quoteWord quotes a word for a cells file when it needs it.
func quoteWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t'\"") {
		return w
	}
	if !strings.Contains(w, "'") {
		return "'" + w + "'"
	}
	return `"` + w + `"`
}
