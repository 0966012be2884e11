package main

import (
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/scenarios"
)

// TestRunHelpListsEverything: `check run --help` prints, on stdout, every
// nemesis, --scenario with every scenario, and one default for --seed.
func TestRunHelpListsEverything(t *testing.T) {
	code, out, stderr := run("run", "--help")
	if code != exitValid || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, k := range nemesis.Kinds() {
		if !strings.Contains(out, k.Name) {
			t.Errorf("no nemesis %s in the help", k.Name)
		}
	}
	if !strings.Contains(out, "-scenario") {
		t.Error("no --scenario in the help")
	}
	for _, sc := range scenarios.All() {
		if !strings.Contains(out, sc.Name) {
			t.Errorf("no scenario %s in the help", sc.Name)
		}
	}
	_, seed, _ := strings.Cut(out, "-seed")
	seed, _, _ = strings.Cut(seed, "\n  -")
	if n := strings.Count(seed, "default"); n != 1 {
		t.Errorf("--seed's help names %d defaults: %q", n, seed)
	}
}

// TestDidYouMean: a mistyped design, scenario, nemesis, workload or flag
// is one line (exit 3) naming what was most likely meant; a duration
// without its unit says what one looks like.
func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--lock", "redis-setpx"}, `did you mean "redis-set-px"?`},
		{[]string{"run", "--scenario", "redis-paus"}, `did you mean "redis-pause"?`},
		{[]string{"run", "--lock", "redis-set-px", "--nemesis", "pause,partiton"}, `did you mean "partition"?`},
		{[]string{"run", "--lock", "redis-set-px", "--workload", "inventry"}, `unknown workload "inventry"; did you mean "inventory"?`},
		{[]string{"run", "--lok", "redis-set-px"}, "did you mean --lock?"},
		{[]string{"analyze", "--check-timout", "5s", "x"}, "did you mean --check-timeout?"},
		{[]string{"run", "--lock", "redis-set-px", "--time", "10"}, "a duration with its unit, such as 30s"},
		{[]string{"run", "--lock", "redis-set-px", "--seed", "-1"}, "want a whole number, 0 or more"},
	} {
		code, out, stderr := run(tt.args...)
		if code != exitError || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and one line with %q", tt.args, code, out, stderr, tt.want)
		}
	}
	// Nothing close: no guess.
	if _, _, stderr := run("run", "--lock", "postgres-magic"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a guess for a name close to nothing: %q", stderr)
	}
}

// TestRunFlagsInHelp: check matrix --help and check shrink --help name
// the cells format's page (matrix) and list the check run flags they pass
// on, leaving out their own and those the matrix sets for every run.
func TestRunFlagsInHelp(t *testing.T) {
	for _, c := range []struct {
		cmd         string
		want, lacks []string
	}{
		{"matrix", []string{"docs/matrix.md", "check run flags it takes:", "--lease", "--fencing", "--workload"}, []string{" --seed ", " --store ", " --quiet ", " --lock "}},
		{"shrink", []string{"check run flags it takes:", "--lease", "--lock"}, []string{" --seed ", " --store "}},
	} {
		code, out, _ := run(c.cmd, "--help")
		i := strings.Index(out, "check run flags it takes:")
		j := strings.Index(out, "\n  -")
		if code != exitValid || i < 0 || j < i {
			t.Fatalf("check %s --help: exit %d, no run flag list before the flags:\n%s", c.cmd, code, out)
		}
		list := strings.ReplaceAll(out[i:j], "\n", " ") + " "
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("check %s --help lacks %q", c.cmd, w)
			}
		}
		for _, l := range c.lacks {
			if strings.Contains(list, l) {
				t.Errorf("check %s --help lists %q among the run flags it takes: %s", c.cmd, l, list)
			}
		}
	}
}
