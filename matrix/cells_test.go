package matrix

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCell(t *testing.T) {
	tests := []struct {
		name, line string
		want       Cell
		ok         bool
		err        string
	}{
		{name: "blank", line: "   "},
		{name: "comment", line: "  # redis-set-px none S --lock x"},
		{name: "plain", line: "redis-set-px none S --lock redis-set-px --nemesis none", ok: true,
			want: Cell{Row: "redis-set-px", Column: "none", Expect: Safe, Args: []string{"--lock", "redis-set-px", "--nemesis", "none"}}},
		{name: "tabs and blanks", line: "\tzk  pause\tU  --lock zk-ephemeral   --nemesis=pause ", ok: true,
			want: Cell{Row: "zk", Column: "pause", Expect: Unsafe, Args: []string{"--lock", "zk-ephemeral", "--nemesis=pause"}}},
		{name: "quotes", line: `w x D --lock redis-set-px --worker-cmd "python3 w.py" --think '1s'`, ok: true,
			want: Cell{Row: "w", Column: "x", Expect: Depends, Args: []string{"--lock", "redis-set-px", "--worker-cmd", "python3 w.py", "--think", "1s"}}},
		{name: "scenario", line: "setnx-expire-crash scenario L --scenario setnx-expire-crash", ok: true,
			want: Cell{Row: "setnx-expire-crash", Column: "scenario", Expect: Stuck, Args: []string{"--scenario", "setnx-expire-crash"}}},
		{name: "catalog", line: "a b ? --lock redis-set-px", ok: true,
			want: Cell{Row: "a", Column: "b", Expect: FromCatalog, Args: []string{"--lock", "redis-set-px"}}},
		{name: "negative value", line: "a b S --lock x --think -1s", ok: true,
			want: Cell{Row: "a", Column: "b", Expect: Safe, Args: []string{"--lock", "x", "--think", "-1s"}}},
		{name: "required conditions", line: "a b S reach=holder-cut-off,release-reply-lost --lock x", ok: true,
			want: Cell{Row: "a", Column: "b", Expect: Safe, Require: []string{"holder-cut-off", "release-reply-lost"}, Args: []string{"--lock", "x"}}},
		{name: "unknown condition", line: "a b S reach=holder-cutoff --lock x", err: `unknown danger condition "holder-cutoff" (did you mean holder-cut-off?)`},
		{name: "condition twice", line: "a b S reach=holder-cut-off,holder-cut-off --lock x", err: `condition "holder-cut-off" twice`},
		{name: "empty condition", line: "a b S reach= --lock x", err: `unknown danger condition ""`},
		{name: "conditions but no flags", line: "a b S reach=holder-cut-off", err: "needs --lock or --scenario"},
		{name: "too few words", line: "a b S", err: "want ROW COLUMN EXPECT FLAGS"},
		{name: "bad expect", line: "a b X --lock x", err: `expectation "X"`},
		{name: "no lock", line: "a b S --nemesis pause", err: "needs --lock or --scenario"},
		{name: "seed", line: "a b S --lock x --seed 3", err: "--seed is set by the matrix"},
		{name: "store", line: "a b S --lock x --store=/tmp", err: "--store is set by the matrix"},
		{name: "not a flag", line: "a b S --lock x y z", err: `"y" is not a flag`},
		{name: "label flag", line: "-a b S --lock x", err: "must not start with -"},
		{name: "label pipe", line: "a|b c S --lock x", err: "no blanks, quotes, |"},
		{name: "open quote", line: `a b S --lock "x`, err: "unterminated"},
		{name: "control", line: "a b S --lock x\x01", err: "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok, err := ParseCell(tt.line)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || ok != tt.ok || !reflect.DeepEqual(c, tt.want) {
				t.Fatalf("got %+v %v %v, want %+v %v", c, ok, err, tt.want, tt.ok)
			}
			if ok {
				// A cell written back as a line reads as the same cell.
				again, _, err := ParseCell(c.String())
				if err != nil || !reflect.DeepEqual(again, c) {
					t.Errorf("round trip of %q: %+v %v", c.String(), again, err)
				}
			}
		})
	}
}

