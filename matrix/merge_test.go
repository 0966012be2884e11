package matrix

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// mergeCells are the cells of the merge tests with the verdicts their
// seeds 1..4 get (letters as in runs).
var mergeCells = []struct {
	cell    Cell
	letters string
}{
	{Cell{Row: "redis-set-px", Column: "none", Expect: Safe, Args: []string{"--lock", "redis-set-px"}}, "vvvv"},
	{Cell{Row: "redis-set-px", Column: "pause", Expect: Unsafe, Args: []string{"--lock", "redis-set-px", "--nemesis", "pause"}}, "iiin"},
	{Cell{Row: "zk-ephemeral", Column: "none", Expect: Safe, Args: []string{"--lock", "zk-ephemeral"}}, "vive"},
	{Cell{Row: "zk-ephemeral", Column: "pause", Expect: Unsafe, Args: []string{"--lock", "zk-ephemeral", "--nemesis", "pause"}}, "ivii"},
	{Cell{Row: "setnx-expire-crash", Column: "scenario", Expect: Stuck, Args: []string{"--scenario", "setnx-expire-crash"}}, "ssss"},
	{Cell{Row: "redis-watchdog", Column: "failover", Expect: Depends, Args: []string{"--lock", "redis-watchdog", "--nemesis", "failover"}}, "iviu"},
}

