package report

import (
	"cmp"
	"math"
	"math/rand"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TestIntervals checks merging, overlap, coverage and subtraction.
func TestIntervals(t *testing.T) {
	s := mergeIntervals([]interval{{5, 7}, {1, 2}, {2, 3}, {6, 9}, {20, 20}})
	want := intervals{{1, 3}, {5, 9}, {20, 20}}
	if !slices.Equal(s, want) {
		t.Fatalf("merged %v, want %v", s, want)
	}
	for _, c := range []struct {
		a, b time.Duration
		want bool
	}{{0, 0, false}, {0, 1, true}, {3, 4, true}, {4, 4, false}, {4, 5, true}, {9, 19, true}, {10, 19, false}, {20, 30, true}, {21, 30, false}} {
		if got := s.overlaps(c.a, c.b); got != c.want {
			t.Errorf("overlaps(%d, %d) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if d := s.total(); d != 6 {
		t.Errorf("total %d, want 6", d)
	}
	for _, c := range []struct {
		a, b time.Duration
		want []interval
	}{
		{0, 30, []interval{{0, 1}, {3, 5}, {9, 20}, {20, 30}}},
		{2, 6, []interval{{3, 5}}},
		{5, 9, nil},
		{10, 12, []interval{{10, 12}}},
	} {
		if got := s.minus(c.a, c.b); !slices.Equal(got, c.want) {
			t.Errorf("minus(%d, %d) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestRelPath checks that relative pieces land where absolute ones would.
func TestRelPath(t *testing.T) {
	var p relPath
	p.move(10.004, 5)
	p.hline(0.5)
	p.move(10.75, 33)
	p.hline(2)
	p.move(1, 5)
	if got, want := p.String(), "m10 5h.5m.25 28h2m-11.75-28"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
	if short(-0.25) != "-.25" || short(3) != "3" || short(0.5) != ".5" {
		t.Errorf("short: %q %q %q", short(-0.25), short(3), short(0.5))
	}
}

// TestReportSummarized checks a run far past the budgets: the timeline
// says what it summarized, every hold that overlaps a hold an anomaly
// names is drawn, every fail and info op keeps its mark, and the page
// stays small.
func TestReportSummarized(t *testing.T) {
	h := synthHistory(6, 10, 600*time.Second)
	res := check(t, h, false)
	if len(res.Anomalies) == 0 {
		t.Fatal("the synthetic history has no anomaly")
	}
	_, page := writeReport(t, Input{Meta: Meta{Name: "long", Workers: 10}, History: h, Result: res})
	t.Logf("%d ops, %d anomalies: %d bytes", len(h), len(res.Anomalies), len(page))
	if !strings.Contains(page, "Summarized to keep the page small") {
		t.Fatal("no note on what was summarized")
	}
	if len(page) >= 5<<20 {
		t.Errorf("report is %d bytes, want < 5 MiB", len(page))
	}
	if !regexp.MustCompile(`<rect class="sb\d"[^>]*><title>slot \d+, [0-9.]+ s to [0-9.]+ s: \d+ ok ops, \d+ holds summarized</title>`).MatchString(page) {
		t.Error("no summary band with its counts")
	}

	pairs, err := h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	end := historyEnd(h)
	hs := holds(pairs, end)
	named := make(map[int]bool)
	for _, a := range res.Anomalies {
		for _, i := range a.Ops {
			named[i] = true
		}
	}
	lm := newLaneMap(10, pairs)
	sm := planSummary(pairs, hs, h.Faults(), sortedAnomalies(res.Anomalies), named, len(lm.procs), end)
	sm.count(pairs, hs, lm, end)
	var namedHolds []holdIv
	for _, x := range hs {
		if named[x.acquire] {
			namedHolds = append(namedHolds, x)
		}
	}
	if len(namedHolds) == 0 {
		t.Fatal("no anomaly names a hold")
	}
	for _, x := range hs {
		for _, n := range namedHolds {
			if x.start <= n.end && n.start <= x.end && !sm.holdDetailed(x) {
				t.Fatalf("hold of p%d from %s to %s overlaps the named hold of p%d and is not drawn", x.proc, x.start, x.end, n.proc)
			}
		}
	}
	for _, a := range res.Anomalies {
		if !sm.detail.overlaps(a.Start, a.Start) || !sm.detail.overlaps(a.End, a.End) {
			t.Errorf("%s from %s to %s: its start or end is not in the detail", a.Kind, a.Start, a.End)
		}
	}
	for _, f := range h.Faults() {
		if !sm.detail.overlaps(f.Start, f.Start) || !sm.detail.overlaps(f.End, f.End) {
			t.Errorf("fault %s from %s to %s: its start or end is not in the detail", f.F, f.Start, f.End)
		}
	}
	if sm.opsDrawn >= sm.opsAll || sm.holdsDrawn >= sm.holdsAll || sm.holdsDrawn == 0 {
		t.Errorf("drew %d of %d ok ops and %d of %d holds: nothing summarized", sm.opsDrawn, sm.opsAll, sm.holdsDrawn, sm.holdsAll)
	}
	banded := 0
	for _, bs := range sm.lanes {
		for _, c := range bs {
			banded += c.ops + c.holds
		}
	}
	if banded != sm.opsAll-sm.opsDrawn+sm.holdsAll-sm.holdsDrawn {
		t.Errorf("bands count %d, want every op and hold not drawn (%d)", banded, sm.opsAll-sm.opsDrawn+sm.holdsAll-sm.holdsDrawn)
	}
	assertFailMarks(t, h, page)
}

// TestPlanSummaryMargin checks the margin planSummary picks against the
// plain search: the widest margin whose intervals around the points meet
// at most maxDetail ok ops and holds, found by testing every op and hold
// against the merged intervals of each margin.
func TestPlanSummaryMargin(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewSource(seed))
		// Ops of 0.2-2 ms, one after another on four processes, over a
		// minute: about 80,000 ok ops, some failed.
		var h history.History
		for p := 0; p < 4; p++ {
			for at := time.Duration(rng.Intn(1000)) * time.Microsecond; at < time.Minute; {
				d := time.Duration(200+rng.Intn(1800)) * time.Microsecond
				typ := history.OK
				if rng.Intn(10) == 0 {
					typ = history.Fail
				}
				h = append(h, history.Op{Time: at, Process: p, Type: history.Invoke, F: history.FCS, Key: "k0"},
					history.Op{Time: at + d, Process: p, Type: typ, F: history.FCS, Key: "k0"})
				at += d + time.Duration(rng.Intn(3000))*time.Microsecond
			}
		}
		slices.SortStableFunc(h, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) })
		for i := range h {
			h[i].Index = i
		}
		pairs, err := h.Pairs()
		if err != nil {
			t.Fatal(err)
		}
		var hs []holdIv
		for i := 0; i < 3000; i++ {
			a := time.Duration(rng.Int63n(int64(time.Minute)))
			hs = append(hs, holdIv{proc: rng.Intn(4), start: a, end: a + time.Duration(rng.Intn(5000))*time.Microsecond})
		}
		// From none to many points: the margin runs from the widest to 0.
		var anomalies []checker.Anomaly
		for i := 0; i < int(seed*seed*seed); i++ {
			a := time.Duration(rng.Int63n(int64(time.Minute)))
			anomalies = append(anomalies, checker.Anomaly{Kind: "double-holder", Start: a, End: a + time.Duration(rng.Intn(100))*time.Millisecond})
		}
		var faults []history.Fault
		for i := 0; i < int(seed); i++ {
			a := time.Duration(rng.Int63n(int64(time.Minute)))
			faults = append(faults, history.Fault{F: "pause", Start: a, End: a + 3*time.Second})
		}
		sm := planSummary(pairs, hs, faults, anomalies, map[int]bool{}, 4, time.Minute)

		want := len(margins) - 1
		for k, m := range margins {
			var ivs []interval
			for _, a := range anomalies {
				ivs = append(ivs, interval{max(a.Start-m, 0), a.Start + m}, interval{max(a.End-m, 0), a.End + m})
			}
			for _, f := range faults {
				ivs = append(ivs, interval{max(f.Start-m, 0), f.Start + m}, interval{max(f.End-m, 0), f.End + m})
			}
			d := mergeIntervals(ivs)
			n := 0
			for _, pr := range pairs {
				if pr.Type() == history.OK && d.overlaps(pr.Invoke.Time, pr.Returned()) {
					n++
				}
			}
			for _, x := range hs {
				if d.overlaps(x.start, x.end) {
					n++
				}
			}
			if n <= maxDetail {
				want = k
				break
			}
		}
		if sm.margin != margins[want] {
			t.Errorf("seed %d (%d anomalies, %d faults): margin %s, want %s", seed, len(anomalies), len(faults), sm.margin, margins[want])
		}
	}
}

// TestNearestAndNarrowestWithin checks the distance from a span to the
// nearest point, and the margins a distance fits, at their edges.
func TestNearestAndNarrowestWithin(t *testing.T) {
	ms := time.Millisecond
	points := []time.Duration{10 * ms, 20 * ms, 40 * ms}
	for _, c := range []struct {
		a, b, want time.Duration
	}{
		{0, 1 * ms, 9 * ms},        // before the first point
		{0, 10 * ms, 0},            // touching it
		{12 * ms, 13 * ms, 2 * ms}, // nearer the point before
		{17 * ms, 18 * ms, 2 * ms}, // nearer the point after
		{11 * ms, 39 * ms, 0},      // around a point
		{45 * ms, 50 * ms, 5 * ms}, // after the last
		{40 * ms, 40 * ms, 0},      // on it
	} {
		if got, ok := nearest(points, c.a, c.b); !ok || got != c.want {
			t.Errorf("nearest(%s, %s) = %s, %v; want %s", c.a, c.b, got, ok, c.want)
		}
	}
	if _, ok := nearest(nil, 0, ms); ok {
		t.Error("nearest of no points is a distance")
	}
	last := len(margins) - 1
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{0, last},
		{1, last - 1},
		{margins[3], 3},
		{margins[3] + 1, 2},
		{margins[0], 0},
		{margins[0] + 1, -1},
	} {
		if got := narrowestWithin(c.d); got != c.want {
			t.Errorf("narrowestWithin(%s) = %d, want %d", c.d, got, c.want)
		}
	}
}

// TestSegmentsPath checks that the holds' path, drawn lane by lane, has
// each segment where it was given (to a tenth, a width at least that),
// and moves along a lane between two segments of it.
func TestSegmentsPath(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var segs []segment
	want := map[[3]int64]int{}
	for i := range 500 {
		s := segment{x: rng.Float64() * 5000, y: float64(rng.Intn(8)*28 + 14), w: rng.Float64()*3 + 0.01}
		if i%50 == 0 {
			s.x, s.w = float64(i), 0.01 // a bar narrower than a tenth, at a whole millisecond
		}
		segs = append(segs, s)
		want[[3]int64{int64(math.Round(s.x * 10)), int64(s.y), max(int64(math.Round(s.w*10)), 1)}]++
	}
	d := segmentsPath(slices.Clone(segs))
	re := regexp.MustCompile(`m(-?\d*\.?\d+) ?(-?\d*\.?\d+)h(\d*\.?\d+)`)
	ms := re.FindAllStringSubmatch(d, -1)
	if len(ms) != len(segs) || strings.Join(re.Split(d, -1), "") != "" {
		t.Fatalf("%d segments parsed from a path of %d, or text between them", len(ms), len(segs))
	}
	tenth := func(s string) int64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return int64(math.Round(f * 10))
	}
	x, y := int64(0), 0.0
	moves := 0
	for _, m := range ms {
		dy, _ := strconv.ParseFloat(m[2], 64)
		x, y = x+tenth(m[1]), y+dy
		if dy != 0 {
			moves++
		}
		k := [3]int64{x, int64(y), tenth(m[3])}
		if want[k] == 0 {
			t.Fatalf("segment %v (tenths) was not given", k)
		}
		want[k]--
		x += k[2]
	}
	if moves > 8 {
		t.Errorf("%d moves across lanes for 8 lanes: not drawn lane by lane", moves)
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {3, ".3"}, {-3, "-.3"}, {12, "1.2"}, {-12, "-1.2"}, {20, "2"}, {-20, "-2"}, {105, "10.5"}} {
		if got := tenths(c.n); got != c.want {
			t.Errorf("tenths(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
