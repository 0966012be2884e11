package matrix

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runs builds fake runs from verdict letters: v valid, i invalid, s
// invalid with a stuck lock, u unknown, n not exercised, e error, x
// interrupted.
func runs(letters string) []Run {
	var out []Run
	for i, l := range letters {
		first := 1.5 + float64(i)
		r := Run{Seed: uint64(i + 1), WallS: 10 + float64(i)}
		switch l {
		case 'v':
			r.Verdict, r.Exit = Valid, 0
		case 'i':
			r.Verdict, r.Exit = Invalid, 1
			r.Anomalies = map[string]int{"double-holder": 2, "lost-update": 1}
			r.FirstAnomalyS = &first
			r.Story = "processes 3 and 4 both held k0"
		case 's':
			r.Verdict, r.Exit = Invalid, 1
			r.Anomalies = map[string]int{"stuck-lock": 1}
			r.FirstAnomalyS = &first
			r.Story = "k0 is stuck"
		case 'u':
			r.Verdict, r.Exit, r.Error = Unknown, 2, "porcupine timed out"
		case 'n':
			r.Verdict, r.Exit, r.NotExercised = NotExercised, 2, "no pause lasted longer than the 1 s lease while its process held the lock"
		case 'e':
			r.Verdict, r.Exit, r.Error = Error, 3, "check: set up cluster: redis-server not found"
		case 'x':
			r.Verdict, r.Exit = Interrupted, 130
		}
		out = append(out, r)
	}
	return out
}

