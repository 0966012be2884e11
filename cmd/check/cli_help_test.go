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
