package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// anomalies returns one anomaly per kind given, a "+" suffix marking it
// fenced.
func anomalies(kinds ...string) []checker.Anomaly {
	var as []checker.Anomaly
	for i, k := range kinds {
		fenced := strings.HasSuffix(k, "+")
		as = append(as, checker.Anomaly{Kind: strings.TrimSuffix(k, "+"), Processes: []int{i, i + 1},
			Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Fenced: fenced,
			Ops: []int{i, i + 3}, Nemesis: []string{"pause of process 3"}, Explanation: strings.Repeat("story ", 20)})
	}
	return as
}

// TestSummaryRoundTrip checks that WriteSummary and ReadSummary keep
// test.json's fields and the verdict, that the anomaly counts render as
// the report's summary of the anomalies, and that decoding results.json
// alone gives the same verdict and counts.
func TestSummaryRoundTrip(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	fullTest := `{"name":"redis-set-px-pause","lock":"redis-set-px","nemesis":"pause,kill","seed":18446744073709551615,
"fencing":true,"workers":10,"time":20000000000,"started":"` + started.Format(time.RFC3339Nano) + `",
"command":["check","run","--lock","redis-set-px"],"versions":{"go":"go1.26"},"lease":1000000000}`
	full := Summary{Version: 1, TestInfo: TestInfo{Name: "redis-set-px-pause", Lock: "redis-set-px", Nemesis: "pause,kill",
		Seed: 18446744073709551615, Fencing: true, Workers: 10, Time: 20 * time.Second, Started: started,
		Command: []string{"check", "run", "--lock", "redis-set-px"}}}
	tests := []struct {
		name     string
		testJSON string // "" for none
		res      checker.Result
		want     Summary // Valid, Anomalies and TestProblem filled in below
		counts   []AnomalyCount
		problem  string // a substring of TestProblem
	}{
		{name: "valid", testJSON: fullTest, res: checker.Result{Checker: "lockcheck", Valid: checker.Valid}, want: full},
		{name: "invalid", testJSON: fullTest, want: full, res: checker.Result{Valid: checker.Invalid,
			Anomalies: anomalies("lost-update", "double-holder", "lost-update+", "zz-new", "double-holder", "aa-new", "nonlinearizable")},
			counts: []AnomalyCount{{"double-holder", 2, 0}, {"lost-update", 2, 1}, {"nonlinearizable", 1, 0}, {"aa-new", 1, 0}, {"zz-new", 1, 0}}},
		{name: "unknown", testJSON: fullTest, want: full, res: checker.Result{Valid: checker.Unknown, Error: "porcupine timed out"}},
		{name: "fenced only", testJSON: fullTest, want: full, res: checker.Result{Valid: checker.Valid,
			Anomalies: anomalies("stale-write-rejected+", "stale-write-rejected+")},
			counts: []AnomalyCount{{"stale-write-rejected", 2, 2}}},
		{name: "no test.json", res: checker.Result{Valid: checker.Invalid, Anomalies: anomalies("double-holder")},
			want: Summary{Version: 1}, counts: []AnomalyCount{{"double-holder", 1, 0}}},
		{name: "corrupt test.json", testJSON: `{"name":`, res: checker.Result{Valid: checker.Valid},
			want: Summary{Version: 1}, problem: "test.json: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.testJSON != "" {
				if err := os.WriteFile(filepath.Join(dir, "test.json"), []byte(tt.testJSON), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteSummary(dir, tt.res); err != nil {
				t.Fatal(err)
			}
			got, err := ReadSummary(dir)
			if err != nil {
				t.Fatal(err)
			}
			if (tt.problem == "") != (got.TestProblem == "") || !strings.Contains(got.TestProblem, tt.problem) {
				t.Errorf("TestProblem %q, want %q", got.TestProblem, tt.problem)
			}
			want := tt.want
			want.Valid, want.Anomalies, want.TestProblem = tt.res.Valid, tt.counts, got.TestProblem
			if !got.Started.Equal(want.Started) {
				t.Errorf("Started %v, want %v", got.Started, want.Started)
			}
			got.Started, want.Started = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back\n%+v\nwant\n%+v", got, want)
			}
			report := anomalySummary(sortedAnomalies(tt.res.Anomalies))
			if s := countsSummary(got.Anomalies); s != report {
				t.Errorf("summary's anomalies render as %q, the report's as %q", s, report)
			}
			// results.json alone gives the same, decoded as the server does.
			rb, err := json.MarshalIndent(tt.res, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			valid, counts, err := decodeResults(strings.NewReader(string(rb)))
			if err != nil || valid != tt.res.Valid || !reflect.DeepEqual(counts, tt.counts) {
				t.Errorf("decodeResults = %v, %v, %v; want %v, %v", valid, counts, err, tt.res.Valid, tt.counts)
			}
			des, _ := os.ReadDir(dir)
			for _, de := range des {
				if de.Name() != "test.json" && de.Name() != SummaryFile {
					t.Errorf("WriteSummary left %s behind", de.Name())
				}
			}
			if st, err := os.Stat(filepath.Join(dir, SummaryFile)); err != nil || st.Mode().Perm() != 0o644 {
				t.Errorf("summary.json: %v, mode %v; want 0644", err, st.Mode())
			}
		})
	}
}

