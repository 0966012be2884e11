package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCheck is a stand-in for the check binary's `run` (not for any lock
// service): it stores a run in --store and ends by --seed: seed % 4 = 0
// valid, 1 invalid, 2 not exercised, 3 an error. It records its
// arguments in args.txt next to the run.
const fakeCheck = `#!/bin/sh
store= seed=
for a in "$@"; do
  case "$prev" in --store) store=$a;; --seed) seed=$a;; esac
  prev=$a
done
dir="$store/fake-test/20261123T130000"
mkdir -p "$dir"
echo "$@" > "$store/args.txt"
echo '{"name":"fake-test"}' > "$dir/test.json"
case $((seed % 4)) in
0) echo '{"valid":true,"anomalies":[]}' > "$dir/results.json"; echo "valid"; exit 0;;
1) echo '{"valid":false,"anomalies":[{"kind":"double-holder","start":2000000000,"explanation":"two holders"}]}' > "$dir/results.json"; exit 1;;
2) echo '{"valid":"unknown","not_exercised":"no fault hit a holder","anomalies":[]}' > "$dir/results.json"; exit 2;;
3) echo "check: set up cluster: boom" >&2; exit 3;;
esac
`

func fakeExecutor(t *testing.T) *Executor {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "check")
	if err := os.WriteFile(exe, []byte(fakeCheck), 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	mdir, err := NewDir(store, StoreDir, fakeMatrix().Started)
	if err != nil {
		t.Fatal(err)
	}
	return &Executor{Exe: exe, Store: store, Dir: mdir, Jobs: 2}
}

func TestExecutorRuns(t *testing.T) {
	x := fakeExecutor(t)
	cells := []Cell{
		{Row: "a", Column: "b", Expect: Depends, Args: []string{"--lock", "redis-set-px"}},
		{Row: "s", Column: "scenario", Expect: Unsafe, Args: []string{"--scenario", "redis-pause"}},
	}
	out := x.Run(context.Background(), cells, []uint64{4, 5, 6, 7})
	var got []string
	for _, r := range out[0].Runs {
		got = append(got, string(r.Verdict))
	}
	if strings.Join(got, " ") != "valid invalid not-exercised error" {
		t.Fatalf("verdicts %v", got)
	}
	r := out[0].Runs[1]
	if r.Story != "two holders" || r.FirstAnomalyS == nil || *r.FirstAnomalyS != 2 ||
		r.Dir != "matrix/20261123T130000/runs/002-a-b-s5/fake-test/20261123T130000" {
		t.Fatalf("invalid run %+v", r)
	}
	if e := out[0].Runs[3]; e.Error != "check: set up cluster: boom" || e.Exit != 3 {
		t.Fatalf("error run %+v", e)
	}
	// A scenario cell runs with --stop-on-anomaly first; every run gets
	// --quiet, its own --store and its --seed last.
	args, err := os.ReadFile(filepath.Join(x.Dir, "runs", "005-s-scenario-s4", "args.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := "run --stop-on-anomaly --scenario redis-pause --quiet --store " + filepath.Join(x.Dir, "runs", "005-s-scenario-s4") + " --seed 4"
	if strings.TrimSpace(string(args)) != want {
		t.Fatalf("args %q, want %q", args, want)
	}
}

func TestExecutorStopAndCancel(t *testing.T) {
	x := fakeExecutor(t)
	x.Jobs = 1
	x.Stop = func(c CellResult) bool {
		for _, r := range c.Runs {
			if r.Verdict == Invalid {
				return true
			}
		}
		return false
	}
	cells := []Cell{{Row: "a", Column: "b", Args: []string{"--lock", "x"}}}
	out := x.Run(context.Background(), cells, []uint64{8, 9, 10, 11})
	if n := len(out[0].Runs); n != 2 || out[0].Runs[1].Verdict != Invalid {
		t.Fatalf("failfast: %+v", out[0].Runs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x = fakeExecutor(t)
	out = x.Run(ctx, cells, []uint64{1, 2})
	for _, r := range out[0].Runs {
		if r.Verdict != Interrupted {
			t.Fatalf("run after cancel: %+v", r)
		}
	}
}