func TestParseCellsFile(t *testing.T) {
	text := "# two cells\n\na none S --lock redis-set-px\na pause U --lock redis-set-px --nemesis pause\n"
	cells, err := ParseCells(strings.NewReader(text), "f.txt")
	if err != nil || len(cells) != 2 || cells[1].Name() != "a pause" {
		t.Fatalf("got %v %v", cells, err)
	}
	for _, tt := range []struct{ text, err string }{
		{"a none S --lock x\na none U --lock y\n", "f.txt:2: cell \"a none\" already on line 1"},
		{"# nothing\n", "f.txt: no cells"},
		{"a none S --lock x\nbad\n", "f.txt:2: want ROW COLUMN"},
	} {
		if _, err := ParseCells(strings.NewReader(tt.text), "f.txt"); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: error %v, want %q", tt.text, err, tt.err)
		}
	}
}

// FuzzParseCell checks that the cells parser never panics, that what it
// accepts is a well-formed cell, and that a cell written back with String
// parses to the same cell.
func FuzzParseCell(f *testing.F) {
	for _, s := range []string{
		"redis-set-px none S --lock redis-set-px --nemesis none",
		`w x D --lock redis-set-px --worker-cmd "python3 w.py" --think '1s'`,
		"a b ? --scenario redis-pause --fencing",
		"# comment", "", "a b S --lock x --think -1s", `a b U --lock "" --x=''`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, ok, err := ParseCell(line)
		if err != nil || !ok {
			return
		}
		if c.Row == "" || c.Column == "" || len(c.Args) == 0 {
			t.Fatalf("accepted an incomplete cell %+v from %q", c, line)
		}
		if _, err := ParseExpect(string(c.Expect)); err != nil {
			t.Fatalf("accepted expectation %q", c.Expect)
		}
		for _, a := range c.Args {
			if strings.Contains(a, "'") && strings.Contains(a, `"`) {
				return // String cannot quote a word holding both quotes
			}
		}
		back, ok, err := ParseCell(c.String())
		if err != nil || !ok || !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip of %q: %q gave %+v %v, want %+v", line, c.String(), back, err, c)
		}
	})
}

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		in   string
		want []uint64
		err  string
	}{
		{"1..3", []uint64{1, 2, 3}, ""},
		{"1,3,5", []uint64{1, 3, 5}, ""},
		{" 1..2 , 7 ", []uint64{1, 2, 7}, ""},
		{"0", []uint64{0}, ""},
		{"", nil, "empty"},
		{"3..1", nil, "goes down"},
		{"1,1", nil, "seed 1 twice"},
		{"1..2,2", nil, "seed 2 twice"},
		{"x", nil, "not a seed"},
		{"-1", nil, "not a seed"},
		{"1..", nil, "not a seed"},
		{"1..100000", nil, "more than 10000"},
		{"1000000000000000000", nil, "not a seed"},
	}
	for _, tt := range tests {
		got, err := ParseSeeds(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %v %v, want %v", tt.in, got, err, tt.want)
		}
	}
	if got := FormatSeeds([]uint64{1, 2, 3, 5, 7, 8}); got != "1..3,5,7,8" {
		t.Errorf("FormatSeeds: %q", got)
	}
}

// FuzzParseSeeds checks that an accepted seed list is bounded, has no
// repeats, and survives FormatSeeds.
func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"1..10", "1,3,5", "1..3,7", "", "9..1", "1,,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seeds, err := ParseSeeds(s)
		if err != nil {
			return
		}
		if len(seeds) == 0 || len(seeds) > MaxSeeds {
			t.Fatalf("%q: %d seeds", s, len(seeds))
		}
		seen := map[uint64]bool{}
		for _, v := range seeds {
			if seen[v] {
				t.Fatalf("%q: seed %d twice", s, v)
			}
			seen[v] = true
		}
		back, err := ParseSeeds(FormatSeeds(seeds))
		if err != nil || !reflect.DeepEqual(back, seeds) {
			t.Fatalf("%q: round trip gave %v %v", s, back, err)
		}
	})
}