// TestWriteSummaryReplaces checks that a second WriteSummary replaces the
// first, and that a failed write leaves the old file whole.
func TestWriteSummaryReplaces(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSummary(dir, checker.Result{Valid: checker.Valid}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(dir, checker.Result{Valid: checker.Invalid, Anomalies: anomalies("double-holder")}); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSummary(dir); err != nil || s.Valid != checker.Invalid {
		t.Fatalf("after the second write: %+v, %v; want invalid", s, err)
	}
	err := WriteSummary(filepath.Join(dir, "missing"), checker.Result{Valid: checker.Valid})
	if err == nil || !strings.HasPrefix(err.Error(), "write ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteSummary to a missing directory: %v", err)
	}
}

// TestReadSummaryRejects checks that a file that is not a whole summary of
// this version is an error (the server then reads results.json).
func TestReadSummaryRejects(t *testing.T) {
	for _, tt := range []struct{ name, body, want string }{
		{"empty", ``, "unexpected end of JSON input"},
		{"truncated", `{"version":1,"valid":false,"anomalies":[{"kind":"double-ho`, "unexpected end of JSON input"},
		{"not an object", `[1,2]`, "cannot unmarshal array"},
		{"no version", `{"valid":true,"anomalies":[]}`, "version 0, want 1"},
		{"future version", `{"version":2,"valid":true}`, "version 2, want 1"},
		{"no verdict", `{"version":1,"anomalies":[]}`, "no verdict"},
		{"null verdict", `{"version":1,"valid":null}`, "no verdict"},
		{"bad verdict", `{"version":1,"valid":"maybe"}`, "unmarshal validity"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			if s, err := ReadSummary(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadSummary = %+v, %v; want an error with %q", s, err, tt.want)
			}
		})
	}
	if _, err := ReadSummary(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no summary.json: %v, want not exist", err)
	}
}

// TestDecodeResults checks the streaming decoder of results.json on the
// shapes it may meet.
func TestDecodeResults(t *testing.T) {
	two := `[{"kind":"lost-update","processes":[1,2],"explanation":"x","fenced":true},{"kind":"double-holder","ops":[1,{"a":[2]}]}]`
	tests := []struct {
		name, body string
		valid      checker.Validity
		summary    string // countsSummary; "" for errNoVerdict
	}{
		{"runner's order", `{"checker":"lockcheck","valid":false,"advisory":false,"anomalies":` + two + `,"stats":{"ops":3},"results":[{"valid":true}]}`,
			checker.Invalid, "1 double-holder, 1 lost-update (1 fenced)"},
		{"anomalies first", `{"anomalies":` + two + `,"stats":{"a":[1,[2,{"b":null}]]},"results":[{"valid":true,"anomalies":[]}],"valid":"unknown"}`,
			checker.Unknown, "1 double-holder, 1 lost-update (1 fenced)"},
		{"no anomalies key", `{"valid":true}`, checker.Valid, "no anomalies"},
		{"null anomalies", `{"valid":true,"anomalies":null}`, checker.Valid, "no anomalies"},
		{"empty anomalies", `{"valid":true,"anomalies":[]}`, checker.Valid, "no anomalies"},
		{"whitespace", "\n{ \"valid\" : false ,\n\"anomalies\" : [ { \"kind\" : \"stuck-lock\" } ] }\n", checker.Invalid, "1 stuck-lock"},
		{"truncated after what is needed", `{"valid":false,"anomalies":[{"kind":"no-grants"}],"stats":{"ops":`, checker.Invalid, "1 no-grants"},
		{"no verdict", `{"checker":"x","anomalies":[]}`, 0, ""},
		{"null verdict", `{"valid":null,"anomalies":[]}`, 0, ""},
		{"bad verdict", `{"valid":1,"anomalies":[]}`, 0, ""},
		{"anomalies not an array", `{"valid":true,"anomalies":{"kind":"x"}}`, 0, ""},
		{"bad anomaly", `{"valid":true,"anomalies":[{"kind":7}]}`, 0, ""},
		{"truncated in anomalies", `{"valid":false,"anomalies":[{"kind":"double-holder"},{"ki`, 0, ""},
		{"not an object", `[{"valid":true}]`, 0, ""},
		{"empty", ``, 0, ""},
		{"garbage", `valid: true`, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			valid, counts, err := decodeResults(strings.NewReader(tt.body))
			if tt.summary == "" {
				if !errors.Is(err, errNoVerdict) {
					t.Errorf("decodeResults = %v, %v, %v; want errNoVerdict", valid, counts, err)
				}
				return
			}
			if err != nil || valid != tt.valid || countsSummary(counts) != tt.summary {
				t.Errorf("decodeResults = %v, %q, %v; want %v, %q", valid, countsSummary(counts), err, tt.valid, tt.summary)
			}
		})
	}
}
