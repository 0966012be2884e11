package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// A long run's timeline (more plain ok ops than maxMarks) keeps full detail
// only where a reader looks: around the start and end of every anomaly and
// of every fault. There every op and every hold is drawn. Across the rest
// of an anomaly, the ops it names are drawn (as every fail, info and
// crash is), and so is every hold that overlaps a hold it names (the
// holder a double holder outlived, say), however long that hold was: no
// grant made while it was held is left out. Elsewhere each lane shows one
// band per time bucket whose tooltip counts the ok ops and holds it stands
// for; the page says so.

// maxDetail bounds the plain ok ops and holds drawn in full around faults
// and anomalies: the margin around them shrinks until they fit. Ops and
// holds an anomaly names, and the holds that overlap a named hold, are
// drawn whatever the budget.
const maxDetail = 60000

// margins are the margins tried around anomalies and fault edges, widest
// first.
var margins = []time.Duration{time.Second, 500 * time.Millisecond, 250 * time.Millisecond,
	100 * time.Millisecond, 50 * time.Millisecond, 20 * time.Millisecond, 10 * time.Millisecond, 0}

// maxBuckets bounds the summary bands per lane.
const maxBuckets = 300

// interval is a closed span of time.
type interval struct{ from, to time.Duration }

// intervals is a sorted list of disjoint intervals.
type intervals []interval

// mergeIntervals sorts in and merges the intervals that touch.
func mergeIntervals(in []interval) intervals {
	slices.SortFunc(in, func(a, b interval) int {
		switch {
		case a.from < b.from:
			return -1
		case a.from > b.from:
			return 1
		}
		return 0
	})
	var out intervals
	for _, v := range in {
		if n := len(out); n > 0 && v.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, v.to)
			continue
		}
		out = append(out, v)
	}
	return out
}

// overlaps reports whether [a, b] meets one of the intervals.
func (s intervals) overlaps(a, b time.Duration) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].to >= a })
	return i < len(s) && s[i].from <= b
}

// total returns the time the intervals cover.
func (s intervals) total() time.Duration {
	var d time.Duration
	for _, v := range s {
		d += v.to - v.from
	}
	return d
}

// minus returns the parts of [a, b] that no interval covers.
func (s intervals) minus(a, b time.Duration) []interval {
	var out []interval
	i := sort.Search(len(s), func(i int) bool { return s[i].to >= a })
	for ; i < len(s) && s[i].from <= b && a <= b; i++ {
		if s[i].from > a {
			out = append(out, interval{a, s[i].from})
		}
		a = s[i].to
	}
	if a < b {
		out = append(out, interval{a, b})
	}
	return out
}

// summary is the plan of a long run's timeline.
type summary struct {
	detail intervals // plain ok ops and holds drawn in full
	holdIn intervals // named holds: every hold that overlaps one is drawn
	named  map[int]bool
	margin time.Duration
	faults int

	bucket time.Duration
	lanes  [][]bandCount // per lane, per bucket: what was summarized

	opsDrawn, opsAll     int
	holdsDrawn, holdsAll int

	// holderHold are the acquires of the holds of the processes an
	// anomaly names: their holds always have a tooltip.
	holderHold map[int]bool
	titleSeen  int // holds drawn so far, for holdTitle
}

// maxSummaryTitles bounds the tooltips on the other holds drawn in full.
const maxSummaryTitles = 2500

// holdTitle reports whether the next hold drawn in full gets a tooltip:
// one in so many, spread over the run, within maxSummaryTitles.
func (s *summary) holdTitle() bool {
	every := ceilDiv(s.holdsDrawn, maxSummaryTitles)
	s.titleSeen++
	return s.titleSeen%max(every, 1) == 0
}

// bandCount is what one band stands for.
type bandCount struct{ ops, holds int }

