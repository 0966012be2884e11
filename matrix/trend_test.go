package matrix

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// nightsStore is a store of stored matrices, the fixtures of the diff and
// trend tests: three nights of the same cells at seeds 1..4, and a shard.
const nightsStore = "testdata/nights"

// nightCells are the nights' cells: name, expectation and each night's
// verdicts at seeds 1..4 (letters as in runs; "" for a night without the
// cell).
var nightCells = []struct {
	row, col string
	expect   Expect
	nights   [3]string
}{
	{"redis-set-px", "none", Safe, [3]string{"vvvv", "vvvv", "vvvv"}},          // steady
	{"redis-set-px", "pause", Unsafe, [3]string{"iiii", "iiii", "iivi"}},       // new miss
	{"zk-ephemeral", "pause", Unsafe, [3]string{"iivi", "iivi", "iiii"}},       // fixed
	{"redis-watchdog", "failover", Depends, [3]string{"iviu", "viiu", "iviu"}}, // flaky, no status
	{"zk-sequential", "none", Safe, [3]string{"vvvv", "vivv", "vvvv"}},         // fixed and flaky
	{"redis-set-px", "kill", Unsafe, [3]string{"", "", "iiii"}},                // new
}

// nightMatrices builds the fixtures: the three nights and a shard of a
// fourth, which the trend leaves out.
func nightMatrices() []*Matrix {
	var out []*Matrix
	for n := 0; n < 3; n++ {
		m := &Matrix{Version: Version, Started: time.Date(2026, 11, 21+n, 2, 0, 0, 0, time.UTC), WallS: 600,
			Command: []string{"check", "matrix", "--cells", "nightly.txt", "--seeds", "1..4"}, Seeds: "1..4", Jobs: 2}
		m.Dir = StoreDir + "/" + m.Started.Format("20060102T150405")
		for _, nc := range nightCells {
			if nc.nights[n] == "" {
				continue
			}
			c := CellResult{Cell: Cell{Row: nc.row, Column: nc.col, Expect: nc.expect, Args: []string{"--lock", nc.row, "--nemesis", nc.col}},
				Runs: runs(nc.nights[n])}
			for i := range c.Runs {
				c.Runs[i].Dir = fmt.Sprintf("%s/runs/%03d-%s-%s-s%d/t/r", m.Dir, i+1, nc.row, nc.col, c.Runs[i].Seed)
			}
			m.Cells = append(m.Cells, c)
		}
		m.Judge()
		out = append(out, m)
	}
	shard := *out[2]
	shard.Started = shard.Started.Add(24 * time.Hour)
	shard.Dir = StoreDir + "/" + shard.Started.Format("20060102T150405")
	shard.Cells = []CellResult{{Cell: out[2].Cells[0].Cell, Runs: runs("iiii")}}
	shard.Plan = &Plan{Seeds: "1..4", Shard: Shard{I: 1, N: 2}}
	for _, c := range out[2].Cells {
		shard.Plan.Cells = append(shard.Plan.Cells, c.Cell)
	}
	shard.Judge()
	return append(out, &shard)
}

// TestNightsFixtures keeps testdata/nights as nightMatrices builds it
// (-update rewrites it).
func TestNightsFixtures(t *testing.T) {
	for _, m := range nightMatrices() {
		dir := filepath.Join(nightsStore, filepath.FromSlash(m.Dir))
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := Save(dir, m); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Load(filepath.Join(dir, "matrix.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s differs from nightMatrices (go test ./matrix -run Nights -update)", dir)
		}
	}
}

// loadNights reads the fixtures as `check serve` does.
func loadNights(t *testing.T) []*Matrix {
	t.Helper()
	ms, err := List(nightsStore)
	if err != nil || len(ms) != 4 {
		t.Fatalf("List(%s) = %d matrices, %v", nightsStore, len(ms), err)
	}
	return ms // newest first
}

