package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/schedule"
)

// fakeReaching is a stand-in for the check binary's `run`: every run is
// valid; from seed 3 on it reached holder-cut-off, and so did a run
// whose partition was aimed at a grant.
const fakeReaching = fakeRunPrelude + `case " $* " in *" partition@grant+5ms "*) seed=3;; *" partition "*) seed=0;; esac
if [ "$seed" -ge 3 ]; then
  echo '{"valid":true,"anomalies":[],"reached":[{"name":"holder-cut-off","count":2}]}' > "$dir/results.json"
else
  echo '{"valid":true,"anomalies":[]}' > "$dir/results.json"
fi
exit 0
`

// TestUntilCovered: a cell whose required condition seeds 1..2 did not
// reach gets seed 3, which reaches it, and stops; one that never reaches
// its condition stops at the cap; one that reached it gets no more runs.
func TestUntilCovered(t *testing.T) {
	x := fakeExecutor(t)
	if err := os.WriteFile(x.Exe, []byte(fakeReaching), 0o755); err != nil {
		t.Fatal(err)
	}
	cells := []Cell{
		{Row: "late", Column: "cut", Expect: Safe, Require: []string{"holder-cut-off"}, Args: []string{"--lock", "redis-set-px"}},
		{Row: "never", Column: "reply", Expect: Safe, Require: []string{"release-reply-lost"}, Args: []string{"--lock", "redis-set-px"}},
		{Row: "free", Column: "none", Expect: Safe, Args: []string{"--lock", "redis-set-px"}},
		{Row: "aimed", Column: "partition", Expect: Safe, Require: []string{"holder-cut-off"}, Args: []string{"--lock", "redis-set-px", "--nemesis", "partition"}},
	}
	m := &Matrix{Version: Version}
	m.Cells = x.Run(context.Background(), cells, []uint64{1, 2})
	m.Judge()
	if m.Cells[0].Status != Missed || m.Cells[1].Status != Missed || m.Cells[2].Status != Met || m.Cells[3].Status != Missed {
		t.Fatalf("before: %s %s %s", m.Cells[0].Why, m.Cells[1].Why, m.Cells[2].Status)
	}
	var log strings.Builder
	added := x.UntilCovered(context.Background(), m, 6, 5, &log)
	if added != 5 {
		t.Errorf("added %d runs, want 5 (seed 3 of three, then 4 and 5 of the one that never reaches)", added)
	}
	// Seeds 1..2 of the partition cell missed; its seed 3 fired the
	// partition at a grant, and that reached the cut-off holder.
	if c := m.Cells[3]; len(c.Runs) != 3 || c.Status != Met || c.Runs[2].Aimed != "partition@grant+5ms" || c.Runs[1].Aimed != "" {
		t.Errorf("aimed cell: %d runs, %s %q, runs %+v: want its third run aimed and met", len(c.Runs), c.Status, c.Why, c.Runs)
	}
	if n := len(m.Cells[0].Runs); n != 3 || m.Cells[0].Status != Met || m.Cells[0].Tally.Reached["holder-cut-off"] != 1 {
		t.Errorf("late cell: %d runs, %s %q, want 3 runs and met", n, m.Cells[0].Status, m.Cells[0].Why)
	}
	if n := len(m.Cells[1].Runs); n != 5 || m.Cells[1].Status != Missed || m.Cells[1].Why != "never reached release-reply-lost" {
		t.Errorf("never cell: %d runs, %s %q, want 5 runs and missed", n, m.Cells[1].Status, m.Cells[1].Why)
	}
	if n := len(m.Cells[2].Runs); n != 2 {
		t.Errorf("a cell that requires nothing got %d runs, want its 2", n)
	}
	for _, want := range []string{"until-covered: late cut reached holder-cut-off at seed 3, after 3 runs",
		"until-covered: never reply never reached release-reply-lost in 5 runs (--max-seeds)",
		"until-covered: aimed partition reached holder-cut-off at seed 3, after 3 runs (1 aimed: --nemesis partition@grant+5ms)"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, log.String())
		}
	}
	// The new runs' directories are numbered after the plan's items.
	if _, err := os.Stat(filepath.Join(x.Dir, "runs", "007-late-cut-s3")); err != nil {
		t.Error(err)
	}
}

// TestAim: the plain kinds of a cell's --nemesis take the trigger of the
// first unreached condition that has one; a cell with nothing to aim is
// left as it is.
func TestAim(t *testing.T) {
	cases := []struct {
		name      string
		args      []string
		unreached []string
		want      string // the aimed --nemesis, "" for none
		wantArgs  []string
	}{
		{"pause", []string{"--lock", "l", "--nemesis", "pause"}, []string{"holder-paused-past-lease"},
			"pause@grant+5ms:lease+500ms", []string{"--lock", "l", "--nemesis", "pause@grant+5ms:lease+500ms"}},
		{"inline flag, two kinds", []string{"--nemesis=partition,blackhole", "--lock", "l"}, []string{"holder-cut-off"},
			"partition@grant+5ms,blackhole@grant+5ms", []string{"--nemesis=partition@grant+5ms,blackhole@grant+5ms", "--lock", "l"}},
		{"a triggered kind keeps its trigger", []string{"-nemesis", "kill@5s,reply-loss"}, []string{"release-reply-lost"},
			"kill@5s,reply-loss@release", []string{"-nemesis", "kill@5s,reply-loss@release"}},
		{"the first condition with an aim", []string{"--nemesis", "crash"}, []string{"wrote-after-it-could-know", "holder-crashed"},
			"crash@grant+5ms", []string{"--nemesis", "crash@grant+5ms"}},
		{"no condition with an aim", []string{"--nemesis", "pause"}, []string{"wrote-after-it-could-know", "no-such"}, "", nil},
		{"no plain kind", []string{"--nemesis", "pause@grant"}, []string{"holder-paused-past-lease"}, "", nil},
		{"none", []string{"--nemesis", "none"}, []string{"holder-cut-off"}, "", nil},
		{"no --nemesis", []string{"--lock", "l"}, []string{"holder-cut-off"}, "", nil},
		{"--nemesis with no value", []string{"--lock", "l", "--nemesis"}, []string{"holder-cut-off"}, "", nil},
		{"a scenario", []string{"--scenario", "redis-pause"}, []string{"holder-paused-past-lease"}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cell := Cell{Row: "r", Column: "c", Expect: Safe, Args: c.args}
			orig := strings.Join(c.args, " ")
			got, spec := Aim(cell, c.unreached)
			if spec != c.want {
				t.Fatalf("aimed %q, want %q", spec, c.want)
			}
			wantArgs := c.wantArgs
			if wantArgs == nil {
				wantArgs = c.args
			}
			if strings.Join(got.Args, " ") != strings.Join(wantArgs, " ") {
				t.Errorf("args %q, want %q", got.Args, wantArgs)
			}
			if strings.Join(c.args, " ") != orig {
				t.Errorf("the cell's own args changed to %q", c.args)
			}
		})
	}
}

// TestConditionAimsParse: every condition's aim is a trigger --nemesis
// takes after a kind's @.
func TestConditionAimsParse(t *testing.T) {
	aims := 0
	for _, c := range checker.Conditions() {
		if c.Aim == "" {
			continue
		}
		aims++
		if _, err := schedule.ParseFault("pause@" + c.Aim); err != nil {
			t.Errorf("%s: aim %q: %v", c.Name, c.Aim, err)
		}
	}
	if aims == 0 {
		t.Error("no condition has an aim")
	}
}
