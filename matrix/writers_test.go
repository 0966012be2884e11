package matrix

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fakeMatrix is a judged matrix of fake runs covering every verdict.
func fakeMatrix() *Matrix {
	m := &Matrix{Version: Version, Started: time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC), WallS: 123.4,
		Command: []string{"check", "matrix", "--cells", "scripts/example.txt", "--seeds", "1..4"},
		Seeds:   "1..4", Jobs: 2, Dir: "matrix/20261123T130000"}
	add := func(row, col string, e Expect, letters string, args ...string) {
		rs := runs(letters)
		for i := range rs {
			if rs[i].Verdict != Error {
				rs[i].Dir = "matrix/20261123T130000/runs/" + row + "-" + col + "-s" + string(rune('0'+rs[i].Seed)) + "/t/r"
			}
		}
		m.Cells = append(m.Cells, CellResult{Cell: Cell{Row: row, Column: col, Expect: e, Args: args}, Runs: rs})
	}
	add("redis-set-px", "none", Safe, "vvvv", "--lock", "redis-set-px", "--nemesis", "none")
	add("redis-set-px", "pause", Unsafe, "iiin", "--lock", "redis-set-px", "--nemesis", "pause")
	// Its runs had lost-lock windows (an observer's): the cell shows their p99.
	pause := m.Cells[len(m.Cells)-1].Runs
	pause[0].WindowsS, pause[1].WindowsS = []float64{2.01, 2.21}, []float64{1.5}
	add("zk-ephemeral", "none", Safe, "vive", "--lock", "zk-ephemeral", "--nemesis", "none")
	add("zk-ephemeral", "pause", Unsafe, "ivii", "--lock", "zk-ephemeral", "--nemesis", "pause")
	add("setnx-expire-crash", "scenario", Stuck, "ssss", "--scenario", "setnx-expire-crash")
	add("redis-watchdog", "failover", Depends, "iviu", "--lock", "redis-watchdog", "--nemesis", "failover")
	m.Judge()
	return m
}

func TestWriters(t *testing.T) {
	m := fakeMatrix()
	for _, tt := range []struct {
		file  string
		write func(*bytes.Buffer, *Matrix) error
	}{
		{"matrix.junit.xml", func(b *bytes.Buffer, m *Matrix) error { return WriteJUnit(b, m) }},
		{"matrix.md", func(b *bytes.Buffer, m *Matrix) error { return WriteMarkdown(b, m) }},
		{"matrix.json", func(b *bytes.Buffer, m *Matrix) error { return WriteJSON(b, m) }},
		{"matrix.txt", func(b *bytes.Buffer, m *Matrix) error { return WriteTable(b, m) }},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b, m); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", tt.file, b.String())
			}
		})
	}
}

// JUnit is the JUnit schema as a CI reader sees it, for tests.
type JUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// junitOf writes m as JUnit and reads it back as a CI reader would; it
// returns the XML text too, for messages.
func junitOf(t *testing.T, m *Matrix) (JUnit, string) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJUnit(&b, m); err != nil {
		t.Fatal(err)
	}
	var j JUnit
	if err := xml.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	return j, b.String()
}

