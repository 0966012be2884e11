package matrix

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Verdict is what one run ended in, from its exit code and results.json.
type Verdict string

// The verdicts of a run.
const (
	// Valid: exit 0.
	Valid Verdict = "valid"
	// Invalid: exit 1.
	Invalid Verdict = "invalid"
	// NotExercised: exit 2 with a non-empty not_exercised in results.json
	// (the run's faults could not have produced the anomaly it looks for).
	NotExercised Verdict = "not-exercised"
	// Unknown: exit 2 otherwise (a check could not decide).
	Unknown Verdict = "unknown"
	// Error: exit 3 or any other code; the run tested nothing.
	Error Verdict = "error"
	// Interrupted: exit 130, or the matrix was stopped before the run.
	Interrupted Verdict = "interrupted"
	// Missing: a merged matrix expected the run and no shard has it, or
	// its run directory is gone. It tested nothing that can be shown.
	Missing Verdict = "missing"
)

// Classify maps a `check run` exit code, and the not_exercised reason of
// its results.json, to a verdict. A panic `check run` catches is exit 3,
// an Error; one it cannot catch (in another goroutine) is exit 2, which
// ClassifyRun tells from an unknown verdict by the run's output.
func Classify(exit int, notExercised string) Verdict {
	switch exit {
	case 0:
		return Valid
	case 1:
		return Invalid
	case 2:
		if notExercised != "" {
			return NotExercised
		}
		return Unknown
	case 130:
		return Interrupted
	}
	return Error
}

// Run is one run of a cell: one seed.
type Run struct {
	Seed    uint64  `json:"seed"`
	Verdict Verdict `json:"verdict"`
	Exit    int     `json:"exit"`
	// Dir is the run directory, relative to the store the matrix was
	// stored in ("" when the run made none).
	Dir string `json:"dir,omitempty"`
	// WallS is the run's wall time, in seconds.
	WallS float64 `json:"wall_s"`
	// FirstAnomalyS is the time from the test's start to its first anomaly
	// (not counting fenced ones), in seconds; absent when none.
	FirstAnomalyS *float64 `json:"first_anomaly_s,omitempty"`
	// Anomalies counts the run's anomalies by kind, fenced ones left out.
	Anomalies map[string]int `json:"anomalies,omitempty"`
	// Story is the first anomaly's explanation.
	Story string `json:"story,omitempty"`
	// NotExercised says why the faults missed.
	NotExercised string `json:"not_exercised,omitempty"`
	// WindowsS are the lengths of the run's lost-lock windows (the windows
	// checker's), in seconds; absent when it had none (no observer, or no
	// grant the server released while its holder held it).
	WindowsS []float64 `json:"windows_s,omitempty"`
	// Aimed is the --nemesis the run fired its cell's faults with, when
	// --until-covered aimed them at a condition no run had reached
	// (Aim); "" for a run of the cell's own flags.
	Aimed string `json:"aimed,omitempty"`
	// Reached counts the places the run reached each danger condition
	// (results.json's reached), by name; absent when it reached none.
	Reached map[string]int `json:"reached,omitempty"`
	// Error is the last line the run printed, for an error.
	Error string `json:"error,omitempty"`
}

// StuckLock reports whether the run found a stuck lock.
func (r Run) StuckLock() bool { return r.Anomalies["stuck-lock"] > 0 }

// Results is the part of a run's results.json the matrix reads.
type Results struct {
	NotExercised string         `json:"not_exercised"`
	Stats        map[string]any `json:"stats"`
	Anomalies    []struct {
		Kind        string        `json:"kind"`
		Start       time.Duration `json:"start"`
		Fenced      bool          `json:"fenced"`
		Explanation string        `json:"explanation"`
	} `json:"anomalies"`
	// Reached are the danger conditions the run reached.
	Reached []struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	} `json:"reached"`
	// Results are the sub-checkers' results: the matrix reads the
	// windows checker's stats.
	Results []struct {
		Checker string                     `json:"checker"`
		Stats   map[string]json.RawMessage `json:"stats"`
	} `json:"results"`
}

// windowLengths returns the lengths of the lost-lock windows the windows
// checker listed (its stats.windows[].window_s), nil when there are none.
func (res Results) windowLengths() []float64 {
	var out []float64
	for _, sub := range res.Results {
		if sub.Checker != "windows" {
			continue
		}
		var ws []struct {
			Length float64 `json:"window_s"`
		}
		if raw, ok := sub.Stats["windows"]; !ok || json.Unmarshal(raw, &ws) != nil {
			continue
		}
		for _, w := range ws {
			out = append(out, w.Length)
		}
	}
	return out
}

// ReadResults reads dir/results.json.
func ReadResults(dir string) (Results, error) {
	var res Results
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return res, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	return res, nil
}

// Fill sets the run's anomaly counts, story, time to first anomaly,
// not-exercised reason, lost-lock windows and danger conditions reached
// from its results. The first anomaly is the
// unfenced one that started first; its time is stats.first_anomaly_s when
// the results carry it.
func (r *Run) Fill(res Results) {
	r.NotExercised = res.NotExercised
	first := -1
	for i, a := range res.Anomalies {
		if a.Fenced {
			continue
		}
		if r.Anomalies == nil {
			r.Anomalies = make(map[string]int)
		}
		r.Anomalies[a.Kind]++
		if first < 0 || a.Start < res.Anomalies[first].Start {
			first = i
		}
	}
	if first >= 0 {
		r.Story = res.Anomalies[first].Explanation
		s := res.Anomalies[first].Start.Seconds()
		r.FirstAnomalyS = &s
	}
	if v, ok := res.Stats["first_anomaly_s"].(float64); ok {
		r.FirstAnomalyS = &v
	}
	r.WindowsS = res.windowLengths()
	for _, c := range res.Reached {
		if r.Reached == nil {
			r.Reached = make(map[string]int)
		}
		r.Reached[c.Name] += c.Count
	}
}

// AnomalyKinds returns the run's anomaly kinds, sorted, with counts:
// "2 double-holder, 1 lost-update".
func (r Run) AnomalyKinds() string {
	kinds := make([]string, 0, len(r.Anomalies))
	for k := range r.Anomalies {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	s := ""
	for i, k := range kinds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", r.Anomalies[k], k)
	}
	return s
}

// ClassifyRun is Classify for a run whose output is at logPath: a run
// that died of a panic (PanicIn) is an Error whatever its results.json
// says, and its panic line is returned as the reason.
func ClassifyRun(exit int, notExercised, logPath string) (Verdict, string) {
	if line, ok := PanicIn(exit, logPath); ok {
		return Error, line
	}
	return Classify(exit, notExercised), ""
}

// maxOutputLine bounds a line PanicIn reads; maxPanicLine is the most of
// the panic line it returns.
const (
	maxOutputLine = 1 << 20
	maxPanicLine  = 400
)

// PanicIn reports whether a run that exited with exit died of a Go panic
// or fatal error (exit 2, a "panic: " or "fatal error: " line followed by
// a goroutine's trace in its output at logPath), and returns that line:
// such a run is an Error, never Unknown.
func PanicIn(exit int, logPath string) (string, bool) {
	if exit != 2 {
		return "", false
	}
	f, err := os.Open(logPath)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxOutputLine)
	first := ""
	for sc.Scan() {
		line := sc.Text()
		if first == "" {
			if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
				first = line
			}
			continue
		}
		if strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(line, ":") {
			if len(first) > maxPanicLine {
				first = first[:maxPanicLine] + "…"
			}
			return first, true
		}
	}
	return "", false
}
