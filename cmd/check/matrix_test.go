package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/matrix"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/scenarios"
)

// TestCellsFiles checks every cells file in scripts/: it parses, names
// known locks, nemeses and scenarios, and scenarios.txt holds every named
// scenario with the expectation the scenario declares.
func TestCellsFiles(t *testing.T) {
	files, err := filepath.Glob("../../scripts/*.txt")
	if err != nil || len(files) < 5 {
		t.Fatalf("cells files: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cells, err := matrix.ParseCells(bytes.NewReader(b), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			if err := checkCell(c); err != nil {
				t.Errorf("%s: %s: %v", f, c.Name(), err)
			}
		}
		if filepath.Base(f) != "scenarios.txt" {
			continue
		}
		got := map[string]string{}
		for _, c := range cells {
			got[c.Scenario()] = string(c.Expect)
		}
		want := map[string]string{}
		for _, s := range scenarios.All() {
			want[s.Name] = s.Want
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("scenarios.txt has %v, the scenarios want %v", got, want)
		}
	}
	cat, err := matrix.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cat.Cells() {
		if err := checkCell(c); err != nil {
			t.Errorf("catalog: %s: %v", c.Name(), err)
		}
	}
	for _, s := range scenarios.All() {
		for _, w := range []string{s.Want, s.WantFenced} {
			if w != "" && w != "S" && w != "U" && w != "L" {
				t.Errorf("%s: expectation %q, want S, U or L", s.Name, w)
			}
		}
		if s.Want == "" {
			t.Errorf("%s: no expected verdict", s.Name)
		}
	}
}

func TestMatrixAndReproBadInput(t *testing.T) {
	dir := t.TempDir()
	cells := filepath.Join(dir, "cells.txt")
	if err := os.WriteFile(cells, []byte("a none S --lock nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no cells", []string{"matrix"}, "no cells"},
		{"unknown lock", []string{"matrix", "--lock", "nope"}, `unknown lock "nope"`},
		{"unknown nemesis", []string{"matrix", "--lock", "redis-set-px", "--nemesis", "none,meteor"}, `unknown nemesis "meteor"`},
		{"bad seeds", []string{"matrix", "--lock", "redis-set-px", "--seeds", "5..1"}, "goes down"},
		{"jobs", []string{"matrix", "--lock", "redis-set-px", "--jobs", "0"}, "--jobs 0: want 1 to 64"},
		{"seed is the matrix's", []string{"matrix", "--lock", "redis-set-px", "--seed", "3"}, "--seed is set by the matrix"},
		{"both", []string{"matrix", "--cells", cells, "--lock", "redis-set-px"}, "not both"},
		{"missing cells file", []string{"matrix", "--cells", filepath.Join(dir, "nope.txt")}, "no such file"},
		{"bad cell", []string{"matrix", "--cells", cells}, `cell a none: unknown lock "nope"`},
		{"junit dir is a file", []string{"matrix", "--lock", "redis-set-px", "--junit", filepath.Join(cells, "j.xml")}, "--junit: mkdir"},
		{"unknown scenario", []string{"repro", "--scenario", "nope"}, `unknown scenario "nope"`},
		{"neither", []string{"repro"}, "usage: check repro"},
		{"not a run dir", []string{"repro", dir}, "not a run directory"},
		{"count", []string{"repro", "--scenario", "redis-pause", "--count", "0"}, "--count 0: want 1 to 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(tt.args...)
			if code != exitError || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 3 and %q", code, stderr, tt.want)
			}
		})
	}
}

