package main

import (
	"flag"
	"io"
	"slices"
	"testing"

	"github.com/lockcheck/lockcheck/runner"
)

// TestObserveFlag: --observe is on by default, stands alone as a boolean
// flag, and --observe=false turns the observer off and is in the re-run
// command.
func TestObserveFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		off  bool
	}{{nil, false}, {[]string{"--observe"}, false}, {[]string{"--observe=false"}, true}, {[]string{"--observe=false", "--observe=true"}, false}} {
		var tt runner.Test
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		observeFlag(fs, &tt)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if tt.NoObserve != tc.off {
			t.Errorf("%v: NoObserve %v, want %v", tc.args, tt.NoObserve, tc.off)
		}
		if got := slices.Contains(runner.Command(tt), "--observe=false"); got != tc.off {
			t.Errorf("%v: re-run command %v", tc.args, runner.Command(tt))
		}
	}
	var tt runner.Test
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	observeFlag(fs, &tt)
	if err := fs.Parse([]string{"--observe=maybe"}); err == nil {
		t.Error("--observe=maybe accepted")
	}
}
