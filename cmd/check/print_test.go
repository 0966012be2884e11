package main

import (
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// TestAnomalyCounts: the summary line counts anomalies by kind and says
// how many incidents they make, as the composed result groups them.
func TestAnomalyCounts(t *testing.T) {
	at := func(kind string, s float64, fenced bool, procs ...int) checker.Anomaly {
		d := time.Duration(s * float64(time.Second))
		return checker.Anomaly{Kind: kind, Key: "k0", Processes: procs, Start: d, End: d + time.Second, Fenced: fenced}
	}
	pause := func(s float64, procs ...int) []checker.Anomaly {
		return []checker.Anomaly{at("double-holder", s, false, procs...), at("lost-update", s, false, procs...), at("nonlinearizable", s, false, procs...)}
	}
	three := append(append(pause(1, 1, 2), pause(5, 3, 4)...), pause(9, 5, 6)...)
	for _, tc := range []struct {
		name      string
		anomalies []checker.Anomaly
		want      string
	}{
		{"none", nil, "no anomalies"},
		{"one pause", pause(1, 1, 2), "1 double-holder, 1 lost-update, 1 nonlinearizable in 1 incident"},
		{"three pauses", three, "3 double-holder, 3 lost-update, 3 nonlinearizable in 3 incidents"},
		{"fenced", []checker.Anomaly{at("double-holder", 1, true, 1, 2), at("stale-write-rejected", 1, true, 1)},
			"1 double-holder (fenced), 1 stale-write-rejected (fenced) in 1 incident"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checker.Result{Anomalies: tc.anomalies, Incidents: checker.Incidents(tc.anomalies)}
			if got := anomalyCounts(res); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}
