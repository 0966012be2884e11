package matrix

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMatrixRunsScript: scripts/matrix-runs.py (and windows-table.py's
// runs), which keeps a matrix's
// runs as data and tallies several such files into one table (the
// incident matrix measured over many sessions), judges every cell as
// JudgeCell does (a required danger condition no run reached misses the
// cell), prints each cell's coverage as Coverage does, leaves interrupted
// runs out, and lets a later file's run of a cell and seed replace an
// earlier one.
func TestMatrixRunsScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script := func(name string, args ...string) ([]byte, error) {
		return exec.Command(py, append([]string{filepath.Join("..", "scripts", name)}, args...)...).Output()
	}
	cells := []struct {
		expect       Expect
		first, again string // runs of the first file; of the second (seeds after)
		require      []string
		reach        string // per run of first+again: 'r' reached the first required condition, 'o' another one
	}{
		{Safe, "vvvv", "vv", nil, ""},
		{Safe, "vvvv", "vi", nil, ""},
		{Safe, "vvuv", "", nil, ""},
		{Safe, "nnnn", "", nil, ""},
		{Safe, "vvnv", "", nil, ""},
		{Unsafe, "iiiiiiiii", "i", nil, ""},
		{Unsafe, "iiiiiiii", "vv", nil, ""},
		{Unsafe, "iiiiiiiie", "", nil, ""},
		{Stuck, "ssssssssss", "", nil, ""},
		{Stuck, "iiiiiiiiii", "", nil, ""},
		{Depends, "vivi", "e", nil, ""},
		{Depends, "vvvx", "", nil, ""},
		{Safe, "vvv", "v", []string{"holder-cut-off"}, "..r."},
		{Safe, "vvv", "v", []string{"holder-cut-off"}, ".oo."},
		{Unsafe, "iii", "", []string{"holder-cut-off"}, "..."},
		{Safe, "vvi", "", []string{"holder-cut-off"}, "..."},
		{Depends, "vv", "", []string{"holder-cut-off"}, ".."},
		{Depends, "vv", "", []string{"holder-cut-off", "late-renewal"}, "r."},
		{Safe, "ee", "", []string{"holder-cut-off"}, ".."},
		{Safe, "nn", "", []string{"holder-cut-off"}, "r."},
	}
	dir := t.TempDir()
	var first, again, whole Matrix
	for i, c := range cells {
		cell := Cell{Row: "lock" + string(rune('a'+i)), Column: "pause", Expect: c.expect, Require: c.require, Args: []string{"--lock", "x", "--nemesis", "pause"}}
		a, b := runs(c.first), runs(c.again)
		for k := range b {
			b[k].Seed += uint64(len(a))
		}
		for k, l := range c.reach {
			r := &a[min(k, len(a)-1)]
			if k >= len(a) {
				r = &b[k-len(a)]
			}
			switch l {
			case 'r':
				r.Reached = map[string]int{c.require[0]: 2, "release-reply-lost": 1}
			case 'o':
				r.Reached = map[string]int{"release-reply-lost": 1}
			}
		}
		first.Cells = append(first.Cells, CellResult{Cell: cell, Runs: a})
		again.Cells = append(again.Cells, CellResult{Cell: cell, Runs: b})
		var kept []Run
		for _, r := range append(append([]Run(nil), a...), b...) {
			if r.Verdict != Interrupted {
				kept = append(kept, r)
			}
		}
		whole.Cells = append(whole.Cells, CellResult{Cell: cell, Runs: kept})
	}
	// A third file runs the first cell's seed 1 again, invalid: it
	// replaces the valid run, and the cell misses.
	redo := Matrix{Cells: []CellResult{{Cell: first.Cells[0].Cell, Runs: runs("i")}}}
	whole.Cells[0].Runs[0] = redo.Cells[0].Runs[0]
	whole.Judge()
	var files []string
	for i, m := range []Matrix{first, again, redo} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		mj := filepath.Join(dir, "m"+string(rune('0'+i))+".json")
		if err := os.WriteFile(mj, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := script("matrix-runs.py", "runs", mj)
		if err != nil {
			t.Fatalf("runs %s: %v", mj, err)
		}
		jl := filepath.Join(dir, "r"+string(rune('0'+i))+".jsonl")
		if err := os.WriteFile(jl, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, jl)
	}
	statuses := func(args ...string) (map[string]string, map[string]string, string) {
		out, err := script("matrix-runs.py", append(append([]string{"table"}, args...), files...)...)
		if err != nil {
			t.Fatalf("table %v: %v", args, err)
		}
		rows, reached := map[string]string{}, map[string]string{}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Split(line, " | ")
			if len(f) == 8 && strings.HasPrefix(f[0], "| `") {
				row := strings.Trim(f[0], "| `")
				rows[row] = strings.TrimSuffix(f[7], " |")
				reached[row] = f[6]
			}
		}
		return rows, reached, string(out)
	}
	rows, reached, out := statuses()
	for _, c := range whole.Cells {
		want := string(c.Status)
		if c.Why != "" {
			want += ": " + c.Why
		}
		if got := rows[c.Row]; got != want {
			t.Errorf("%s (%s, runs %d): the script says %q, JudgeCell %q\n%s", c.Row, c.Expect, len(c.Runs), got, want, out)
		}
		if got := reached[c.Row]; got != c.Coverage() {
			t.Errorf("%s: the script's coverage %q, Coverage %q\n%s", c.Row, got, c.Coverage(), out)
		}
	}
	if !strings.Contains(out, "required danger conditions: 8 cells require one, 2 reached every one, 6 left one unreached") {
		t.Errorf("the script does not count the cells that never reached a required condition:\n%s", out)
	}
	// The coverage by fault: the eight cells requiring holder-cut-off (22
	// runs, 3 reaching it: one each of m, r and t; n, o, p, q and s never
	// did) and lockr's late-renewal, never reached.
	cov, err := script("matrix-runs.py", append([]string{"coverage"}, files...)...)
	if err != nil {
		t.Fatalf("coverage: %v", err)
	}
	for _, want := range []string{
		"| pause | holder-cut-off | 8 | 22 | 3 | 5 |",
		"| pause | late-renewal | 1 | 2 | 0 | 1 |",
		"| all | | 9 | 24 | 3 | 6 |",
		"never reached: `lockn` pause (holder-cut-off, 4 runs), `locko` pause (holder-cut-off, 3 runs), `lockp` pause (holder-cut-off, 3 runs), " +
			"`lockq` pause (holder-cut-off, 2 runs), `lockr` pause (late-renewal, 2 runs), `locks` pause (holder-cut-off, 2 runs)",
	} {
		if !strings.Contains(string(cov), want) {
			t.Errorf("coverage lacks %q:\n%s", want, cov)
		}
	}
	// A revised expectation judges the runs recorded under the old one:
	// lockf's ten invalid runs miss S, lockg's "?" keeps what it recorded.
	revised := filepath.Join(dir, "revised.txt")
	if err := os.WriteFile(revised, []byte("# revised\nlockf pause S --lock x\nlockg pause ? --lock x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, _, out = statuses("--expect", revised)
	for _, c := range whole.Cells {
		want := string(c.Status)
		if c.Row == "lockf" {
			want = string(Missed)
		}
		if got, _, _ := strings.Cut(rows[c.Row], ":"); got != want {
			t.Errorf("with --expect: %s says %q, want %q\n%s", c.Row, got, want, out)
		}
	}
	// scripts/windows-table.py keeps the same runs: none interrupted.
	kept := 0
	for _, c := range first.Cells {
		for _, r := range c.Runs {
			if r.Verdict != Interrupted {
				kept++
			}
		}
	}
	wout, err := script("windows-table.py", "runs", filepath.Join(dir, "m0.json"))
	if n := strings.Count(string(wout), "\n"); err != nil || n != kept || strings.Contains(string(wout), `"interrupted"`) {
		t.Errorf("windows-table.py runs: %d lines (%v), want the %d runs that ended", n, err, kept)
	}
	// A run's reached conditions come from its results.json as it is now
	// (check analyze --in-place with a newer checker rewrites it), not
	// from the matrix's copy of them; a run whose results.json lists none
	// reached none, and one without a list keeps the matrix's copy.
	store := filepath.Join(dir, "store")
	mdir := filepath.Join(store, "matrix", "T")
	stale := Matrix{Cells: []CellResult{{Cell: first.Cells[0].Cell, Runs: runs("vvv")}}}
	for k, res := range []string{
		`{"reached":[{"name":"node-struck-while-held","count":1},{"name":"gone","count":0}]}`,
		`{"reached":[]}`,
		`{"verdict":"valid"}`,
	} {
		stale.Cells[0].Runs[k].Dir = filepath.Join("runs", string(rune('a'+k)))
		stale.Cells[0].Runs[k].Reached = map[string]int{"acquire-reply-lost": 1}
		rd := filepath.Join(store, stale.Cells[0].Runs[k].Dir)
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rd, "results.json"), []byte(res), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(stale)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "matrix.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sout, err := script("matrix-runs.py", "runs", filepath.Join(mdir, "matrix.json"))
	if err != nil {
		t.Fatalf("runs of a stored matrix: %v", err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(sout)), "\n") {
		var r struct {
			Reached map[string]int `json:"reached"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("runs line %q: %v", line, err)
		}
		got = append(got, fmt.Sprint(r.Reached))
	}
	if want := []string{"map[node-struck-while-held:1]", "map[]", "map[acquire-reply-lost:1]"}; !slices.Equal(got, want) {
		t.Errorf("reached of the stored runs: %q, want %q", got, want)
	}
	// What is left to run: locka has seeds 1..6, lockc 1..4.
	cellsFile := filepath.Join(dir, "cells.txt")
	if err := os.WriteFile(cellsFile, []byte("# a comment\nlocka pause S --lock x\n\nlockc pause S --lock x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for seeds, want := range map[string]string{"1..4": "", "1..6": "lockc pause S --lock x\n", "2,7": "locka pause S --lock x\nlockc pause S --lock x\n"} {
		out, err := script("matrix-runs.py", append([]string{"left", cellsFile, seeds}, files...)...)
		if err != nil || string(out) != want {
			t.Errorf("left at seeds %s: %q (%v), want %q", seeds, out, err, want)
		}
	}
}
