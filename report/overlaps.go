package report

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// maxOverlapShades bounds the overlaps shaded on the timeline (each on
// the lanes of its two holders).
const maxOverlapShades = 20000

// maxFlightWorkers is the most workers whose acquires in flight the
// timeline shows by default: with more, every lane carries a waiting
// acquire at every instant, and the lines are noise (a checkbox shows
// them).
const maxFlightWorkers = 5

// overlapShade is one stretch of time on proc's lane during which two
// processes held a lock.
type overlapShade struct {
	from, to time.Duration
	proc     int
}

// doubleHolds returns the acquires of the holds of every double holder
// (the earlier hold each double-holder anomaly names first, and every
// hold granted while it lasted: overlappers), and the shades of the
// double-holder windows: on the earlier holder's lane from the first
// later grant to the last moment another process held the lock with it;
// on the lane of the holder its story names second (the first later
// grant) from that grant to the first of the two holds' ends, exactly as
// long as both held it. The later grants' holds are drawn red each, so
// a shade per grant (tens of thousands in a long run) would add bytes and
// nothing to see.
func doubleHolds(anomalies []checker.Anomaly, hs []holdIv) (map[int]bool, []overlapShade) {
	// Only the holds the anomalies name are looked up, and each key's
	// holds are sorted as indices: a long run has hundreds of thousands,
	// and a map or a copy of them all would be most of what this costs.
	byAcquire := map[int]int{}
	for _, a := range anomalies {
		if a.Kind == "double-holder" && len(a.Ops) > 0 {
			byAcquire[a.Ops[0]] = -1
		}
	}
	for i, h := range hs {
		if _, ok := byAcquire[h.acquire]; ok {
			byAcquire[h.acquire] = i
		}
	}
	dh := make(map[int]bool)
	var out []overlapShade
	byKey := map[string][]int32{} // each key's holds by start
	for i, h := range hs {
		byKey[h.key] = append(byKey[h.key], int32(i))
	}
	for _, ks := range byKey {
		slices.SortStableFunc(ks, func(a, b int32) int { return cmp.Compare(hs[a].start, hs[b].start) })
	}
	done := make(map[int]bool)
	for _, a := range anomalies {
		if a.Kind != "double-holder" || len(a.Ops) == 0 {
			continue
		}
		i := byAcquire[a.Ops[0]]
		if i < 0 || done[i] {
			continue
		}
		done[i] = true
		e := hs[i]
		dh[e.acquire] = true
		ks := byKey[e.key]
		lo := sort.Search(len(ks), func(i int) bool { return hs[ks[i]].start >= e.start })
		hi := lo + sort.Search(len(ks)-lo, func(i int) bool { return hs[ks[lo+i]].start >= e.end })
		between := make([]holdIv, hi-lo)
		for j, k := range ks[lo:hi] {
			between[j] = hs[k]
		}
		later := overlappers(between, e)
		if len(later) == 0 {
			continue
		}
		from, to := later[0].start, time.Duration(0)
		for _, h := range later {
			dh[h.acquire] = true
			to = max(to, min(e.end, h.end))
		}
		h := later[0]
		out = append(out, overlapShade{from: from, to: to, proc: e.proc},
			overlapShade{from: h.start, to: min(e.end, h.end), proc: h.proc})
	}
	return dh, out
}

// targetLanes returns the lanes of the processes a fault struck, nil when
// it struck none that has a lane (a fault of a server, a node or the
// network).
func targetLanes(lm laneMap, targets []int) []int {
	var out []int
	for _, p := range targets {
		if l := lm.lane(p); l >= 0 && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// renderWindows draws each lost-lock window (checker.Window) on its
// holder's hold bar: a thin bar above it for "the server holds it for
// you" (grant to server release), and the window from the server's
// release to when the holder learned, or let go, whose tooltip names the
// accesses made in it.
func renderWindows(b *svgBuf, lm laneMap, hs []holdIv, wins map[int]checker.Window, pairs []history.Pair) {
	if len(wins) == 0 {
		return
	}
	sections := map[int][]history.Pair{}
	for _, pr := range pairs {
		if pr.Invoke.F == history.FCS && pr.Complete != nil {
			sections[pr.Invoke.Process] = append(sections[pr.Invoke.Process], pr)
		}
	}
	b.f(`<g class="lws">`)
	for _, h := range hs {
		w, ok := wins[h.acquire]
		if !ok {
			continue
		}
		l := lm.lane(h.proc)
		if l < 0 {
			continue
		}
		rel := fromSecs(w.Released)
		to := h.end
		if w.Learned != nil {
			to = min(to, max(fromSecs(*w.Learned), rel))
		}
		y := laneTop(l) + 9
		b.f(`<rect class="srv" x="%s" y="%s" width="%s" height="2">`, msNum(h.start), num(y-3), num(max(ms(rel-h.start), 0.01)))
		b.title(fmt.Sprintf("the server held %s for p%d from %s to %s (%s)", h.key, h.proc, secs(h.start), secs(rel), w.How))
		b.f(`</rect>`)
		if to <= rel {
			continue
		}
		var names []string
		for _, pr := range sections[h.proc] {
			if pr.Invoke.Key == h.key && pr.Invoke.Time >= h.start && pr.Invoke.Time < h.end && pr.Complete.Time > rel && pr.Invoke.Time < to &&
				(pr.Type() != history.Fail || pr.Complete.Value != nil && pr.Complete.Value.Ext().Rejected != "") {
				names = append(names, fmt.Sprintf("%s at %s", access{pr: pr}.words(), secs(pr.Complete.Time)))
			}
		}
		b.f(`<rect class="lw" x="%s" y="%s" width="%s" height="12">`, msNum(rel), num(y-1), num(max(ms(to-rel), 0.01)))
		t := fmt.Sprintf("lost-lock window of p%d: the server let %s go at %s; p%d believed it held it until %s (%s), %s: %s",
			h.proc, h.key, secs(rel), h.proc, secs(to), w.LearnedBy, span(to-rel), w.Class)
		if len(names) > 0 {
			t += "; accesses in it: " + strings.Join(names, "; ")
		}
		b.title(t)
		b.f(`</rect>`)
	}
	b.f(`</g>`)
}
