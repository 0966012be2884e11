package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The check commands of the deploy files, and the check CLI that judges them.

// invocation is one check command: its subcommand (one word, or two for
// matrix merge and matrix diff) and the words after it.
type invocation struct {
	where  string
	sub    []string
	words  []string
	script string // the shell script it is in, if any

	// Filled by checkCLI.check.
	flags map[string]string
	args  []string
}

// command is the subcommand, as "matrix merge".
func (inv invocation) command() string { return strings.Join(inv.sub, " ") }

// flag is the value of --name (after checkCLI.check).
func (inv invocation) flag(name string) (string, bool) {
	v, ok := inv.flags[name]
	return v, ok
}

// scriptCommands finds the check commands of a shell script: a simple
// command whose first word (after exec) is check or a path to it.
func scriptCommands(where, script string) []invocation {
	var invs []invocation
	for _, words := range shellCommands(script) {
		if len(words) > 0 && words[0] == "exec" {
			words = words[1:]
		}
		if len(words) == 0 || path.Base(words[0]) != "check" {
			continue
		}
		sub, rest := words[1:min(2, len(words))], words[min(2, len(words)):]
		if len(sub) == 1 && sub[0] == "matrix" && len(rest) > 0 && (rest[0] == "merge" || rest[0] == "diff") {
			sub, rest = []string{"matrix", rest[0]}, rest[1:]
		}
		invs = append(invs, invocation{where: where, sub: sub, words: rest, script: script})
	}
	return invs
}

// shellCommands splits a shell script into simple commands of words, well
// enough for the deploy files' scripts: quotes are taken off a word and
// keep what they hold; $( ) and $(( )) stay in one word as written;
// backslash-newline joins lines; a newline, ;, &, && , || and | end a
// command; a redirection (>f, > f, 2>&1) is left out; # at the start of a
// word starts a comment.
func shellCommands(script string) [][]string {
	var cmds [][]string
	var cur []string
	var w strings.Builder
	inWord, depth, quote := false, 0, rune(0)
	endWord := func() {
		if inWord {
			cur = append(cur, w.String())
		}
		w.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if words := dropRedirections(cur); len(words) > 0 {
			cmds = append(cmds, words)
		}
		cur = nil
	}
	rs := []rune(strings.ReplaceAll(script, "\\\n", ""))
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case depth > 0:
			w.WriteRune(c)
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
			}
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '$' && i+1 < len(rs) && rs[i+1] == '(':
			w.WriteString("$(")
			i++
			depth, inWord = 1, true
		case c == '#' && !inWord:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case c == '&' && inWord && strings.HasSuffix(w.String(), ">"):
			w.WriteRune(c) // 2>&1
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n' || c == ';' || c == '&' || c == '|':
			endCmd()
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

var redirRE = regexp.MustCompile(`^[0-9]*(>>?|<)(&[0-9-])?`)

// dropRedirections leaves out the redirections of a command's words.
func dropRedirections(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		m := redirRE.FindString(words[i])
		switch {
		case m == "":
			out = append(out, words[i])
		case m == words[i] && !strings.Contains(m, "&"):
			i++ // > file: the file is the next word
		}
	}
	return out
}

// checkCLI asks the check binary of this checkout which subcommands and
// flags it has (`check SUB --help`).
type checkCLI struct {
	bin   string
	mu    sync.Mutex
	flags map[string]map[string]bool // "matrix merge" -> flag -> takes a value
}

// takesArgs are the subcommands that take words that are not flags.
var takesArgs = map[string]bool{"matrix merge": true, "matrix diff": true, "analyze": true, "repro": true}

// check parses inv's words with its subcommand's flags and fills inv's
// flags and args: an unknown subcommand or flag, or an argument where
// none is taken, is an error.
func (c *checkCLI) check(inv *invocation) error {
	if len(inv.sub) == 0 {
		return fmt.Errorf("%s: check with no subcommand", inv.where)
	}
	flags, err := c.flagSet(inv.sub)
	if err != nil {
		return fmt.Errorf("%s: %w", inv.where, err)
	}
	inv.flags = map[string]string{}
	for i := 0; i < len(inv.words); i++ {
		w := inv.words[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			if !takesArgs[inv.command()] {
				return fmt.Errorf("%s: check %s takes no argument %q", inv.where, inv.command(), w)
			}
			inv.args = append(inv.args, w)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		takesValue, ok := flags[name]
		if !ok {
			return fmt.Errorf("%s: check %s has no flag --%s", inv.where, inv.command(), name)
		}
		if takesValue && !hasValue {
			if i+1 == len(inv.words) {
				return fmt.Errorf("%s: check %s --%s has no value", inv.where, inv.command(), name)
			}
			i++
			value = inv.words[i]
		}
		inv.flags[name] = value
	}
	return nil
}

// flagSet returns the flags of `check SUB`, from its --help: a line
// "  -name" is a boolean flag, "  -name type" one that takes a value.
func (c *checkCLI) flagSet(sub []string) (map[string]bool, error) {
	key := strings.Join(sub, " ")
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flags[key]; ok {
		return f, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(c.bin, append(slices.Clone(sub), "--help")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("`check %s` is not a command of check (%v: %s)", key, err, strings.TrimSpace(stderr.String()))
	}
	f := map[string]bool{}
	for _, line := range strings.Split(stdout.String()+stderr.String(), "\n") {
		if fields := strings.Fields(line); strings.HasPrefix(line, "  -") && len(fields) > 0 {
			f[strings.TrimLeft(fields[0], "-")] = len(fields) > 1
		}
	}
	if len(f) == 0 {
		return nil, fmt.Errorf("`check %s --help` lists no flags", key)
	}
	c.flags[key] = f
	return f, nil
}

var (
	cliOnce sync.Once
	cliDir  string
	cli     *checkCLI
	cliErr  error
)

// checkBinary builds the check binary of this checkout once per test run.
func checkBinary(t *testing.T) *checkCLI {
	t.Helper()
	cliOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			cliErr = fmt.Errorf("no go command to build check with: %w", err)
			return
		}
		if cliDir, cliErr = os.MkdirTemp("", "lockcheck-deploy-"); cliErr != nil {
			return
		}
		bin := filepath.Join(cliDir, "check")
		cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/check")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build ./cmd/check: %v\n%s", err, out)
			return
		}
		cli = &checkCLI{bin: bin, flags: map[string]map[string]bool{}}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cli
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

func keys[V any](m map[string]V) []string { return sortedKeys(m) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func mapsEqual(a, b map[string]bool) bool {
	return slices.Equal(keys(a), keys(b))
}

// TestShellCommands: the scripts' check commands are found as the shell
// would split them.
func TestShellCommands(t *testing.T) {
	for _, tt := range []struct {
		script string
		want   [][]string
	}{
		{`exec check matrix --seeds 1..3 --shard $((JOB_COMPLETION_INDEX+1))/4`, [][]string{{"exec", "check", "matrix", "--seeds", "1..3", "--shard", "$((JOB_COMPLETION_INDEX+1))/4"}}},
		{"set -eu\nx=$(ls -d \"$s\"m/*/ | tail -n 1); echo \"a b\" >&2\ncheck a \\\n  --b 'c d' 2>&1 # done", [][]string{{"set", "-eu"}, {"x=$(ls -d \"$s\"m/*/ | tail -n 1)"}, {"echo", "a b"}, {"check", "a", "--b", "c d"}}},
		{"a && b || c | d > out", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}},
	} {
		if got := shellCommands(tt.script); !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("shellCommands(%q) = %q, want %q", tt.script, got, tt.want)
		}
	}
}
