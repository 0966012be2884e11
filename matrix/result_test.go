package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadResults(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		file string
		exit int
		want Run
	}{
		{"invalid.json", 1, Run{Verdict: Invalid, Exit: 1, FirstAnomalyS: f(2.25), Story: "processes 3 and 4 both held k0",
			Anomalies: map[string]int{"double-holder": 2, "lost-update": 1}}},
		{"not-exercised.json", 2, Run{Verdict: NotExercised, Exit: 2,
			NotExercised: "no pause lasted longer than the 1 s lease while its process held the lock"}},
		{"stats.json", 1, Run{Verdict: Invalid, Exit: 1, FirstAnomalyS: f(1.75), Story: "k0 is stuck",
			Anomalies: map[string]int{"stuck-lock": 1}}},
		{"reached.json", 0, Run{Verdict: Valid, Exit: 0, Reached: map[string]int{"holder-paused-past-lease": 3, "release-reply-lost": 1}}},
		// A redis-set-px pause run with the Redis observer: its four
		// lost-lock windows.
		{"windows.json", 1, Run{Verdict: Invalid, Exit: 1, FirstAnomalyS: f(6.521), Story: storyOf(t, "windows.json"),
			Anomalies: map[string]int{"double-holder": 1}, WindowsS: []float64{2.207632, 2.012375, 2.008873, 2.015503}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res := readResultsOf(t, tt.file)
			r := Run{Exit: tt.exit}
			r.Fill(res)
			r.Verdict = Classify(r.Exit, r.NotExercised)
			if !reflect.DeepEqual(r, tt.want) {
				t.Fatalf("got %+v, want %+v", r, tt.want)
			}
		})
	}
	if _, err := ReadResults(t.TempDir()); err == nil {
		t.Fatal("no results.json read without an error")
	}
}

func TestPanicIn(t *testing.T) {
	trace := "panic: interface conversion: interface {} is nil, not *checker.mutexOp\n\ngoroutine 1 [running]:\nmain.main()\n\t/work/main/cmd/check/main.go:57 +0x5e\n"
	long := "panic: " + strings.Repeat("x", 500) + "\n\ngoroutine 9 [running]:\n"
	tests := []struct {
		name   string
		exit   int
		output string
		want   string
	}{
		{"a panic", 2, "run dir store/x\n" + trace, "panic: interface conversion: interface {} is nil, not *checker.mutexOp"},
		{"a fatal error", 2, "fatal error: concurrent map writes\n\ngoroutine 12 gp=0xc000 m=3 mp=0xc001 [running]:\n", "fatal error: concurrent map writes"},
		{"the first panic", 2, "panic: first [recovered]\n\tpanic: second\n\ngoroutine 1 [running]:\n", "panic: first [recovered]"},
		{"a long panic", 2, long, "panic: " + strings.Repeat("x", 393) + "…"},
		{"a panic line of the most kept", 2, "panic: " + strings.Repeat("y", 393) + "\ngoroutine 1 [running]:\n", "panic: " + strings.Repeat("y", 393)},
		{"unknown, no panic", 2, "unknown: porcupine timed out\n", ""},
		{"a panic line with no trace", 2, "panic: the word in a story\n", ""},
		{"a trace before any panic line", 2, "goroutine 1 [running]:\npanic: x\n", ""},
		{"exit 3 (a caught panic)", 3, "check: internal error: boom; stack in /tmp/check-panic-1.txt\n" + trace, ""},
		{"exit 1", 1, trace, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "output.txt")
			if err := os.WriteFile(path, []byte(tt.output), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := PanicIn(tt.exit, path)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("PanicIn = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
	if got, ok := PanicIn(2, filepath.Join(t.TempDir(), "missing")); ok || got != "" {
		t.Fatalf("PanicIn of a missing file = %q, %v", got, ok)
	}
}

// readResultsOf is what ReadResults reads of a run directory whose
// results.json is testdata/results/file.
func readResultsOf(t *testing.T, file string) Results {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "results", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// storyOf returns the first anomaly's explanation in testdata/results/file.
func storyOf(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "results", file))
	if err != nil {
		t.Fatal(err)
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil || len(res.Anomalies) == 0 {
		t.Fatalf("%s: %v", file, err)
	}
	return res.Anomalies[0].Explanation
}

// TestWindowP99 tallies the windows of stored runs: the cell's p99 is over
// every run's windows (nearest rank), and a cell with none has no p99.
func TestWindowP99(t *testing.T) {
	res := readResultsOf(t, "windows.json")
	stored := Run{Seed: 1, Verdict: Invalid, Exit: 1}
	stored.Fill(res)
	long := Run{Seed: 2, Verdict: Invalid, Exit: 1, WindowsS: []float64{0.5, 3.25}}
	none := Run{Seed: 3, Verdict: Valid}
	tl := TallyRuns([]Run{stored, long, none})
	if tl.Windows != 6 || tl.WindowP99S == nil || *tl.WindowP99S != 3.25 {
		t.Fatalf("tally %+v: want 6 windows, p99 3.25", tl)
	}
	if tl := TallyRuns([]Run{stored}); tl.WindowP99S == nil || *tl.WindowP99S != 2.207632 {
		t.Fatalf("one stored run: %+v, want its own p99 2.207632", tl)
	}
	if tl := TallyRuns([]Run{none}); tl.Windows != 0 || tl.WindowP99S != nil {
		t.Fatalf("no windows: %+v", tl)
	}
}
