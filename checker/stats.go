package checker

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// NewStats returns the stats checker, which is always Valid. Its Stats hold:
// "ops" (history length), "duration_s", "counts" (per f, per completion
// type: ok, fail, info), "grants", "releases" (release ok), "released_lost"
// (release ok that found the lock already lost), "stale_writes_rejected",
// "keys", "processes", "faults", and "latency_ms" (per f, over ok
// completions: p50, p95, p99, max, in milliseconds).
func NewStats() Checker { return stats{} }

// stats implements NewStats.
type stats struct{}

// Name returns "stats".
func (stats) Name() string { return "stats" }

// Check checks h.
func (c stats) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// checkAnalysis implements analyzer.
func (c stats) checkAnalysis(_ context.Context, a *analysis) Result {
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	r := newResult(c.Name())
	counts := make(map[string]map[string]int)
	lat := make(map[string][]time.Duration)
	procs := make(map[int]bool)
	keys := make(map[string]bool)
	grants, releases, lost, rejected := 0, 0, 0, 0
	for _, pr := range a.pairs {
		inv := pr.Invoke
		if inv.IsNemesis() {
			continue
		}
		procs[inv.Process] = true
		if inv.Key != "" {
			keys[inv.Key] = true
		}
		t := string(pr.Type())
		if counts[inv.F] == nil {
			counts[inv.F] = make(map[string]int)
		}
		counts[inv.F][t]++
		if pr.Type() != history.OK {
			if inv.F == history.FCS && pr.Type() == history.Fail {
				if v := pr.Value(); v != nil && v.Ext().Rejected != "" {
					rejected++
				}
			}
			continue
		}
		if lat[inv.F] == nil {
			lat[inv.F] = make([]time.Duration, 0, len(a.pairs)/4)
		}
		lat[inv.F] = append(lat[inv.F], pr.Complete.Time-inv.Time)
		switch inv.F {
		case history.FAcquire:
			grants++
		case history.FRelease:
			releases++
			if v := pr.Complete.Value; v != nil && v.Released != nil && !*v.Released {
				lost++
			}
		}
	}
	latency := make(map[string]map[string]float64)
	for f, ds := range lat {
		slices.Sort(ds)
		latency[f] = map[string]float64{
			"p50": ms(quantile(ds, 0.50)),
			"p95": ms(quantile(ds, 0.95)),
			"p99": ms(quantile(ds, 0.99)),
			"max": ms(ds[len(ds)-1]),
		}
	}
	r.Stats["ops"] = len(a.h)
	r.Stats["duration_s"] = math.Round(a.end.Seconds()*1000) / 1000
	r.Stats["counts"] = counts
	r.Stats["grants"] = grants
	r.Stats["releases"] = releases
	r.Stats["released_lost"] = lost
	r.Stats["stale_writes_rejected"] = rejected
	r.Stats["keys"] = len(keys)
	r.Stats["processes"] = len(procs)
	r.Stats["faults"] = len(a.getFaults())
	r.Stats["latency_ms"] = latency
	return r
}

// quantile returns the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ms renders a duration in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/1e3) / 1e3
}