func TestJUnitParses(t *testing.T) {
	j, _ := junitOf(t, fakeMatrix())
	// 6 cells x 4 seeds. Failures: zk-ephemeral none's invalid run (its
	// error run is an <error>), and zk-ephemeral pause's valid run, since
	// 3 of 4 misses 90 % (a cell that met U would tolerate it). The
	// not-exercised run of redis-set-px pause is skipped.
	if j.Tests != 24 || j.Errors != 1 || j.Skipped != 1 || j.Failures != 2 {
		t.Fatalf("tests %d failures %d errors %d skipped %d", j.Tests, j.Failures, j.Errors, j.Skipped)
	}
	got := map[string]string{}
	for _, s := range j.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				got[c.Classname+" "+c.Name] = "failure: " + c.Failure.Text
			case c.Error != nil:
				got[c.Classname+" "+c.Name] = "error: " + c.Error.Message
			case c.Skipped != nil:
				got[c.Classname+" "+c.Name] = "skipped: " + c.Skipped.Message
			}
		}
	}
	want := map[string]string{
		"zk-ephemeral none seed 2":  "failure: processes 3 and 4 both held k0\nrun dir matrix/20261123T130000/runs/zk-ephemeral-none-s2/t/r",
		"zk-ephemeral none seed 4":  "error: exit 3: check: set up cluster: redis-server not found",
		"zk-ephemeral pause seed 2": "failure: run dir matrix/20261123T130000/runs/zk-ephemeral-pause-s2/t/r",
		"redis-set-px pause seed 4": "skipped: not exercised: no pause lasted longer than the 1 s lease while its process held the lock",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestSaveListChanges(t *testing.T) {
	store := t.TempDir()
	old := fakeMatrix()
	cur := fakeMatrix()
	cur.Started = old.Started.Add(time.Hour)
	cur.Cells[1].Runs = runs("ivvv") // redis-set-px pause regressed
	cur.Judge()
	other := fakeMatrix()
	other.Started = old.Started.Add(30 * time.Minute)
	other.Cells = other.Cells[:2] // other cells: not a predecessor
	for _, m := range []*Matrix{old, other, cur} {
		dir, err := NewDir(store, StoreDir, m.Started)
		if err != nil {
			t.Fatal(err)
		}
		if err := Save(dir, m); err != nil {
			t.Fatal(err)
		}
	}
	// A second matrix in the same second gets its own directory.
	if d1, err := NewDir(store, StoreDir, old.Started); err != nil || filepath.Base(d1) != "20261123T130000-2" {
		t.Fatalf("second directory in the same second: %s %v", d1, err)
	}
	all, err := List(store)
	if err != nil || len(all) != 3 {
		t.Fatalf("list: %d %v", len(all), err)
	}
	if !all[0].Started.Equal(cur.Started) || all[0].Dir != "matrix/20261123T140000" {
		t.Fatalf("newest first: %v %s", all[0].Started, all[0].Dir)
	}
	prev := Previous(all, all[0])
	if prev == nil || !prev.Started.Equal(old.Started) {
		t.Fatalf("previous: %+v", prev)
	}
	ch := Changes(prev, all[0])
	if len(ch) != 1 || ch[cur.Cells[1].Key()] != "U 3/3, 1 not exercised" {
		t.Fatalf("changes %q", ch)
	}
	if Previous(all, all[2]) != nil {
		t.Fatal("the oldest matrix has a previous one")
	}
	b, _ := json.Marshal(all[0].Cells[1].Tally)
	if !bytes.Contains(b, []byte(`"invalid":1`)) {
		t.Fatalf("tally %s", b)
	}
}

// TestJUnitFailsExactlyWhenACellMissed checks what a CI reader relies on:
// over every cell of three runs (each valid, invalid, stuck, unknown, not
// exercised or an error) under every expectation, the JUnit file has a
// failure or an error exactly when the cell missed its expectation, as the
// matrix's exit code says. (An interrupted matrix exits 130 and is judged
// incomplete; its runs are skipped.)
func TestJUnitFailsExactlyWhenACellMissed(t *testing.T) {
	const letters = "visune"
	for _, e := range []Expect{Safe, Unsafe, Stuck, Depends} {
		for a := range letters {
			for b := range letters {
				for c := range letters {
					word := string([]byte{letters[a], letters[b], letters[c]})
					m := &Matrix{Version: Version}
					m.Cells = []CellResult{{Cell: Cell{Row: "d", Column: "n", Expect: e}, Runs: runs(word)}}
					m.Judge()
					j, _ := junitOf(t, m)
					missed := m.Cells[0].Status == Missed
					if failed := j.Failures+j.Errors > 0; failed != missed {
						t.Errorf("%s cell %q: status %s (%s), but JUnit has %d failures and %d errors",
							e, word, m.Cells[0].Status, m.Cells[0].Why, j.Failures, j.Errors)
					}
					if missed != (m.ExitCode() == ExitMissed || m.ExitCode() == ExitError) {
						t.Errorf("%s cell %q: status %s, exit %d", e, word, m.Cells[0].Status, m.ExitCode())
					}
				}
			}
		}
	}
}

// TestJUnitUnexercisedCell pins the failure of a cell no run exercised.
func TestJUnitUnexercisedCell(t *testing.T) {
	m := &Matrix{Version: Version}
	m.Cells = []CellResult{{Cell: Cell{Row: "redis-set-px", Column: "pause", Expect: Unsafe}, Runs: runs("nn")}}
	m.Judge()
	j, xmlText := junitOf(t, m)
	if j.Failures != 2 || j.Skipped != 0 {
		t.Fatalf("failures %d skipped %d, want 2 and 0:\n%s", j.Failures, j.Skipped, xmlText)
	}
	f := j.Suites[0].Cases[0].Failure
	if f == nil || f.Type != "not-exercised" || !strings.Contains(f.Message, "no exercised run (2 not exercised)") {
		t.Fatalf("failure %+v", f)
	}
}

// TestJUnitNeverReached: a cell whose runs never reached the condition it
// requires fails in JUnit, each exercised run a failure of type
// not-exercised, and its suite says its coverage; the text table has the
// coverage table and the missed line.
func TestJUnitNeverReached(t *testing.T) {
	m := &Matrix{Version: Version}
	m.Cells = []CellResult{
		{Cell: Cell{Row: "redis-set-px", Column: "none", Expect: Safe, Require: []string{"release-reply-lost"}}, Runs: reaching(runs("vn"), "holder-cut-off", 0)},
		{Cell: Cell{Row: "redis-set-px", Column: "partition", Expect: Safe, Require: []string{"holder-cut-off"}}, Runs: reaching(runs("vv"), "holder-cut-off", 1)},
	}
	m.Judge()
	if m.ExitCode() != ExitMissed {
		t.Fatalf("exit %d, want %d", m.ExitCode(), ExitMissed)
	}
	j, xmlText := junitOf(t, m)
	if j.Failures != 1 || j.Skipped != 1 {
		t.Fatalf("failures %d skipped %d, want 1 and 1:\n%s", j.Failures, j.Skipped, xmlText)
	}
	f := j.Suites[0].Cases[0].Failure
	if f == nil || f.Type != "not-exercised" || !strings.Contains(f.Message, "never reached release-reply-lost") {
		t.Fatalf("failure %+v", f)
	}
	if !strings.Contains(xmlText, `<property name="reached" value="release-reply-lost 0/2, holder-cut-off 1/2"></property>`) ||
		!strings.Contains(xmlText, `<property name="require" value="release-reply-lost"></property>`) {
		t.Errorf("suite properties lack the coverage:\n%s", xmlText)
	}
	var b strings.Builder
	if err := WriteTable(&b, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"coverage", "redis-set-px partition  holder-cut-off 1/2",
		"missed: redis-set-px none (S): never reached release-reply-lost"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteMarkdown(&b, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| `redis-set-px` | partition | holder-cut-off 1/2 |") {
		t.Errorf("markdown lacks the coverage table:\n%s", b.String())
	}
}
