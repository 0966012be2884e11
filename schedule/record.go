package schedule

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// FileName is the schedule's file in a run directory.
const FileName = "schedule.json"

// Record is the schedule a run applied, as schedule.json keeps it: every
// fault with its trigger and what became of it. A schedule file given to
// `check run --schedule` has the same form; its faults' Fired and the
// other outcomes are ignored there.
type Record struct {
	// Lease is the lease the run's lease-relative durations were taken of.
	Lease time.Duration `json:"lease,omitempty"`
	// Duration is how long a fault that names none was kept.
	Duration time.Duration `json:"nemesis_duration,omitempty"`
	// Faults are the faults, triggered first in the order given, then the
	// timed ones (fired at seeded random times) as time triggers at the
	// times they fired.
	Faults []Applied `json:"faults"`
}

// Applied is one fault of a Record: the fault, its spelling, and what it
// did.
type Applied struct {
	Fault
	// Spec is the fault as --nemesis spells it.
	Spec string `json:"spec"`
	// Random says the fault was one of the run's timed faults: its
	// trigger is the time it fired at, and its nemesis picked its target.
	Random bool `json:"random,omitempty"`
	// Fired are its firings, in order.
	Fired []Fired `json:"fired,omitempty"`
	// Busy counts the events that matched its trigger while it was in
	// force (they fire nothing).
	Busy int `json:"busy,omitempty"`
	// Unfired says why it fired fewer times than it asked, "" when it
	// fired them all.
	Unfired string `json:"unfired,omitempty"`
}

// Fired is one firing of a fault, in the history's time and indexes.
type Fired struct {
	// Event is the index of the op whose event fired it, -1 for a time
	// trigger; EventF names the event.
	Event  int    `json:"event"`
	EventF string `json:"event_f"`
	// Process is the holder the fault was aimed at (-1: the nemesis
	// picked), Key the lock of the event.
	Process int    `json:"process"`
	Key     string `json:"key,omitempty"`
	// Due is when the trigger said to strike (the event's time plus the
	// offset); InForce when the fault was in force (its start op's
	// completion); Waited how long the start waited for a moment of its
	// own (history.Hit's Waited: redlock-clock-jump's cut-off holder,
	// restart-lose's bare-majority grant), and Late the rest of the
	// difference, the trigger's own lateness.
	Due     time.Duration `json:"due"`
	InForce time.Duration `json:"in_force"`
	Waited  time.Duration `json:"waited,omitempty"`
	Late    time.Duration `json:"late"`
	// Start and End are the indexes of its start and end ops'
	// completions; Ended is when the end op completed.
	Start int           `json:"start_op"`
	End   int           `json:"end_op"`
	Ended time.Duration `json:"ended"`
	// Error is the start op's error: the fault could not be applied.
	Error string `json:"error,omitempty"`
}

// Applied returns what each of the engine's faults did so far.
func (e *Engine) Applied() []Applied {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Applied, 0, len(e.faults))
	for _, a := range e.faults {
		ap := Applied{Fault: a.f, Spec: a.spec, Fired: append([]Fired(nil), a.fired...), Busy: a.skipped, Unfired: a.unfired}
		if ap.Unfired == "" && len(a.fired) < a.f.times() {
			ap.Unfired = "the workload ended first"
		}
		out = append(out, ap)
	}
	return out
}

// Lates returns how late every firing that took effect was.
func Lates(faults []Applied) []time.Duration {
	var out []time.Duration
	for _, a := range faults {
		if a.Random {
			continue
		}
		for _, f := range a.Fired {
			if f.Error == "" {
				out = append(out, f.Late)
			}
		}
	}
	return out
}

// Quantile returns the q-quantile (0..1) of ds by the nearest rank, 0 for
// none.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Replay returns the faults a replay of rec runs: each triggered fault as
// it was written, each timed fault as a time trigger at the time it fired
// (from the workload's start) for as long as it was kept.
func (rec Record) Replay() []Fault {
	var out []Fault
	for _, a := range rec.Faults {
		out = append(out, a.Fault)
	}
	return out
}

// Join returns faults as one --nemesis value; "none" for no faults.
func Join(faults []Fault) string {
	if len(faults) == 0 {
		return "none"
	}
	s := make([]string, len(faults))
	for i, f := range faults {
		s[i] = f.String()
	}
	return strings.Join(s, ",")
}

// Write writes rec to path as indented JSON.
func (rec Record) Write(path string) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode schedule: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write schedule: %w", err)
	}
	return nil
}

// Load reads a schedule file (a run's schedule.json, or one written by
// hand with faults alone) and checks every fault as Parse would.
func Load(path string) (Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Record{}, fmt.Errorf("schedule: %w", err)
	}
	return Decode(b, path)
}

// Decode reads a schedule from b (named name in errors) and checks every
// fault as Parse would: a fault given by its spelling alone ({"spec":
// "pause@grant+5ms:lease+1s"}) is parsed from it.
func Decode(b []byte, name string) (Record, error) {
	var rec Record
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return Record{}, fmt.Errorf("schedule %s: %w", name, err)
	}
	if len(rec.Faults) == 0 {
		return Record{}, fmt.Errorf("schedule %s: no faults (want {\"faults\": [{\"spec\": \"pause@grant+5ms:lease+1s\"}, ...]})", name)
	}
	for i := range rec.Faults {
		a := &rec.Faults[i]
		text := a.Spec
		if a.Kind != "" {
			text = a.Fault.String()
		}
		if text == "" {
			return Record{}, fmt.Errorf("schedule %s: fault %d has neither a kind nor a spec", name, i+1)
		}
		f, err := ParseFault(text)
		if err != nil {
			return Record{}, fmt.Errorf("schedule %s: fault %d: %w", name, i+1, err)
		}
		a.Fault, a.Spec = f, f.String()
	}
	return rec, nil
}
