package checker

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// an is an anomaly of kind on key by procs from start to end seconds.
func an(kind, key string, start, end float64, procs ...int) Anomaly {
	return Anomaly{Kind: kind, Key: key, Processes: procs,
		Start: time.Duration(start * float64(time.Second)), End: time.Duration(end * float64(time.Second))}
}

// fenced marks a as fenced.
func fenced(a Anomaly) Anomaly { a.Fenced = true; return a }

// TestIncidents: each case's anomalies group into the incidents listed,
// by their anomaly indices (headline first), processes, span and fencing.
func TestIncidents(t *testing.T) {
	type inc struct {
		anomalies  []int
		processes  []int
		start, end float64
		fenced     bool
	}
	for _, tc := range []struct {
		name string
		in   []Anomaly
		want []inc
	}{
		{"none", nil, nil},
		{"three pauses, three facets each", []Anomaly{
			an("nonlinearizable", "k0", 4.7, 4.8, 3, 5), an("lost-update", "k0", 4.0, 6.7, 3, 5), an("double-holder", "k0", 4.7, 6.7, 3, 5),
			an("double-holder", "k0", 10, 12, 1, 7), an("lost-update", "k0", 9.5, 12.5, 7, 1), an("nonlinearizable", "k0", 10, 10.1, 1, 7),
			an("double-holder", "k0", 20, 22, 2, 9), an("nonlinearizable", "k0", 20, 20.1, 2, 9), an("lost-update", "k0", 19, 23, 2, 9),
		}, []inc{
			{[]int{2, 1, 0}, []int{3, 5}, 4.0, 6.7, false},
			{[]int{3, 4, 5}, []int{1, 7}, 9.5, 12.5, false},
			{[]int{6, 8, 7}, []int{2, 9}, 19, 23, false},
		}},
		{"other key", []Anomaly{an("double-holder", "k0", 1, 2, 1, 2), an("lost-update", "k1", 1, 2, 1, 2)},
			[]inc{{[]int{0}, []int{1, 2}, 1, 2, false}, {[]int{1}, []int{1, 2}, 1, 2, false}}},
		{"same time, no process in common", []Anomaly{an("double-holder", "k0", 1, 2, 1, 2), an("lost-update", "k0", 1, 2, 3)},
			[]inc{{[]int{0}, []int{1, 2}, 1, 2, false}, {[]int{1}, []int{3}, 1, 2, false}}},
		{"no processes named: joins what it overlaps", []Anomaly{an("nonlinearizable", "k0", 1.5, 1.6), an("double-holder", "k0", 1, 2, 1, 2)},
			[]inc{{[]int{1, 0}, []int{1, 2}, 1, 2, false}}},
		{"touching spans join", []Anomaly{an("double-holder", "k0", 1, 2, 1, 2), an("lost-update", "k0", 2, 3, 2)},
			[]inc{{[]int{0, 1}, []int{1, 2}, 1, 3, false}}},
		{"a span that ends as the incident starts joins it", []Anomaly{an("double-holder", "k0", 2, 3, 1, 2), an("lost-update", "k0", 1, 2, 2)},
			[]inc{{[]int{0, 1}, []int{1, 2}, 1, 3, false}}},
		{"of two incidents that start together, the first formed", []Anomaly{an("double-holder", "k0", 1, 3, 1, 2), an("double-holder", "k0", 1, 3, 3, 4),
			an("nonlinearizable", "k0", 2, 2.5)},
			[]inc{{[]int{0, 2}, []int{1, 2}, 1, 3, false}, {[]int{1}, []int{3, 4}, 1, 3, false}}},
		{"of two incidents it overlaps, the one that started first", []Anomaly{an("stale-write", "k0", 1, 4, 1, 2), an("double-holder", "k0", 2, 5, 3, 4),
			an("nonlinearizable", "k0", 3, 3.5)},
			[]inc{{[]int{0, 2}, []int{1, 2}, 1, 4, false}, {[]int{1}, []int{3, 4}, 2, 5, false}}},
		{"of two incidents it overlaps, the first by start, whatever formed first", []Anomaly{an("double-holder", "k0", 1, 4, 1, 2), an("double-holder", "k0", 2, 5, 3, 4),
			an("nonlinearizable", "k0", 3, 3.5)},
			[]inc{{[]int{0, 2}, []int{1, 2}, 1, 4, false}, {[]int{1}, []int{3, 4}, 2, 5, false}}},
		{"disjoint spans do not", []Anomaly{an("double-holder", "k0", 1, 2, 1, 2), an("lost-update", "k0", 2.001, 3, 2)},
			[]inc{{[]int{0}, []int{1, 2}, 1, 2, false}, {[]int{1}, []int{2}, 2.001, 3, false}}},
		{"an earlier span joins and moves the start", []Anomaly{an("lost-update", "k0", 0.5, 1.5, 4, 1), an("double-holder", "k0", 1, 2, 1, 2)},
			[]inc{{[]int{1, 0}, []int{1, 2, 4}, 0.5, 2, false}}},
		{"a stuck lock stands alone", []Anomaly{an("stuck-lock", "k0", 1, 9, 1), an("double-holder", "k0", 2, 3, 1, 2), an("no-grants", "k0", 1, 9)},
			[]inc{{[]int{0}, []int{1}, 1, 9, false}, {[]int{2}, nil, 1, 9, false}, {[]int{1}, []int{1, 2}, 2, 3, false}}},
		{"nothing joins a stuck lock", []Anomaly{an("stuck-lock", "k0", 1, 9, 1), an("lost-update", "k0", 2, 3, 1)},
			[]inc{{[]int{0}, []int{1}, 1, 9, false}, {[]int{1}, []int{1}, 2, 3, false}}},
		{"the earliest of two it could join", []Anomaly{an("double-holder", "k0", 5, 8, 1, 2), an("double-holder", "k0", 1, 6, 3, 1), an("lost-update", "k0", 5.5, 5.6, 1)},
			[]inc{{[]int{1, 0, 2}, []int{3, 1, 2}, 1, 8, false}}},
		{"all fenced", []Anomaly{fenced(an("double-holder", "k0", 1, 2, 1, 2)), fenced(an("stale-write-rejected", "k0", 1, 2, 1))},
			[]inc{{[]int{0, 1}, []int{1, 2}, 1, 2, true}}},
		{"partly fenced", []Anomaly{fenced(an("double-holder", "k0", 1, 2, 1, 2)), an("lost-update", "k0", 1, 2, 1)},
			[]inc{{[]int{0, 1}, []int{1, 2}, 1, 2, false}}},
		{"an unknown kind heads nothing it can join", []Anomaly{an("frobbed", "k0", 1, 2, 1), an("nonlinearizable", "k0", 1, 2, 1)},
			[]inc{{[]int{1, 0}, []int{1}, 1, 2, false}}},
		{"headline by kind, then by time", []Anomaly{an("lost-update", "k0", 1, 4, 1), an("stale-write", "k0", 3, 4, 1), an("token-order", "k0", 2, 4, 1),
			an("oversold", "k0", 1, 4, 1), an("double-holder", "k0", 3.5, 4, 1), an("double-holder", "k0", 2, 4, 1)},
			[]inc{{[]int{5, 4, 3, 1, 2, 0}, []int{1}, 1, 4, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Incidents(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("%d incidents, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				start, end := time.Duration(w.start*float64(time.Second)), time.Duration(w.end*float64(time.Second))
				if !slices.Equal(g.Anomalies, w.anomalies) || !slices.Equal(g.Processes, w.processes) || g.Start != start || g.End != end || g.Fenced != w.fenced {
					t.Errorf("incident %d: %+v, want %+v", i, g, w)
				}
				facets := map[string]int{}
				for _, k := range w.anomalies {
					facets[tc.in[k].Kind]++
				}
				if !maps.Equal(g.Facets, facets) {
					t.Errorf("incident %d facets %v, want %v", i, g.Facets, facets)
				}
				if g.Key != tc.in[w.anomalies[0]].Key {
					t.Errorf("incident %d key %q", i, g.Key)
				}
			}
		})
	}
}

// TestIncidentsOfRealRuns: the anomalies of golden histories of real runs
// make one incident per overlap, the double holder its headline, and the
// composed result says so.
func TestIncidentsOfRealRuns(t *testing.T) {
	for _, tc := range []struct {
		dir    string
		facets map[string]int
	}{
		{"real-redis-set-px-pause", map[string]int{"double-holder": 1, "lost-update": 1, "nonlinearizable": 1}},
		{"session-kill-double-holder", map[string]int{"double-holder": 1, "lost-update": 1, "nonlinearizable": 1}},
		{"redis-zk-pause-double-holder", map[string]int{"double-holder": 1, "nonlinearizable": 2}},
		{"inventory-oversold", map[string]int{"double-holder": 1, "oversold": 1, "nonlinearizable": 1}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			h, err := history.ReadFile(filepath.Join("testdata", "histories", tc.dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			// The composed result carries its incidents.
			r := Default(Options{Timeout: 30 * time.Second}).Check(context.Background(), h)
			got := r.Incidents
			if len(got) != 1 || !maps.Equal(got[0].Facets, tc.facets) || r.Anomalies[got[0].Anomalies[0]].Kind != "double-holder" {
				t.Fatalf("incidents %+v of anomalies %s", got, dump(r.Anomalies))
			}
		})
	}
}
