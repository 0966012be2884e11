package matrix

import (
	"fmt"
	"strings"
	"testing"
)

// planCells are cells for plan tests: n cells named r<i> c<i%3>.
func planCells(n int) []Cell {
	cells := make([]Cell, n)
	for i := range cells {
		row := fmt.Sprintf("r%d", i)
		cells[i] = Cell{Row: row, Column: fmt.Sprintf("c%d", i%3), Expect: Safe, Args: []string{"--lock", row}}
	}
	return cells
}

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		err  string
	}{
		{in: "1/1", want: Shard{1, 1}},
		{in: "2/3", want: Shard{2, 3}},
		{in: " 3/3 ", want: Shard{3, 3}},
		{in: "10000/10000", want: Shard{10000, 10000}},
		{in: "0/3", err: "want 1 <= I <= N"},
		{in: "4/3", err: "want 1 <= I <= N"},
		{in: "1/0", err: "want 1 <= I <= N"},
		{in: "1/10001", err: "want 1 <= I <= N"},
		{in: "-1/3", err: "want 1 <= I <= N"},
		{in: "3", err: "want I/N"},
		{in: "a/3", err: "want I/N"},
		{in: "1/3/4", err: "want I/N"},
		{in: "", err: "want I/N"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseShard(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != strings.TrimSpace(tt.in) && !got.All() {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"1/3", "3/3", "0/1", "x", "1/", "/2", "99999999999999999999/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.I < 1 || sh.I > sh.N || sh.N > MaxShards {
			t.Fatalf("ParseShard(%q) = %+v: out of range", s, sh)
		}
		if back, err := ParseShard(sh.String()); sh.N > 1 && (err != nil || back != sh) {
			t.Fatalf("round trip of %q: %+v, %v", s, back, err)
		}
	})
}

// TestShardsCoverOnce: for every N, the N shards of a plan hold every
// item exactly once, and their sizes differ by at most one.
func TestShardsCoverOnce(t *testing.T) {
	for _, nc := range []int{1, 2, 9} {
		for _, seeds := range [][]uint64{{1}, {1, 2, 3, 4}, {7, 3, 10}} {
			for n := 1; n <= 7; n++ {
				p := Plan{Cells: planCells(nc)}
				items := p.Items(seeds)
				seen := make(map[int]int)
				lo, hi := len(items), 0
				for i := 1; i <= n; i++ {
					p.Shard = Shard{I: i, N: n}
					part := p.Pick(items)
					lo, hi = min(lo, len(part)), max(hi, len(part))
					for k, it := range part {
						seen[it.N]++
						if k > 0 && part[k-1].N >= it.N {
							t.Errorf("cells %d seeds %v shard %d/%d: not in plan order", nc, seeds, i, n)
						}
					}
				}
				if len(seen) != len(items) {
					t.Errorf("cells %d seeds %v N %d: %d of %d items dealt", nc, seeds, n, len(seen), len(items))
				}
				for k, c := range seen {
					if c != 1 {
						t.Errorf("cells %d seeds %v N %d: item %d in %d shards", nc, seeds, n, k, c)
					}
				}
				if hi-lo > 1 {
					t.Errorf("cells %d seeds %v N %d: shard sizes %d to %d", nc, seeds, n, lo, hi)
				}
			}
		}
	}
}

// TestShardsStable: a shard holds the same cells and seeds whatever order
// the cells file lists the cells in, and it is dealt round-robin from the
// items sorted by cell name and seed.
func TestShardsStable(t *testing.T) {
	cells := planCells(5)
	rev := make([]Cell, len(cells))
	for i, c := range cells {
		rev[len(cells)-1-i] = c
	}
	seeds := []uint64{2, 1, 3}
	names := func(cells []Cell, sh Shard) map[string]bool {
		p := Plan{Cells: cells, Shard: sh}
		out := make(map[string]bool)
		for _, it := range p.Pick(p.Items(seeds)) {
			out[fmt.Sprintf("%s seed %d", p.Cells[it.Cell].Name(), it.Seed)] = true
		}
		return out
	}
	for i := 1; i <= 4; i++ {
		a, b := names(cells, Shard{i, 4}), names(rev, Shard{i, 4})
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("shard %d/4 depends on the cells' order: %v vs %v", i, a, b)
		}
	}
	// Sorted: r0 c0 seeds 1,2,3, r1 c1 seeds 1,2,3, ...; shard 1/4 takes
	// the 0th, 4th, 8th, 12th.
	want := map[string]bool{"r0 c0 seed 1": true, "r1 c1 seed 2": true, "r2 c2 seed 3": true, "r4 c1 seed 1": true}
	if got := names(cells, Shard{1, 4}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shard 1/4 = %v, want %v", got, want)
	}
}

// TestRunName: run directories are named by the item's number in the
// whole plan, the same in a shard as in the whole matrix.
func TestRunName(t *testing.T) {
	p := Plan{Cells: []Cell{{Row: "a", Column: "x"}, {Row: "b b", Column: "y/z"}}}
	items := p.Items([]uint64{5, 6})
	var got []string
	for _, it := range items {
		got = append(got, p.RunName(it))
	}
	want := "001-a-x-s5 002-a-x-s6 003-b_b-y_z-s5 004-b_b-y_z-s6"
	if strings.Join(got, " ") != want {
		t.Errorf("run names %v, want %s", got, want)
	}
	p.Shard = Shard{2, 2}
	for _, it := range p.Pick(items) {
		if p.RunName(it) != got[it.N] {
			t.Errorf("shard names item %d %s, whole matrix %s", it.N, p.RunName(it), got[it.N])
		}
	}
}
