package matrix

import (
	"os"
	"path/filepath"
	"reflect"
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
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			dir := t.TempDir()
			b, err := os.ReadFile(filepath.Join("testdata", "results", tt.file))
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