func TestDiff(t *testing.T) {
	ms := loadNights(t)
	n1, n2, n3 := ms[3], ms[2], ms[1]
	for _, tt := range []struct {
		name   string
		a, b   *Matrix
		want   []string // Kind: cell
		misses []string
	}{
		{"night 2 to 3", n2, n3,
			[]string{"new miss: redis-set-px pause", "fixed: zk-ephemeral pause", "changed: redis-watchdog failover",
				"fixed: zk-sequential none", "only in the second: redis-set-px kill"},
			[]string{"redis-set-px pause"}},
		{"night 1 to 2", n1, n2,
			[]string{"changed: redis-watchdog failover", "new miss: zk-sequential none"},
			[]string{"zk-sequential none"}},
		{"night 3 to 2", n3, n2,
			[]string{"fixed: redis-set-px pause", "new miss: zk-ephemeral pause", "changed: redis-watchdog failover",
				"new miss: zk-sequential none", "only in the first: redis-set-px kill"},
			[]string{"zk-ephemeral pause", "zk-sequential none"}},
		{"same", n3, n3, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changes := Diff(tt.a, tt.b)
			var got []string
			for _, c := range changes {
				got = append(got, c.Kind+": "+c.Cell)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
			var misses []string
			for _, c := range NewMisses(changes) {
				misses = append(misses, c.Cell)
			}
			if !reflect.DeepEqual(misses, tt.misses) {
				t.Errorf("NewMisses = %q, want %q", misses, tt.misses)
			}
		})
	}
	// A cell whose flags changed is the same cell, and says so.
	b := *n3
	b.Cells = append([]CellResult(nil), n3.Cells...)
	b.Cells[0].Args = append([]string{"--time", "20s"}, b.Cells[0].Args...)
	changes := Diff(n3, &b)
	if len(changes) != 1 || changes[0].Kind != Changed || !strings.Contains(changes[0].String(), "its flags changed") {
		t.Errorf("flags change: %v", changes)
	}
	for i, want := range map[int]string{
		0: "new miss: redis-set-px pause (was U 4/4 met, now U? 3/4 missed); verdict changed at seed 3",
		2: "changed: redis-watchdog failover (was D 2/4 invalid, 1 unknown none, now D 2/4 invalid, 1 unknown none); verdict changed at seeds 1,2",
	} {
		if s := Diff(n2, n3)[i].String(); s != want {
			t.Errorf("change line %q, want %q", s, want)
		}
	}
	// Other seeds: no seed is compared, and the D cell, whose counts are
	// the same, has not changed.
	other := *n3
	other.Seeds = "5..8"
	for _, c := range Diff(n2, &other) {
		if len(c.Seeds) != 0 || c.Cell == "redis-watchdog failover" {
			t.Errorf("at other seeds: %v", c)
		}
	}
}

func TestTrend(t *testing.T) {
	tr := NewTrend(loadNights(t))
	if len(tr.Nights) != 3 {
		t.Fatalf("%d nights, want 3 (the shard left out)", len(tr.Nights))
	}
	for i := 1; i < len(tr.Nights); i++ {
		if !tr.Nights[i-1].Started.Before(tr.Nights[i].Started) {
			t.Errorf("nights not oldest first")
		}
	}
	want := map[string][]string{
		"redis-set-px none":       nil,
		"redis-set-px pause":      {NewMiss},
		"zk-ephemeral pause":      {Fixed},
		"redis-watchdog failover": {Flaky},
		"zk-sequential none":      {Fixed, Flaky},
		"redis-set-px kill":       nil,
	}
	if len(tr.Cells) != len(want) {
		t.Errorf("%d cells, want %d", len(tr.Cells), len(want))
	}
	for _, c := range tr.Cells {
		if !reflect.DeepEqual(c.Labels, want[c.Name]) {
			t.Errorf("%s: labels %q, want %q", c.Name, c.Labels, want[c.Name])
		}
		if len(c.At) != 3 {
			t.Errorf("%s: %d nights", c.Name, len(c.At))
		}
	}
	var order []string
	for _, c := range tr.Cells {
		order = append(order, c.Name)
	}
	wantOrder := []string{"redis-set-px none", "redis-set-px pause", "zk-ephemeral pause", "redis-watchdog failover", "zk-sequential none", "redis-set-px kill"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("cells in order %q, want the newest night's %q", order, wantOrder)
	}
	kill := tr.Cells[len(tr.Cells)-1]
	for _, c := range tr.Cells {
		if c.Name == "redis-set-px kill" {
			kill = c
		}
	}
	if kill.At[0] != nil || kill.At[1] != nil || kill.At[2] == nil {
		t.Errorf("redis-set-px kill only in the last night: %v", kill.At)
	}
}

// TestTrendNotComparable: verdicts that changed with the seeds or the
// flags are not flaky, and runs that did not end are not compared.
func TestTrendNotComparable(t *testing.T) {
	night := func(day int, seeds, letters string, args ...string) *Matrix {
		m := &Matrix{Started: time.Date(2026, 11, day, 2, 0, 0, 0, time.UTC), Seeds: seeds,
			Cells: []CellResult{{Cell: Cell{Row: "r", Column: "c", Expect: Depends, Args: args}, Runs: runs(letters)}}}
		m.Judge()
		return m
	}
	for _, tt := range []struct {
		name   string
		nights []*Matrix
		flaky  bool
	}{
		{"other seeds", []*Matrix{night(1, "1..4", "vvvv"), night(2, "5..8", "iiii")}, false},
		{"other flags", []*Matrix{night(1, "1..4", "vvvv"), night(2, "1..4", "iiii", "--time", "9s")}, false},
		{"interrupted", []*Matrix{night(1, "1..4", "vvvv"), night(2, "1..4", "vvvx")}, false},
		{"same", []*Matrix{night(1, "1..4", "vvvv"), night(2, "1..4", "vvvi")}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTrend(tt.nights)
			got := strings.Contains(fmt.Sprint(tr.Cells[0].Labels), Flaky)
			if got != tt.flaky {
				t.Errorf("labels %v, flaky want %v", tr.Cells[0].Labels, tt.flaky)
			}
		})
	}
}