func TestClassify(t *testing.T) {
	tests := []struct {
		exit int
		ne   string
		want Verdict
	}{
		{0, "", Valid}, {1, "", Invalid}, {2, "", Unknown}, {2, "no pause hit a holder", NotExercised},
		{3, "", Error}, {-1, "", Error}, {137, "", Error}, {130, "", Interrupted},
	}
	for _, tt := range tests {
		if got := Classify(tt.exit, tt.ne); got != tt.want {
			t.Errorf("Classify(%d, %q) = %s, want %s", tt.exit, tt.ne, got, tt.want)
		}
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name    string
		expect  Expect
		letters string
		want    Status
		why     string
	}{
		{"S all valid", Safe, "vvvvv", Met, ""},
		{"S not exercised apart", Safe, "vvnnv", Met, ""},
		{"S one invalid", Safe, "vvivv", Missed, "valid in 4 of 5 exercised runs (1 invalid, 0 unknown)"},
		{"S one unknown", Safe, "vvuvv", Missed, "valid in 4 of 5"},
		{"S nothing exercised", Safe, "nnn", Missed, "no exercised run (3 not exercised)"},
		{"S error", Safe, "vvev", Missed, "1 of 4 runs ended in an error"},
		{"U 10/10", Unsafe, "iiiiiiiiii", Met, ""},
		{"U 9/10", Unsafe, "iiiiviiiii", Met, ""},
		{"U 8/10", Unsafe, "iiivviiiii", Missed, "invalid in 8 of 10 exercised runs, want at least 90%"},
		{"U not exercised apart", Unsafe, "iiinniiiii", Met, ""},
		{"U unknown counts against", Unsafe, "iiiiuiiiiu", Missed, "invalid in 8 of 10"},
		{"U error", Unsafe, "iiie", Missed, "ended in an error"},
		{"U nothing exercised", Unsafe, "nn", Missed, "no exercised run"},
		{"L stuck", Stuck, "sssss", Met, ""},
		{"L invalid without stuck lock", Stuck, "iiiii", Missed, "a stuck lock in 0 of 5"},
		{"D anything", Depends, "vinu", NoExpectation, ""},
		{"D error", Depends, "vie", Missed, "ended in an error"},
		{"interrupted", Unsafe, "iix", Incomplete, "1 of 3 runs interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Judge(tt.expect, TallyRuns(runs(tt.letters)))
			if got != tt.want || !strings.Contains(why, tt.why) || (tt.why == "" && why != "") {
				t.Fatalf("got %s %q, want %s %q", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestTally(t *testing.T) {
	tl := TallyRuns(runs("vinsue"))
	if tl.Runs != 6 || tl.Valid != 1 || tl.Invalid != 2 || tl.Stuck != 1 || tl.Unknown != 1 ||
		tl.NotExercised != 1 || tl.Error != 1 || tl.Exercised != 4 || tl.Detection != 0.5 {
		t.Fatalf("tally %+v", tl)
	}
	// First anomalies at 2.5 s (run 2) and 4.5 s (run 4): median 3.5 s.
	if tl.MedianFirstAnomalyS == nil || *tl.MedianFirstAnomalyS != 3.5 {
		t.Fatalf("median first anomaly %v", tl.MedianFirstAnomalyS)
	}
	if tl.MedianWallS != 12.5 {
		t.Fatalf("median wall %v", tl.MedianWallS)
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name  string
		cells map[Expect]string
		want  int
	}{
		{"all met", map[Expect]string{Safe: "vvv", Unsafe: "iii"}, ExitMet},
		{"one missed", map[Expect]string{Safe: "vvi", Unsafe: "iii"}, ExitMissed},
		{"one error", map[Expect]string{Safe: "vve", Unsafe: "iii"}, ExitMissed},
		{"every run an error", map[Expect]string{Safe: "ee", Unsafe: "e"}, ExitError},
		{"interrupted", map[Expect]string{Safe: "vvx", Unsafe: "iii"}, ExitInterrupted},
		{"depends only", map[Expect]string{Depends: "vin"}, ExitMet},
	}
	for _, tt := range tests {
		m := &Matrix{}
		for e, l := range tt.cells {
			m.Cells = append(m.Cells, CellResult{Cell: Cell{Row: "r", Column: string(e), Expect: e}, Runs: runs(l)})
		}
		m.Judge()
		if got := m.ExitCode(); got != tt.want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		letters string
		line    string
		exit    int
	}{
		{"iiiii", "5/5 runs invalid; first failing seed 1; median time to first anomaly 3.5 s", ReproReproduced},
		{"vviv", "1/4 runs invalid (3 valid); first failing seed 3; median time to first anomaly 3.5 s", ReproReproduced},
		{"vvvv", "0/4 runs invalid (4 valid)", ReproNever},
		{"vnv", "0/3 runs invalid (2 valid, 1 not exercised)", ReproUndecided},
		{"vuv", "0/3 runs invalid (2 valid, 1 unknown)", ReproUndecided},
		{"vne", "0/3 runs invalid (1 valid, 1 not exercised, 1 error)", ReproError},
		{"iex", "1/2 runs invalid (1 error, 1 interrupted); first failing seed 1; median time to first anomaly 1.5 s", ReproReproduced},
		{"vx", "0/1 runs invalid (1 valid, 1 interrupted)", ReproInterrupted},
	}
	for _, tt := range tests {
		s := Summarize(runs(tt.letters))
		if s.String() != tt.line || s.ExitCode() != tt.exit {
			t.Errorf("%s: %q exit %d, want %q exit %d", tt.letters, s.String(), s.ExitCode(), tt.line, tt.exit)
		}
	}
}

// TestCrashedRunsAreErrors: a run that exited 3 (check's own recovery of a
// panic) or died of a Go panic (exit 2 with a trace, even with a
// results.json written before it) counts as an error, never as unknown,
// and misses its cell whatever it expects.
func TestCrashedRunsAreErrors(t *testing.T) {
	trace := "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 42 [running]:\n"
	tests := []struct {
		name         string
		exit         int
		notExercised string
		output       string
		want         Verdict
		why          string
	}{
		{"exit 3, a caught panic", 3, "", "check: internal error: boom; stack in store/x/check-panic-1.txt\n", Error, ""},
		{"exit 2, a panic in a goroutine", 2, "", "run dir store/x\n" + trace, Error, "panic: runtime error: index out of range [3] with length 3"},
		{"exit 2, a panic after a not-exercised results.json", 2, "no pause hit a holder", trace, Error, "panic: runtime error"},
		{"exit 2, unknown", 2, "", "unknown: porcupine timed out\n", Unknown, ""},
		{"exit 2, not exercised", 2, "no pause hit a holder", "not exercised\n", NotExercised, ""},
		{"exit 1", 1, "", trace, Invalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "output.txt")
			if err := os.WriteFile(path, []byte(tt.output), 0o644); err != nil {
				t.Fatal(err)
			}
			v, why := ClassifyRun(tt.exit, tt.notExercised, path)
			if v != tt.want || !strings.HasPrefix(why, tt.why) || (tt.why == "") != (why == "") {
				t.Fatalf("ClassifyRun = %s %q, want %s %q", v, why, tt.want, tt.why)
			}
			tl := TallyRuns([]Run{{Exit: tt.exit, Verdict: v}})
			if crashed := tt.want == Error; crashed && (tl.Error != 1 || tl.Unknown != 0) {
				t.Fatalf("tally %+v: want one error, no unknown", tl)
			}
			if st, _ := Judge(Safe, tl); tt.want == Error && st != Missed {
				t.Fatalf("a cell with a crashed run is %s, want missed", st)
			}
		})
	}
}

// reaching returns rs with the runs at the given indices having reached
// the danger condition name.
func reaching(rs []Run, name string, at ...int) []Run {
	for _, i := range at {
		if rs[i].Reached == nil {
			rs[i].Reached = map[string]int{}
		}
		rs[i].Reached[name] += 2
	}
	return rs
}

// TestJudgeCellRequire: a cell that requires a danger condition misses
// when none of its runs reached it, whatever else it met, and says so.
func TestJudgeCellRequire(t *testing.T) {
	cut := []string{"holder-cut-off"}
	tests := []struct {
		name      string
		cell      Cell
		runs      []Run
		status    Status
		why       string
		unreached []string
	}{
		{"S met, reached once", Cell{Expect: Safe, Require: cut}, reaching(runs("vvv"), "holder-cut-off", 1), Met, "", nil},
		{"S met, never reached", Cell{Expect: Safe, Require: cut}, runs("vvv"), Missed, "never reached holder-cut-off", cut},
		{"another condition is not it", Cell{Expect: Safe, Require: cut}, reaching(runs("vvv"), "release-reply-lost", 0, 1, 2), Missed, "never reached holder-cut-off", cut},
		{"U missed and never reached", Cell{Expect: Unsafe, Require: cut}, runs("vvi"), Missed, "invalid in 1 of 3 exercised runs, want at least 90%; never reached holder-cut-off", cut},
		{"D never reached", Cell{Expect: Depends, Require: cut}, runs("vi"), Missed, "never reached holder-cut-off", cut},
		{"D reached", Cell{Expect: Depends, Require: cut}, reaching(runs("vi"), "holder-cut-off", 0), NoExpectation, "", nil},
		{"two required, one reached", Cell{Expect: Safe, Require: []string{"holder-cut-off", "release-reply-lost"}},
			reaching(runs("vv"), "holder-cut-off", 0), Missed, "never reached release-reply-lost", []string{"release-reply-lost"}},
		{"not exercised and never reached", Cell{Expect: Safe, Require: cut}, runs("nn"), Missed, "no exercised run (2 not exercised); never reached holder-cut-off", cut},
		{"every run an error says only that", Cell{Expect: Safe, Require: cut}, runs("ee"), Missed, "2 of 2 runs ended in an error", cut},
		{"interrupted is incomplete", Cell{Expect: Safe, Require: cut}, runs("vx"), Incomplete, "1 of 2 runs interrupted", cut},
		{"nothing required", Cell{Expect: Safe}, runs("vv"), Met, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, why, un := JudgeCell(tt.cell, TallyRuns(tt.runs))
			if st != tt.status || why != tt.why || !slices.Equal(un, tt.unreached) {
				t.Errorf("got %s %q %v, want %s %q %v", st, why, un, tt.status, tt.why, tt.unreached)
			}
		})
	}
}

func TestCoverage(t *testing.T) {
	rs := reaching(reaching(runs("vvvv"), "release-reply-lost", 0, 1, 2), "holder-cut-off", 3)
	c := CellResult{Cell: Cell{Require: []string{"session-ended-in-cs", "release-reply-lost"}}, Runs: rs}
	c.Tally = TallyRuns(rs)
	if got, want := c.Coverage(), "session-ended-in-cs 0/4, release-reply-lost 3/4, holder-cut-off 1/4"; got != want {
		t.Errorf("coverage %q, want %q", got, want)
	}
	if got := (CellResult{Runs: runs("v")}).Coverage(); got != "" {
		t.Errorf("coverage of a cell that reached and requires nothing: %q", got)
	}
}

// TestResolveRequire: a ? cell takes the catalog's expectation and the
// conditions its cell requires, unless it names its own; Grid's cells too.
func TestResolveRequire(t *testing.T) {
	cat := Catalog{cells: []Cell{{Row: "r", Column: "c", Expect: Safe, Require: []string{"holder-cut-off"},
		Args: []string{"--lock", "redis-set-px", "--nemesis", "partition"}}}}
	cells := []Cell{
		{Expect: FromCatalog, Args: []string{"--nemesis", "partition", "--lock", "redis-set-px", "--time", "5s"}},
		{Expect: FromCatalog, Require: []string{"release-reply-lost"}, Args: []string{"--lock", "redis-set-px", "--nemesis", "partition"}},
		{Expect: FromCatalog, Args: []string{"--lock", "redis-set-px", "--nemesis", "pause"}},
	}
	cat.Resolve(cells)
	if cells[0].Expect != Safe || !slices.Equal(cells[0].Require, []string{"holder-cut-off"}) {
		t.Errorf("resolved %+v, want S requiring holder-cut-off", cells[0])
	}
	if !slices.Equal(cells[1].Require, []string{"release-reply-lost"}) {
		t.Errorf("a cell's own requirement was replaced: %v", cells[1].Require)
	}
	if cells[2].Expect != Depends || cells[2].Require != nil {
		t.Errorf("no catalog cell: %+v, want D requiring nothing", cells[2])
	}
	g := cat.Grid([]string{"redis-set-px"}, []string{"partition"}, nil)
	if len(g) != 1 || g[0].Expect != Safe || !slices.Equal(g[0].Require, []string{"holder-cut-off"}) {
		t.Errorf("grid %+v", g)
	}
}
