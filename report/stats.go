package report

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// statsFigures is the Stats map of the stats checker (checker.NewStats),
// decoded through JSON so that a result read back from results.json and
// one fresh from the checker read alike.
type statsFigures struct {
	Ops                 int                           `json:"ops"`
	DurationS           float64                       `json:"duration_s"`
	Counts              map[string]map[string]int     `json:"counts"`
	Grants              int                           `json:"grants"`
	Releases            int                           `json:"releases"`
	ReleasedLost        int                           `json:"released_lost"`
	StaleWritesRejected int                           `json:"stale_writes_rejected"`
	Keys                int                           `json:"keys"`
	Processes           int                           `json:"processes"`
	Faults              int                           `json:"faults"`
	Latency             map[string]map[string]float64 `json:"latency_ms"`
}

// statsView is the counts section of the page.
type statsView struct {
	Present bool
	statsFigures
	Fails, Infos int
	Rows         []statsRow
}

// statsRow is one function's counts and latency quantiles (ok ops).
type statsRow struct {
	F                  string
	OK, Fail, Info     int
	P50, P95, P99, Max string
}

// findStats returns the first sub-result of r (depth first) named "stats".
func findStats(r checker.Result) (checker.Result, bool) {
	if r.Checker == "stats" {
		return r, true
	}
	for _, sub := range r.Results {
		if s, ok := findStats(sub); ok {
			return s, true
		}
	}
	return checker.Result{}, false
}

// statsOf returns the counts of the stats sub-result of res; when res has
// none (a result from another composition), it runs the stats checker on
// h, which is cheap.
func statsOf(res checker.Result, h history.History) statsView {
	sr, ok := findStats(res)
	if !ok {
		sr = checker.NewStats().Check(context.Background(), h)
	}
	var v statsView
	b, err := json.Marshal(sr.Stats)
	if err != nil || json.Unmarshal(b, &v.statsFigures) != nil || len(sr.Stats) == 0 {
		return v
	}
	v.Present = true
	fs := make([]string, 0, len(v.Counts))
	for f := range v.Counts {
		fs = append(fs, f)
	}
	slices.SortFunc(fs, func(a, b string) int {
		if ra, rb := funcRank(a), funcRank(b); ra != rb {
			return ra - rb
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	for _, f := range fs {
		c := v.Counts[f]
		row := statsRow{F: f, OK: c["ok"], Fail: c["fail"], Info: c["info"]}
		v.Fails += row.Fail
		v.Infos += row.Info
		if l, ok := v.Latency[f]; ok {
			row.P50, row.P95, row.P99, row.Max = msText(l["p50"]), msText(l["p95"]), msText(l["p99"]), msText(l["max"])
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// funcRank orders functions in the counts table: acquire, cs, release,
// others, crash.
func funcRank(f string) int {
	switch f {
	case history.FAcquire:
		return 0
	case history.FCS:
		return 1
	case history.FRelease:
		return 2
	case history.FCrash:
		return 4
	}
	return 3
}

// msText renders a latency in milliseconds with three significant decimals.
func msText(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
