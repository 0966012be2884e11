package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeReaching is a stand-in for the check binary's `run`: every run is
// valid, and from seed 3 on it reached holder-cut-off.
const fakeReaching = fakeRunPrelude + `if [ "$seed" -ge 3 ]; then
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
	}
	m := &Matrix{Version: Version}
	m.Cells = x.Run(context.Background(), cells, []uint64{1, 2})
	m.Judge()
	if m.Cells[0].Status != Missed || m.Cells[1].Status != Missed || m.Cells[2].Status != Met {
		t.Fatalf("before: %s %s %s", m.Cells[0].Why, m.Cells[1].Why, m.Cells[2].Status)
	}
	var log strings.Builder
	added := x.UntilCovered(context.Background(), m, 6, 5, &log)
	if added != 4 {
		t.Errorf("added %d runs, want 4 (seed 3 of both, then 4 and 5 of the one that never reaches)", added)
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
		"until-covered: never reply never reached release-reply-lost in 5 runs (--max-seeds)"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, log.String())
		}
	}
	// The new runs' directories are numbered after the plan's items.
	if _, err := os.Stat(filepath.Join(x.Dir, "runs", "007-late-cut-s3")); err != nil {
		t.Error(err)
	}
}
