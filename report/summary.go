package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// SummaryFile is the name of the summary a run directory holds beside its
// results.json: what the index of `check serve` shows of the run.
const SummaryFile = "summary.json"

// summaryVersion is the format of summary.json; a file of another version
// is ignored (the server then reads results.json).
const summaryVersion = 1

// Summary is summary.json: the fields of test.json and results.json that
// the index of `check serve` shows, a few hundred bytes however large the
// results are.
type Summary struct {
	// Version is the format, 1.
	Version int `json:"version"`
	// TestInfo is test.json's fields.
	TestInfo
	// TestProblem says why test.json could not be read, when it could not.
	TestProblem string `json:"test_problem,omitempty"`
	// Valid is results.json's verdict.
	Valid checker.Validity `json:"valid"`
	// Anomalies counts results.json's anomalies by kind, in the order of
	// the report's page.
	Anomalies []AnomalyCount `json:"anomalies"`
}

// TestInfo is the part of a run's test.json that the index of `check
// serve` and summary.json show.
type TestInfo struct {
	Name    string        `json:"name,omitempty"`
	Lock    string        `json:"lock,omitempty"`
	Nemesis string        `json:"nemesis,omitempty"`
	Seed    uint64        `json:"seed,omitempty"`
	Fencing bool          `json:"fencing,omitempty"`
	Workers int           `json:"workers,omitempty"`
	Time    time.Duration `json:"time,omitempty"`
	Started time.Time     `json:"started"`
	Command []string      `json:"command,omitempty"`
}

// AnomalyCount is the number of anomalies of one kind, and how many of them
// fencing made harmless.
type AnomalyCount struct {
	Kind   string `json:"kind"`
	Count  int    `json:"count"`
	Fenced int    `json:"fenced,omitempty"`
}

// WriteSummary writes dir/summary.json from res (the run's results, as
// just written to dir/results.json) and dir/test.json. It writes a
// temporary file and renames it, so summary.json is never partly written.
// A dir without a test.json (a bare history checked offline) gets a
// summary without the test's fields; an unreadable test.json is recorded
// in TestProblem.
func WriteSummary(dir string, res checker.Result) error {
	sum := Summary{Version: summaryVersion, Valid: res.Valid, Anomalies: countAnomalies(res.Anomalies)}
	if tf, err := readTestFile(dir); err == nil {
		sum.TestInfo = tf
	} else if !errors.Is(err, os.ErrNotExist) {
		sum.TestProblem = err.Error()
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	return writeAtomic(filepath.Join(dir, SummaryFile), append(b, '\n'))
}

// writeAtomic writes b to path through a hidden temporary file in the same
// directory, renamed over path once complete.
func writeAtomic(path string, b []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadSummary reads dir/summary.json. A file that is not a summary of the
// current version, or has no verdict, is an error.
func ReadSummary(dir string) (Summary, error) {
	path := filepath.Join(dir, SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, fmt.Errorf("read summary: %w", err)
	}
	// The outer Valid hides Summary's, so a missing verdict stays nil
	// rather than decoding as valid.
	var raw struct {
		Summary
		Valid *checker.Validity `json:"valid"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Summary{}, fmt.Errorf("decode %s: %w", path, err)
	}
	if raw.Version != summaryVersion {
		return Summary{}, fmt.Errorf("decode %s: version %d, want %d", path, raw.Version, summaryVersion)
	}
	if raw.Valid == nil {
		return Summary{}, fmt.Errorf("decode %s: no verdict", path)
	}
	sum := raw.Summary
	sum.Valid = *raw.Valid
	return sum, nil
}

// countAnomalies counts as by kind in the page's order (sortedAnomalies).
func countAnomalies(as []checker.Anomaly) []AnomalyCount {
	var counts []AnomalyCount
	for _, a := range as {
		counts = addAnomaly(counts, a.Kind, a.Fenced)
	}
	return sortCounts(counts)
}

// addAnomaly adds one anomaly of kind to counts.
func addAnomaly(counts []AnomalyCount, kind string, fenced bool) []AnomalyCount {
	i := slices.IndexFunc(counts, func(c AnomalyCount) bool { return c.Kind == kind })
	if i < 0 {
		counts = append(counts, AnomalyCount{Kind: kind})
		i = len(counts) - 1
	}
	counts[i].Count++
	if fenced {
		counts[i].Fenced++
	}
	return counts
}

// sortCounts orders counts as sortedAnomalies orders kinds: by kindOrder,
// unknown kinds last by name.
func sortCounts(counts []AnomalyCount) []AnomalyCount {
	slices.SortStableFunc(counts, func(a, b AnomalyCount) int {
		ra, rb := kindRank(a.Kind), kindRank(b.Kind)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return counts
}

// countsSummary renders counts as anomalySummary renders the anomalies
// they count, e.g. "2 double-holder, 2 lost-update (1 fenced)".
func countsSummary(counts []AnomalyCount) string {
	var parts []string
	for _, c := range counts {
		if c.Count <= 0 {
			continue
		}
		s := fmt.Sprintf("%d %s", c.Count, c.Kind)
		if c.Fenced > 0 {
			s += fmt.Sprintf(" (%d fenced)", c.Fenced)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no anomalies"
	}
	return strings.Join(parts, ", ")
}

// readTestFile reads the part of dir/test.json the index shows.
func readTestFile(dir string) (TestInfo, error) {
	var tf TestInfo
	b, err := os.ReadFile(filepath.Join(dir, "test.json"))
	if err != nil {
		return tf, err
	}
	if err := json.Unmarshal(b, &tf); err != nil {
		return tf, fmt.Errorf("test.json: %w", err)
	}
	return tf, nil
}

// errNoVerdict is why a results.json gives no verdict.
var errNoVerdict = errors.New("results.json has no verdict")

// decodeResults reads the verdict and the anomaly counts of a results.json
// from r without holding the file: it walks the top-level object, decodes
// the anomalies one at a time (their kind and fenced flag only), skips
// every other value token by token, and stops once it has both. Any
// malformation is errNoVerdict, as a failed decode of the whole file was.
func decodeResults(r io.Reader) (checker.Validity, []AnomalyCount, error) {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, nil, errNoVerdict
	}
	var valid *checker.Validity
	var counts []AnomalyCount
	haveAnomalies := false
	for dec.More() && (valid == nil || !haveAnomalies) {
		t, err := dec.Token()
		if err != nil {
			return 0, nil, errNoVerdict
		}
		key, _ := t.(string)
		switch key {
		case "valid":
			valid = nil
			if err := dec.Decode(&valid); err != nil {
				return 0, nil, errNoVerdict
			}
		case "anomalies":
			counts, haveAnomalies = nil, true
			t, err := dec.Token()
			if err != nil {
				return 0, nil, errNoVerdict
			}
			if t == nil { // null
				continue
			}
			if t != json.Delim('[') {
				return 0, nil, errNoVerdict
			}
			for dec.More() {
				var a struct {
					Kind   string `json:"kind"`
					Fenced bool   `json:"fenced"`
				}
				if err := dec.Decode(&a); err != nil {
					return 0, nil, errNoVerdict
				}
				counts = addAnomaly(counts, a.Kind, a.Fenced)
			}
			if _, err := dec.Token(); err != nil {
				return 0, nil, errNoVerdict
			}
		default:
			if err := skipValue(dec); err != nil {
				return 0, nil, errNoVerdict
			}
		}
	}
	if valid == nil {
		return 0, nil, errNoVerdict
	}
	return *valid, sortCounts(counts), nil
}

// skipValue reads past the next value of dec token by token, so a large
// value is never held whole.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