// shardedStore makes a store holding the n shards of the merge cells
// over seeds 1..4, each shard a stored matrix with its runs' directories,
// and returns the store, the shards' matrix directories and the one
// matrix that holds the same runs (judged), as `check matrix` would have
// stored it had one machine run them all.
func shardedStore(t *testing.T, n int) (string, []string, *Matrix) {
	t.Helper()
	store := t.TempDir()
	seeds := []uint64{1, 2, 3, 4}
	plan := Plan{Seeds: FormatSeeds(seeds)}
	for _, mc := range mergeCells {
		plan.Cells = append(plan.Cells, mc.cell)
	}
	items := plan.Items(seeds)
	start := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	one := &Matrix{Version: Version, Started: start, WallS: 100, Seeds: plan.Seeds, Jobs: 2 * n}
	for _, c := range plan.Cells {
		one.Cells = append(one.Cells, CellResult{Cell: c, Runs: make([]Run, len(seeds))})
	}
	var dirs []string
	for i := 1; i <= n; i++ {
		p := plan
		p.Shard = Shard{I: i, N: n}
		name := fmt.Sprintf("20261123T13000%d", i)
		shard := &Matrix{Version: Version, Started: start.Add(time.Duration(i) * time.Second), WallS: 100 - float64(i),
			Seeds: plan.Seeds, Jobs: 2, Dir: StoreDir + "/" + name, Plan: &p}
		if n == 1 {
			shard.Plan = nil // a matrix run whole has no plan: merge takes its own cells
		}
		for _, it := range p.Pick(items) {
			r := runs(mergeCells[it.Cell].letters)[it.Run]
			if r.Verdict != Error {
				r.Dir = shard.Dir + "/runs/" + p.RunName(it) + "/t/20261123T130000"
				if err := os.MkdirAll(filepath.Join(store, r.Dir), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if k := len(shard.Cells) - 1; k < 0 || shard.Cells[k].Cell.Key() != plan.Cells[it.Cell].Key() {
				shard.Cells = append(shard.Cells, CellResult{Cell: plan.Cells[it.Cell]})
			}
			shard.Cells[len(shard.Cells)-1].Runs = append(shard.Cells[len(shard.Cells)-1].Runs, r)
			one.Cells[it.Cell].Runs[it.Run] = r
		}
		shard.Judge()
		dir := filepath.Join(store, StoreDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Save(dir, shard); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	one.Judge()
	return store, dirs, one
}

// merge loads and merges dirs into store.
func merge(t *testing.T, store string, dirs ...string) (*Matrix, error) {
	t.Helper()
	var parts []Part
	for _, d := range dirs {
		p, err := LoadPart(d)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	return Merge(parts, store)
}

// writeAll is the matrix as every writer writes it.
func writeAll(t *testing.T, m *Matrix) string {
	t.Helper()
	var b bytes.Buffer
	for _, w := range []func(*bytes.Buffer, *Matrix) error{
		func(b *bytes.Buffer, m *Matrix) error { return WriteTable(b, m) },
		func(b *bytes.Buffer, m *Matrix) error { return WriteJUnit(b, m) },
		func(b *bytes.Buffer, m *Matrix) error { return WriteMarkdown(b, m) },
		func(b *bytes.Buffer, m *Matrix) error { return WriteJSON(b, m) },
	} {
		if err := w(&b, m); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestMergeEqualsOneMatrix: the shards of a matrix, merged, are judged as
// the one matrix holding the same runs: the same cells, runs, tallies and
// statuses, and the same table, JUnit, markdown and JSON.
func TestMergeEqualsOneMatrix(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 24, 30} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			store, dirs, one := shardedStore(t, n)
			// Given in any order.
			dirs[0], dirs[len(dirs)-1] = dirs[len(dirs)-1], dirs[0]
			m, err := merge(t, store, dirs...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Cells, one.Cells) {
				t.Fatalf("merged cells differ from the one matrix's:\n%+v\n%+v", m.Cells, one.Cells)
			}
			if m.ExitCode() != one.ExitCode() || m.ExitCode() != ExitMissed {
				t.Errorf("exit %d, one matrix %d, want %d", m.ExitCode(), one.ExitCode(), ExitMissed)
			}
			if !m.Started.Equal(one.Started.Add(time.Second)) || m.Jobs != one.Jobs || m.Seeds != "1..4" || len(m.Merged) != n {
				t.Errorf("merged header: started %v jobs %d seeds %q merged %v", m.Started, m.Jobs, m.Seeds, m.Merged)
			}
			m.Started, m.WallS, m.Merged = one.Started, one.WallS, nil
			if a, b := writeAll(t, m), writeAll(t, one); a != b {
				t.Errorf("merged reports differ from the one matrix's:\n%s\n---\n%s", a, b)
			}
			if len(m.MissingRuns()) != 0 {
				t.Errorf("missing runs %v", m.MissingRuns())
			}
		})
	}
}

// TestMergeMissing: a run whose directory is gone, and every run of a
// shard not given, is missing; its cell misses, whatever it got before,
// and the JUnit has it as an error.
func TestMergeMissing(t *testing.T) {
	store, dirs, _ := shardedStore(t, 3)
	// The S cell redis-set-px none met with every seed valid; take one of
	// its run directories away.
	shard, err := Load(filepath.Join(dirs[0], "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gone Run
	for _, c := range shard.Cells {
		if c.Name() == "redis-set-px none" {
			gone = c.Runs[0]
		}
	}
	if gone.Dir == "" {
		t.Fatal("shard 1/3 has no run of redis-set-px none")
	}
	if err := os.RemoveAll(filepath.Join(store, filepath.Dir(filepath.Dir(gone.Dir)))); err != nil {
		t.Fatal(err)
	}
	m, err := merge(t, store, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Cells[0]
	if c.Status != Missed || c.Tally.Missing != 1 || !strings.Contains(c.Why, "1 of 4 runs missing") {
		t.Errorf("cell with a gone run: %s %+v %q", c.Status, c.Tally, c.Why)
	}
	if m.ExitCode() != ExitMissed {
		t.Errorf("exit %d, want %d", m.ExitCode(), ExitMissed)
	}
	if got := m.MissingRuns(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("redis-set-px none seed %d: its run directory", gone.Seed)) {
		t.Errorf("missing runs %q", got)
	}
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), `type="missing"`) {
		t.Errorf("JUnit has no missing error:\n%s", junit.String())
	}

	// Shard 2 not given: its runs are missing, every one named.
	m, err = merge(t, store, dirs[0], dirs[2])
	if err != nil {
		t.Fatal(err)
	}
	want := 1 + 8 // the gone directory, and shard 2's 8 runs of 24
	if got := m.MissingRuns(); len(got) != want {
		t.Fatalf("missing %d runs, want %d: %q", len(got), want, got)
	}
	for _, line := range m.MissingRuns() {
		if !strings.Contains(line, "shard 2/3's, which was not merged") && !strings.Contains(line, "is gone") {
			t.Errorf("missing run line %q says neither", line)
		}
	}
	for _, c := range m.Cells {
		if c.Tally.Missing > 0 && c.Status != Missed {
			t.Errorf("cell %s with %d missing runs is %s", c.Name(), c.Tally.Missing, c.Status)
		}
		if c.Tally.Runs != 4 {
			t.Errorf("cell %s has %d runs, want 4", c.Name(), c.Tally.Runs)
		}
	}
}

// TestMergeRefuses: shards of different matrices, one shard twice, and
// shard counts that differ are errors, not verdicts.
func TestMergeRefuses(t *testing.T) {
	store, dirs, _ := shardedStore(t, 3)
	other, odirs, _ := shardedStore(t, 2)
	for _, tt := range []struct {
		name string
		dirs []string
		err  string
	}{
		{"twice", []string{dirs[0], dirs[1], dirs[0]}, "shard 1/3 given twice"},
		{"other count", []string{dirs[0], odirs[1]}, "is of 3 shards"},
		{"none", nil, "nothing to merge"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := merge(t, store, tt.dirs...)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("merge %v: %v, want %q", tt.dirs, err, tt.err)
			}
		})
	}
	// Another plan: the same shard of a matrix with other seeds.
	m, err := Load(filepath.Join(odirs[0], "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.Plan.Seeds, m.Plan.Shard = "1..5", Shard{I: 2, N: 3}
	if err := Save(odirs[0], m); err != nil {
		t.Fatal(err)
	}
	if _, err := merge(t, other, dirs[0], odirs[0]); err == nil || !strings.Contains(err.Error(), "different matrices") {
		t.Errorf("shards of two plans: %v", err)
	}
	if _, err := LoadPart(filepath.Join(store, "nope")); err == nil {
		t.Error("LoadPart of a missing directory: no error")
	}
}