// planSummary chooses what a long run's timeline draws in full: the widest
// margin (margins) around the anomalies' spans, the ops they name and the
// fault edges whose plain ok ops and holds fit in maxDetail.
func planSummary(pairs []history.Pair, hs []holdIv, faults []history.Fault, anomalies []checker.Anomaly,
	named map[int]bool, lanes int, end time.Duration) *summary {
	var cores, edges []interval
	for _, a := range anomalies {
		cores = append(cores, interval{a.Start, a.Start}, interval{a.End, a.End})
	}
	var holdIn []interval
	for _, h := range hs {
		if named[h.acquire] {
			holdIn = append(holdIn, interval{h.start, h.end})
		}
	}
	for _, f := range faults {
		edges = append(edges, interval{f.Start, f.Start}, interval{f.End, f.End})
	}
	s := &summary{holdIn: mergeIntervals(holdIn), named: named, faults: len(faults), holderHold: make(map[int]bool)}
	holdOf := make(map[int]int, len(holdIn)) // acquire index -> process
	for _, h := range hs {
		if named[h.acquire] {
			holdOf[h.acquire] = h.proc
		}
	}
	for _, a := range anomalies {
		for _, i := range a.Ops {
			if p, ok := holdOf[i]; ok && slices.Contains(a.Processes, p) {
				s.holderHold[i] = true
			}
		}
	}
	plan := func(m time.Duration) intervals {
		var ivs []interval
		for _, v := range append(slices.Clip(cores), edges...) {
			ivs = append(ivs, interval{max(v.from-m, 0), v.to + m})
		}
		return mergeIntervals(ivs)
	}
	// An op or hold from a to b is drawn in full at margin m when a point
	// (an anomaly's start or end, a fault's edge) lies within m of it, so
	// one pass finds each one's distance to the nearest point and counts,
	// for every margin at once, what it would draw. The widest margin
	// that fits is taken; the narrowest (0) is taken whatever it costs.
	points := make([]time.Duration, 0, len(cores)+len(edges))
	for _, v := range append(slices.Clip(cores), edges...) {
		points = append(points, v.from)
	}
	slices.Sort(points)
	fits := make([]int, len(margins)) // fits[k]: items whose distance is at most margins[k] and more than margins[k+1]
	add := func(a, b time.Duration) {
		if d, ok := nearest(points, a, b); ok {
			if k := narrowestWithin(d); k >= 0 {
				fits[k]++
			}
		}
	}
	for _, pr := range pairs {
		if pr.Type() == history.OK {
			add(pr.Invoke.Time, pr.Returned())
		}
	}
	for _, h := range hs {
		add(h.start, h.end)
	}
	lo, cost := len(margins)-1, 0
	for k := len(margins) - 1; k >= 0; k-- {
		cost += fits[k]
		if cost <= maxDetail {
			lo = k
		}
	}
	s.margin = margins[lo]
	s.detail = plan(s.margin)

	s.bucket = end/maxBuckets + 1
	for _, b := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute} {
		if end/b <= maxBuckets {
			s.bucket = b
			break
		}
	}
	n := int(end/s.bucket) + 1
	s.lanes = make([][]bandCount, lanes)
	for i := range s.lanes {
		s.lanes[i] = make([]bandCount, n)
	}
	return s
}

// narrowestWithin returns the index of the narrowest margin at least d,
// -1 when d is wider than every margin.
func narrowestWithin(d time.Duration) int {
	return sort.Search(len(margins), func(k int) bool { return margins[k] < d }) - 1
}

// nearest returns the distance from [a, b] to the nearest of points
// (sorted), 0 when one lies in it; false when there are none.
func nearest(points []time.Duration, a, b time.Duration) (time.Duration, bool) {
	if len(points) == 0 {
		return 0, false
	}
	i := sort.Search(len(points), func(i int) bool { return points[i] >= a })
	d := time.Duration(math.MaxInt64)
	if i < len(points) {
		d = max(points[i]-b, 0)
	}
	if i > 0 {
		d = min(d, a-points[i-1])
	}
	return d, true
}

// opDetailed reports whether a plain ok op from a to b is drawn in full.
func (s *summary) opDetailed(a, b time.Duration) bool { return s.detail.overlaps(a, b) }

// holdDetailed reports whether h is drawn in full.
func (s *summary) holdDetailed(h holdIv) bool {
	return s.named[h.acquire] || s.holdIn.overlaps(h.start, h.end) || s.detail.overlaps(h.start, h.end)
}