func TestReproSeeds(t *testing.T) {
	a, b := ReproSeeds(42, 20), ReproSeeds(42, 20)
	if !reflect.DeepEqual(a, b) || len(a) != 20 {
		t.Fatalf("not repeatable: %v %v", a, b)
	}
	seen := map[uint64]bool{}
	for _, s := range a {
		if seen[s] || s >= 1_000_000 {
			t.Fatalf("seed %d repeated or too big", s)
		}
		seen[s] = true
	}
	if reflect.DeepEqual(a, ReproSeeds(43, 20)) {
		t.Fatal("another base gave the same seeds")
	}
}

func TestCatalog(t *testing.T) {
	cat, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args  []string
		want  Expect
		found bool
	}{
		{[]string{"--lock", "redis-set-px", "--nemesis", "none"}, Safe, true},
		{[]string{"--nemesis", "pause", "--lock", "redis-set-px", "--time", "5s"}, Unsafe, true},
		{[]string{"--lock", "redis-set-px", "--nemesis=pause", "--fencing"}, Safe, true},
		{[]string{"--lock", "redis-set-px", "--nemesis", "pause", "--fencing=false"}, Unsafe, true},
		{[]string{"--lock", "zk-ephemeral", "--nemesis", "pause"}, Unsafe, true},
		{[]string{"--lock", "zk-ephemeral", "--nemesis", "clock"}, Safe, true},
		{[]string{"--lock", "redis-watchdog", "--nemesis", "partition", "--think", "3s"}, Unsafe, true},
		{[]string{"--lock", "redis-set-px", "--nemesis", "pause", "--workers", "3"}, Depends, false},
		{[]string{"--scenario", "setnx-expire-crash"}, Stuck, true},
		{[]string{"--scenario", "redis-pause", "--fencing", "--stop-on-anomaly"}, Safe, true},
		{[]string{"--scenario", "redlock-pause", "--fencing"}, Depends, false},
	}
	for _, tt := range tests {
		got, found := cat.Lookup(tt.args)
		if got != tt.want || found != tt.found {
			t.Errorf("%v: got %s %v, want %s %v", tt.args, got, found, tt.want, tt.found)
		}
	}
	// Every existing design has a line for every main nemesis.
	for _, l := range []string{"redis-setnx-expire", "redis-setnx-getset", "redis-set-px-del", "redis-set-px",
		"redis-watchdog", "redis-reentrant", "redlock", "redis-sentinel", "redis-cluster", "zk-ephemeral", "zk-sequential",
		"redis-watch-inventory"} {
		for _, n := range []string{"none", "pause", "partition", "kill", "failover", "clock", "clock-client"} {
			args := []string{"--lock", l, "--nemesis", n}
			if l == "redis-watch-inventory" {
				args = append(args, "--workload", "inventory")
			}
			if _, ok := cat.Lookup(args); !ok {
				t.Errorf("no catalog cell for %s x %s", l, n)
			}
		}
	}
	grid := cat.Grid([]string{"redis-set-px", "zk-ephemeral"}, []string{"none", "pause"}, []string{"--time", "3s"})
	var got []string
	for _, c := range grid {
		got = append(got, c.Name()+" "+string(c.Expect))
	}
	want := []string{"redis-set-px none S", "redis-set-px pause U", "zk-ephemeral none S", "zk-ephemeral pause U"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("grid %v, want %v", got, want)
	}
}

// TestScriptsCellsFiles: every cells file of scripts/ parses, and each of
// its ? cells resolves to a catalog cell or to D.
func TestScriptsCellsFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "scripts", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cells files in scripts/: %v", err)
	}
	cat, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cells, err := ParseCells(strings.NewReader(string(b)), f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		cat.Resolve(cells)
		for _, c := range cells {
			if c.Expect == FromCatalog {
				t.Errorf("%s: %s not resolved", f, c.Name())
			}
		}
	}
}