func TestTestArgs(t *testing.T) {
	tt := runner.Test{Lock: "redis-sentinel", Nemesis: "failover", Fencing: true, Workers: 10, Keys: 1, Nodes: 3,
		Workload: "register", Time: 15 * time.Second, Lease: time.Second, OpTimeout: 2 * time.Second,
		AcquireTimeout: 2 * time.Second, NemesisInterval: 3 * time.Second, NemesisDuration: 3 * time.Second,
		WorkerCmd: []string{"python3", "w.py"}}
	got := strings.Join(testArgs(tt), " ")
	want := "--lock redis-sentinel --nemesis failover --fencing --workers 10 --keys 1 --nodes 3 --workload register " +
		"--time 15s --lease 1s --think 0s --acquire-timeout 2s --op-timeout 2s --nemesis-interval 3s --nemesis-duration 3s " +
		"--worker-cmd python3 w.py"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestMatrixRunsTinyMatrix runs a real tiny matrix through the binary
// (redis-set-px x none, seeds 1..2, 3 s each), checks its JUnit (with
// encoding/xml, and xmllint when installed), its stored matrix.json and the
// run directories, then repros one of its runs from the run directory.
func TestMatrixRunsTinyMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers")
	}
	tmp := t.TempDir()
	bin := buildCheck(t, tmp)
	store, junit, js := filepath.Join(tmp, "store"), filepath.Join(tmp, "j.xml"), filepath.Join(tmp, "m.json")
	cmd := exec.Command(bin, "matrix", "--lock", "redis-set-px", "--nemesis", "none", "--seeds", "1..2", "--jobs", "2",
		"--time", "3s", "--workers", "3", "--store", store, "--junit", junit, "--json", js)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("check matrix: exit %d (%v)\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "every cell met its expectation") {
		t.Errorf("output:\n%s", out)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Classname string    `xml:"classname,attr"`
				Name      string    `xml:"name,attr"`
				Failure   *struct{} `xml:"failure"`
				Out       string    `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, b)
	}
	if j.Tests != 2 || j.Failures != 0 || j.Errors != 0 || len(j.Suites) != 1 || len(j.Suites[0].Cases) != 2 {
		t.Fatalf("JUnit: %+v\n%s", j, b)
	}
	if c := j.Suites[0].Cases[1]; c.Classname != "redis-set-px" || c.Name != "none seed 2" || !strings.HasPrefix(c.Out, "valid") {
		t.Errorf("testcase %+v", c)
	}
	if lint, err := exec.LookPath("xmllint"); err == nil {
		if out, err := exec.Command(lint, "--noout", junit).CombinedOutput(); err != nil {
			t.Errorf("xmllint: %v\n%s", err, out)
		}
	} else {
		t.Log("xmllint not installed: JUnit checked with encoding/xml only")
	}
	m, err := matrix.Load(js)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := matrix.List(store)
	if err != nil || len(stored) != 1 || stored[0].CellsKey() != m.CellsKey() {
		t.Fatalf("stored matrices: %d %v", len(stored), err)
	}
	var runDir string
	for _, r := range m.Cells[0].Runs {
		runDir = filepath.Join(store, filepath.FromSlash(r.Dir))
		if r.Verdict != matrix.Valid || r.Dir == "" {
			t.Fatalf("run %+v", r)
		}
		if _, err := os.Stat(filepath.Join(runDir, "results.json")); err != nil {
			t.Fatal(err)
		}
	}
	// Repro the last run from its directory, with its own seed: valid twice.
	cmd = exec.Command(bin, "repro", runDir, "--count", "2", "--same-seed", "--store", store)
	out, err = cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(string(out), "repro: 0/2 runs invalid (2 valid)") {
		t.Fatalf("check repro: exit %d (%v)\n%s", code, err, out)
	}
}

// TestCheckOutputPathMakesFolder: a report under a folder that does not
// exist yet (store/ on a fresh clone) gets its folder made.
func TestCheckOutputPathMakesFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store", "sub", "j.xml")
	if err := checkOutputPath(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		t.Fatalf("folder of %s not made: %v", path, err)
	}
}

// TestSplitOwnFlags: a command's own flags keep their values, a boolean
// of its own takes none (the flag after it is the next flag), and every
// other word goes to the runs in order.
func TestSplitOwnFlags(t *testing.T) {
	cases := []struct {
		args       []string
		mine, rest string
	}{
		{[]string{"--until-covered", "--max-seeds", "15", "--cells", "f"}, "--until-covered --max-seeds 15 --cells f", ""},
		{[]string{"--until-covered", "--fencing", "--seeds=1..3", "--think", "1s"}, "--until-covered --seeds=1..3", "--fencing --think 1s"},
		{[]string{"-h", "--lock", "redis-set-px"}, "-h --lock redis-set-px", ""},
		{[]string{"--time", "5s", "--jobs", "1", "--until-covered"}, "--jobs 1 --until-covered", "--time 5s"},
	}
	for _, c := range cases {
		mine, rest := splitOwnFlags(c.args, matrixFlags)
		if strings.Join(mine, " ") != c.mine || strings.Join(rest, " ") != c.rest {
			t.Errorf("%q: mine %q rest %q, want %q and %q", c.args, mine, rest, c.mine, c.rest)
		}
	}
}