// count fills the bands with the plain ok ops and holds not drawn in full,
// and counts what is drawn.
func (s *summary) count(pairs []history.Pair, hs []holdIv, lm laneMap, end time.Duration) {
	for _, pr := range pairs {
		l := lm.lane(pr.Invoke.Process)
		if l < 0 || !isPlain(pr, s.named) {
			continue
		}
		s.opsAll++
		if s.opDetailed(pr.Invoke.Time, pr.Returned()) {
			s.opsDrawn++
		} else {
			s.band(l, pr.Invoke.Time).ops++
		}
	}
	for _, h := range hs {
		l := lm.lane(h.proc)
		if l < 0 {
			continue
		}
		s.holdsAll++
		if s.holdDetailed(h) {
			s.holdsDrawn++
		} else {
			s.band(l, h.start).holds++
		}
	}
}

// band returns lane l's band at t.
func (s *summary) band(l int, t time.Duration) *bandCount {
	bs := s.lanes[l]
	return &bs[min(int(t/s.bucket), len(bs)-1)]
}

// render draws the bands: for each lane and bucket with something
// summarized, a bar over the bucket's time outside the detail, shaded by
// how much it stands for, with a tooltip counting it.
func (s *summary) render(b *svgBuf, names []string, end time.Duration) {
	top := 1
	for _, bs := range s.lanes {
		for _, c := range bs {
			top = max(top, c.ops+c.holds)
		}
	}
	var rest [4]relPath // the parts after a band's first, per shade
	b.f(`<g class="sum">`)
	for l, bs := range s.lanes {
		y, h := laneTop(l)+3, float64(tlLaneH-6)
		for i, c := range bs {
			if c.ops+c.holds == 0 {
				continue
			}
			from := time.Duration(i) * s.bucket
			shade := 1 + 3*(c.ops+c.holds)/(top+1) // 1..3
			for j, p := range s.detail.minus(from, min(from+s.bucket, end)) {
				w := max(ms(p.to-p.from), 0.01)
				if j > 0 {
					rest[shade].move(ms(p.from), y)
					rest[shade].WriteString("v" + num(h) + "h" + short(round2(w)) + "v-" + num(h) + "z")
					continue
				}
				b.f(`<rect class="sb%d" x="%s" y="%s" width="%s" height="%s">`, shade, msNum(p.from), num(y), num(w), num(h))
				b.title(fmt.Sprintf("%s, %s to %s: %d ok ops, %d holds summarized", names[l], secs(from), secs(from+s.bucket), c.ops, c.holds))
				b.f(`</rect>`)
			}
		}
	}
	for shade, p := range rest {
		if p.Len() > 0 {
			b.f(`<path class="sb%d" d="%s"/>`, shade, p.String())
		}
	}
	b.f(`</g>`)
	// The detail windows, as ticks under the anomalies lane.
	b.f(`<g class="dw">`)
	for _, d := range s.detail {
		b.f(`<rect x="%s" y="%d" width="%s" height="2"/>`, msNum(d.from), 2*tlBandH+3, num(max(ms(d.to-d.from), 0.01)))
	}
	b.f(`</g>`)
}

// note says what was summarized.
func (s *summary) note(end time.Duration) string {
	where := fmt.Sprintf("within %s of each anomaly's and each of the %d faults' start and end", span(s.margin), s.faults)
	if s.margin == 0 {
		where = fmt.Sprintf("at each anomaly's and each of the %d faults' start and end", s.faults)
	}
	return fmt.Sprintf("Summarized to keep the page small: ops and holds are drawn in full %s "+
		"(the dark marks under the anomalies lane: %s of the run's %s); "+
		"so are the ops each anomaly names, and every hold that overlaps a hold an anomaly names, all through it: "+
		"%d of %d ok ops and %d of %d holds are drawn. "+
		"Elsewhere each lane shows one grey band per %s, darker where busier, whose tooltip counts the ok ops and holds it stands for.",
		where, span(s.detail.total()), span(end), s.opsDrawn, s.opsAll, s.holdsDrawn, s.holdsAll, span(s.bucket))
}
