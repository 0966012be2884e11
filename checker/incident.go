package checker

import (
	"slices"
	"sort"
	"time"
)

// Incident is one failure as a reader tells it: the anomalies that one
// overlap of holders left behind (the double holder, the update it lost,
// the window that is not linearizable, the stale write it made), counted
// once. A run in which three pauses each let a second holder in has three
// incidents, though its checkers report nine anomalies.
type Incident struct {
	// Key is the lock the incident concerns ("" for one of no key).
	Key string `json:"key,omitempty"`
	// Processes are its anomalies' processes, in the order they first
	// appear, the headline's first.
	Processes []int `json:"processes"`
	// Start and End bound its anomalies in time since the test started.
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	// Anomalies are the indices of its anomalies in the list Incidents
	// was given, the headline first, then in the order they were grouped.
	Anomalies []int `json:"anomalies"`
	// Facets counts its anomalies by kind.
	Facets map[string]int `json:"facets"`
	// Fenced is true when every one of its anomalies was made harmless by
	// fencing.
	Fenced bool `json:"fenced,omitempty"`
}

// incidentRank orders the kinds that head an incident: the finding that
// says what went wrong (two holders, sales lost) before the evidence of it
// (a lost update, a window that is not linearizable, a release of another
// holder's key). A kind not listed ranks last.
var incidentRank = []string{"double-holder", "oversold", "lost-decrement", "stock-mismatch", "stale-write", "token-order",
	"lost-update", "foreign-release", "stale-write-rejected", "nonlinearizable"}

// alone are the kinds that are incidents of their own: a lock that no one
// could take says nothing about an overlap.
var alone = map[string]bool{"stuck-lock": true, "no-grants": true}

// Incidents groups anomalies into incidents, ordered by start. Anomalies
// are taken headline kinds first (see incidentRank), each in time order;
// one joins the first incident, by start, of its key whose time span it
// overlaps and with which it shares a process (or which it overlaps at
// all, when it names no process); otherwise it starts an incident of its
// own. A stuck lock and a run with no grants are always incidents of
// their own. The span of an incident grows with what joins it.
func Incidents(anomalies []Anomaly) []Incident {
	order := make([]int, len(anomalies))
	for i := range order {
		order[i] = i
	}
	rank := func(kind string) int {
		if r := slices.Index(incidentRank, kind); r >= 0 {
			return r
		}
		return len(incidentRank)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := anomalies[order[i]], anomalies[order[j]]
		if ra, rb := rank(a.Kind), rank(b.Kind); ra != rb {
			return ra < rb
		}
		return a.Start < b.Start
	})
	var out []Incident
	var solo []bool // out[k] is an incident of its own kind
	for _, i := range order {
		a := anomalies[i]
		k := -1
		if !alone[a.Kind] {
			k = joinable(out, solo, a)
		}
		if k < 0 {
			out = append(out, Incident{Key: a.Key, Start: a.Start, End: a.End, Facets: map[string]int{}, Fenced: true})
			solo = append(solo, alone[a.Kind])
			k = len(out) - 1
		}
		in := &out[k]
		in.Anomalies = append(in.Anomalies, i)
		in.Facets[a.Kind]++
		in.Fenced = in.Fenced && a.Fenced
		in.Start, in.End = min(in.Start, a.Start), max(in.End, a.End)
		for _, p := range a.Processes {
			if !slices.Contains(in.Processes, p) {
				in.Processes = append(in.Processes, p)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// joinable returns the index of the first incident, by start, that a
// joins (see Incidents), or -1; solo marks the incidents none joins.
func joinable(incidents []Incident, solo []bool, a Anomaly) int {
	best := -1
	for k, in := range incidents {
		if solo[k] || in.Key != a.Key || a.Start > in.End || a.End < in.Start {
			continue
		}
		if len(a.Processes) > 0 && !sharesProcess(in.Processes, a.Processes) {
			continue
		}
		if best < 0 || in.Start < incidents[best].Start {
			best = k
		}
	}
	return best
}

// sharesProcess reports whether xs and ys have a process in common.
func sharesProcess(xs, ys []int) bool {
	for _, y := range ys {
		if slices.Contains(xs, y) {
			return true
		}
	}
	return false
}
