package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// Timeline geometry, in CSS pixels of the outer SVG (which scales to the
// page width). The plot area is a nested SVG whose x axis is time in
// milliseconds; the zoom script changes only its viewBox.
const (
	tlWidth  = 1200
	tlLabelW = 112
	tlPlotW  = tlWidth - tlLabelW - 8
	tlAxisH  = 22 // tick labels above the plot
	tlBandH  = 16 // the faults and anomalies lanes
	tlLaneH  = 28 // one worker lane
	tlLanes0 = 2*tlBandH + 8
)

// Budgets that keep a long run's page small (a 60 s, 10-worker run has about
// 12 000 ops and 4 000 holds).
const (
	// maxMarks bounds the ops drawn at all; past it only a sample of ok ops
	// is drawn, and every fail, info and crash.
	maxMarks = 60000
	// maxHover bounds the ops drawn as separate elements with a hover
	// tooltip: every fail, info and crash, the ops anomalies name, and a
	// sample of ok ops. The other ops are drawn in one path per class.
	maxHover = 5000
	// maxHoldRects bounds the holds with a tooltip; the rest are drawn in a
	// path.
	maxHoldRects = 8000
	// maxBands bounds the anomaly markers drawn.
	maxBands = 500
)

// timelineOut is the rendered timeline.
type timelineOut struct {
	SVG   template.HTML
	Lanes string // how lanes are laid out, for the caption
	Note  string // what was thinned out, if anything
}

// holdIv is one hold: from an acquire ok to the holder's next release
// invoke or crash invoke, or the end of the history (as the overlap checker
// defines it).
type holdIv struct {
	proc       int
	key        string
	start, end time.Duration
	acquire    int // history index of the acquire ok
	token      int64
	owner      string
	nodes      []string // the lock nodes that granted it (RedLock)
	endedBy    string
}

// holds computes the hold intervals of pairs (in invocation order).
func holds(pairs []history.Pair, end time.Duration) []holdIv {
	n := 0
	for _, pr := range pairs {
		if pr.Invoke.F == history.FAcquire && pr.Type() == history.OK {
			n++
		}
	}
	out := make([]holdIv, 0, n)
	open := make(map[int][]int) // process -> indices into out
	closeHolds := func(p int, key string, at time.Duration, by string) {
		keep := open[p][:0]
		for _, i := range open[p] {
			if key != "" && out[i].key != key {
				keep = append(keep, i)
				continue
			}
			out[i].end, out[i].endedBy = at, by
		}
		open[p] = keep
	}
	for _, pr := range pairs {
		inv := pr.Invoke
		switch inv.F {
		case history.FAcquire:
			if pr.Type() != history.OK {
				continue
			}
			h := holdIv{proc: inv.Process, key: inv.Key, start: pr.Complete.Time, end: end,
				acquire: pr.Complete.Index, endedBy: "the end of the history"}
			if v := pr.Value(); v != nil {
				h.token, h.owner, h.nodes = v.Token, v.Owner, v.Ext().Nodes
			}
			open[inv.Process] = append(open[inv.Process], len(out))
			out = append(out, h)
		case history.FRelease:
			closeHolds(inv.Process, inv.Key, inv.Time, "its release")
		case history.FCrash:
			closeHolds(inv.Process, "", inv.Time, "a crash")
		}
	}
	return out
}

// laneMap assigns processes to lanes.
type laneMap struct {
	workers int         // > 0: lane = process % workers
	index   map[int]int // workers == 0: lane per process
	procs   [][]int     // processes of each lane, in order
}

// newLaneMap lays out the processes of pairs: by worker slot when workers >
// 0, else one lane per process.
func newLaneMap(workers int, pairs []history.Pair) laneMap {
	var ps []int
	seen := make(map[int]bool)
	for _, pr := range pairs {
		if p := pr.Invoke.Process; p >= 0 && !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	m := laneMap{workers: workers}
	if workers > 0 {
		m.procs = make([][]int, workers)
		for _, p := range ps {
			m.procs[p%workers] = append(m.procs[p%workers], p)
		}
		return m
	}
	m.index = make(map[int]int, len(ps))
	for i, p := range ps {
		m.index[p] = i
		m.procs = append(m.procs, []int{p})
	}
	return m
}

// lane returns p's lane, -1 for the nemesis or an unknown process.
func (m laneMap) lane(p int) int {
	if p < 0 {
		return -1
	}
	if m.workers > 0 {
		return p % m.workers
	}
	if i, ok := m.index[p]; ok {
		return i
	}
	return -1
}

// laneTop returns the y of lane i's top in plot coordinates.
func laneTop(i int) float64 { return float64(tlLanes0 + i*tlLaneH) }

// opClass returns the CSS class of an op mark: the function when it
// completed ok, else its completion type.
func opClass(pr history.Pair) string {
	switch pr.Type() {
	case history.Fail:
		return "f"
	case history.Info:
		return "i"
	}
	switch pr.Invoke.F {
	case history.FAcquire:
		return "a"
	case history.FCS:
		return "c"
	case history.FRelease:
		return "r"
	}
	return "o"
}

// opRow returns the y offset in its lane of an op's mark.
func opRow(f string) float64 {
	switch f {
	case history.FAcquire:
		return 5
	case history.FCS:
		return 14
	}
	return 23
}

// opTitle describes an op for its tooltip.
func opTitle(pr history.Pair) string {
	inv := pr.Invoke
	var b strings.Builder
	fmt.Fprintf(&b, "p%d %s", inv.Process, inv.F)
	if inv.Key != "" {
		b.WriteString(" " + inv.Key)
	}
	if pr.Complete == nil {
		fmt.Fprintf(&b, " never completed: invoked %s", secs(inv.Time))
	} else {
		fmt.Fprintf(&b, " %s: %s → %s (%s)", pr.Complete.Type, secs(inv.Time), secs(pr.Complete.Time),
			span(pr.Complete.Time-inv.Time))
	}
	if v := pr.Value(); v != nil {
		if v.Token != 0 {
			fmt.Fprintf(&b, ", token %d", v.Token)
		}
		if v.Read != nil {
			fmt.Fprintf(&b, ", read %d", *v.Read)
		}
		if v.Wrote != nil {
			fmt.Fprintf(&b, ", wrote %d", *v.Wrote)
		}
		if v.Ext().Rejected != "" {
			fmt.Fprintf(&b, ", %s rejected (max token %d)", v.Ext().Rejected, v.Ext().MaxToken)
		}
		if v.Released != nil && !*v.Released {
			b.WriteString(", the lock was already lost")
		}
		if v.Ext().DeletedOwner != "" {
			fmt.Fprintf(&b, ", deleted %s's key", v.Ext().DeletedOwner)
		}
	}
	if pr.Complete != nil && pr.Complete.Error != "" {
		b.WriteString(", error: " + pr.Complete.Error)
	}
	fmt.Fprintf(&b, " [op %d]", inv.Index)
	return b.String()
}

// renderTimeline draws one lane per worker slot (or process), the holds as
// bars, every op as a mark, every event (history.FEvent) as a tick, fault
// windows as bands across all lanes, and anomalies in a lane of their own,
// with double holders highlighted on the lanes of their processes.
// anomalies are in page order; ids maps their positions to paragraph ids.
func renderTimeline(workers int, pairs []history.Pair, hs []holdIv, events []history.Op, faults []history.Fault, end time.Duration,
	anomalies []checker.Anomaly, ids map[int]string, wins map[int]checker.Window, tokens checker.TokenKind, nodes []string, rels []nodeRelease) timelineOut {
	lm := newLaneMap(workers, pairs)
	firstNode := len(lm.procs)
	var out timelineOut
	if workers > 0 {
		out.Lanes = fmt.Sprintf("One lane per worker slot (process %% %d): a process that is retired after an info is replaced by process + %d in the same lane.", workers, workers)
	} else {
		out.Lanes = "One lane per process."
	}
	T := ms(end)
	ph := laneTop(len(lm.procs)+len(nodes)) + 2
	height := tlAxisH + ph + 4

	var b svgBuf
	b.Grow(1 << 20)
	svgClass := "tl"
	if workers > maxFlightWorkers {
		svgClass += " noq"
	}
	b.f(`<svg id="tl" class="%s" viewBox="0 0 %d %s" data-end="%s" data-lx="%d" data-pw="%d" data-ah="%d" data-ph="%s" role="img" aria-label="timeline">`,
		svgClass, tlWidth, num(height), num(T), tlLabelW, tlPlotW, tlAxisH, num(ph))
	// Lane stripes and labels (outside the zoomed plot).
	names := make([]string, len(lm.procs))
	b.f(`<g class="lanes">`)
	b.f(`<text x="%d" y="%s">faults</text>`, tlLabelW-6, num(tlAxisH+tlBandH-4))
	b.f(`<text x="%d" y="%s">anomalies</text>`, tlLabelW-6, num(tlAxisH+2*tlBandH-2))
	for i, ps := range lm.procs {
		y := tlAxisH + laneTop(i)
		if i%2 == 0 {
			b.f(`<rect x="%d" y="%s" width="%d" height="%d"/>`, tlLabelW, num(y), tlPlotW, tlLaneH)
		}
		name := fmt.Sprintf("p%d", ps0(ps, i))
		if workers > 0 {
			name = fmt.Sprintf("slot %d", i)
		}
		names[i] = name
		b.f(`<text x="%d" y="%s">%s`, tlLabelW-6, num(y+tlLaneH/2+4), name)
		if len(ps) > 0 {
			b.title("processes " + joinInts(ps, ", "))
		}
		b.f(`</text>`)
	}
	for i, n := range nodes {
		y := tlAxisH + laneTop(firstNode+i)
		if (firstNode+i)%2 == 0 {
			b.f(`<rect x="%d" y="%s" width="%d" height="%d"/>`, tlLabelW, num(y), tlPlotW, tlLaneH)
		}
		b.f(`<text x="%d" y="%s">node %s<title>what lock node %s granted, and when it let go</title></text>`, tlLabelW-6, num(y+tlLaneH/2+4), n, n)
	}
	b.f(`</g>`)
	// The time axis: ticks for the whole run; the script redraws them on zoom.
	b.f(`<g id="tl-axis" class="axis">`)
	step := niceStep(T/1000, 12)
	for t := 0.0; t <= T/1000+1e-9; t += step {
		x := tlLabelW + t*1000/T*tlPlotW
		b.f(`<line x1="%s" x2="%s" y1="%d" y2="%s"/><text x="%s" y="14">%s</text>`,
			num(x), num(x), tlAxisH-4, num(height-4), num(x), tickLabel(t, step))
	}
	b.f(`</g>`)

	b.f(`<svg id="tl-plot" x="%d" y="%d" width="%d" height="%s" viewBox="0 0 %s %s" preserveAspectRatio="none">`,
		tlLabelW, tlAxisH, tlPlotW, num(ph), num(T), num(ph))
	// Fault windows: a band on the lanes of the processes the fault
	// struck (across every lane for one that struck a server, a node or
	// the network), and a bar in the faults lane.
	for _, f := range faults {
		x, w := ms(f.Start), max(ms(f.End-f.Start), 0.01)
		desc := faultText(f)
		cls := fmt.Sprintf("fb-%s fk-%s", faultClass(f.F), f.F)
		ls := targetLanes(lm, f.Targets)
		if len(ls) == 0 {
			ls = nodeLanes(nodes, firstNode, f.Nodes)
		}
		if len(ls) > 0 {
			for _, l := range ls {
				b.f(`<rect class="fb %s" data-lane="%d" x="%s" y="%s" width="%s" height="%d"/>`, cls, l, num(x), num(laneTop(l)), num(w), tlLaneH)
			}
		} else {
			b.f(`<rect class="fb %s" x="%s" y="0" width="%s" height="%s"/>`, cls, num(x), num(w), num(ph))
		}
		b.f(`<rect class="fl %s" x="%s" y="1" width="%s" height="%d">`, cls, num(x), num(w), tlBandH-2)
		b.title(desc)
		b.f(`</rect>`)
	}
	// Double holders: every grant made while an earlier holder still held
	// the lock is drawn red (however many: an anomaly lists only the first
	// of its ops), and each overlap is shaded, on the lanes of both
	// holders, for exactly as long as it lasted.
	anomalyOps := make(map[int]bool)
	for _, a := range anomalies {
		for _, i := range a.Ops {
			anomalyOps[i] = true
		}
	}
	dhOps, overlaps := doubleHolds(anomalies, hs)
	var shade relPath // one path of boxes: a long run has tens of thousands
	for i, o := range overlaps {
		if i >= maxOverlapShades {
			break
		}
		if l := lm.lane(o.proc); l >= 0 {
			shade.move(ms(o.from), laneTop(l))
			w := round2(max(ms(o.to-o.from), 0.01))
			shade.WriteString("h" + short(w) + "v" + num(tlLaneH) + "h-" + short(w) + "z")
		}
	}
	if shade.Len() > 0 {
		b.f(`<path class="dh" d="%s"/>`, shade.String())
	}
	// Ops: every op is a mark from invoke to completion in its function's
	// row. The notable ones (fail, info, crash, or named by an anomaly) are
	// drawn first and get a tooltip; plain ok ops fill the rest of the
	// budgets: they are drawn in one path per class, a sample of them with
	// a tooltip.
	var okCount, notable int
	for _, pr := range pairs {
		if !pr.Invoke.IsNemesis() {
			if isPlain(pr, anomalyOps) {
				okCount++
			} else {
				notable++
			}
		}
	}
	notableEvery := max(1, ceilDiv(notable, maxMarks/2))
	notableDrawn := ceilDiv(notable, notableEvery)
	markEvery := 1
	if okCount+notableDrawn > maxMarks {
		markEvery = ceilDiv(okCount, maxMarks-notableDrawn)
	}
	sampleEvery := 0 // every sampleEvery-th drawn ok op has a tooltip; 0: none
	if room := maxHover - notableDrawn; room > 0 && okCount > 0 {
		sampleEvery = max(1, ceilDiv(okCount/markEvery, room))
	}
	// A long run: full detail around faults and anomalies, bands elsewhere
	// (summarize.go), in place of a sample of the ok ops.
	var sm *summary
	if okCount+notableDrawn > maxMarks {
		sm = planSummary(pairs, hs, faults, anomalies, anomalyOps, len(lm.procs), end)
		sm.count(pairs, hs, lm, end)
		sm.render(&b, names, end)
		markEvery, sampleEvery = 1, 0
		if room := maxHover - notableDrawn; room > 0 && sm.opsDrawn > 0 {
			sampleEvery = max(1, ceilDiv(sm.opsDrawn, room))
		}
	}
	// Holds.
	var holdSegs [2][]segment // normal, double holder
	holdTitled := 0
	for i, h := range hs {
		l := lm.lane(h.proc)
		if l < 0 || (sm != nil && !sm.holdDetailed(h)) {
			continue
		}
		cls := ""
		if dhOps[h.acquire] {
			cls = " x"
		}
		x, w, y := ms(h.start), max(ms(h.end-h.start), 0.01), laneTop(l)+9
		titled := i < maxHoldRects
		if sm != nil {
			// The holders' holds, and a share of the others spread over
			// the run.
			titled = sm.holderHold[h.acquire] || sm.holdTitle()
		}
		if titled {
			holdTitled++
			b.f(`<rect class="h%s" x="%s" y="%s" width="%s" height="10">`, cls, num(x), num(y), num(w))
			t := fmt.Sprintf("p%d held %s", h.proc, h.key)
			if h.token != 0 {
				t += " (" + tokens.Token(h.token) + ")"
			}
			b.title(fmt.Sprintf("%s from %s to %s (%s), until %s", t, secs(h.start), secs(h.end), span(h.end-h.start), h.endedBy))
			b.f(`</rect>`)
			continue
		}
		k := 0
		if cls != "" {
			k = 1
		}
		holdSegs[k] = append(holdSegs[k], segment{x, y + 5, w})
	}
	for k, cls := range []string{"hp", "hp x"} {
		if len(holdSegs[k]) > 0 {
			b.f(`<path class="%s" d="%s"/>`, cls, segmentsPath(holdSegs[k]))
		}
	}
	renderWindows(&b, lm, hs, wins, pairs)
	renderNodeLanes(&b, nodes, firstNode, hs, func(h holdIv) bool { return sm == nil || sm.holdDetailed(h) }, rels)

	paths := make(map[string]*relPath)
	var classes []string
	hover, okSeen, okDrawn, notableSeen, notableTitled := 0, 0, 0, 0, 0
	for _, pr := range pairs {
		inv := pr.Invoke
		l := lm.lane(inv.Process)
		if l < 0 {
			continue
		}
		plain := isPlain(pr, anomalyOps)
		titled := false
		if plain {
			if sm != nil && !sm.opDetailed(inv.Time, pr.Returned()) {
				continue
			}
			if okSeen++; okSeen%markEvery != 0 {
				continue
			}
			okDrawn++
			titled = sampleEvery > 0 && okDrawn%sampleEvery == 0 && hover < maxHover
		} else {
			if notableSeen++; notableSeen%notableEvery != 0 {
				continue
			}
			titled = hover < maxHover
			if titled {
				notableTitled++
			}
		}
		x1 := ms(inv.Time)
		x2 := T
		if pr.Complete != nil {
			x2 = ms(pr.Complete.Time)
		}
		cls := opClass(pr)
		y, w := laneTop(l)+opRow(inv.F), max(x2-x1, 0.01)
		if inv.F == history.FCrash {
			cls, y = "k", laneTop(l)+2
		}
		if inv.F == history.FAcquire && pr.Type() != history.Info {
			// An acquire in flight (waiting for the lock, then granted or
			// failed): hidden by default with many workers; one in doubt
			// stays.
			cls += " q"
		}
		if titled {
			d := fmt.Sprintf("M%s %sh%s", num(x1), num(y), num(w))
			if cls == "k" {
				d = fmt.Sprintf("M%s %sv24", num(x1), num(y))
			}
			b.f(`<path class="%s" d="%s">`, cls, d)
			b.title(opTitle(pr))
			b.f(`</path>`)
			hover++
			continue
		}
		pb := paths[cls]
		if pb == nil {
			pb = &relPath{}
			paths[cls] = pb
			classes = append(classes, cls)
		}
		pb.move(x1, y)
		if cls == "k" {
			pb.WriteString("v24")
			pb.y += 24
		} else {
			pb.hline(w)
		}
	}
	slices.Sort(classes)
	for _, c := range classes {
		b.f(`<path class="%s" d="%s"/>`, c, paths[c].String())
	}
	// Events a lock client reported on its own (a ZooKeeper session
	// expiry, say): a tick across the lane.
	var quiet svgBuf
	for i, ev := range events {
		l := lm.lane(ev.Process)
		if l < 0 {
			continue
		}
		d := fmt.Sprintf("M%s %sv24", msNum(ev.Time), num(laneTop(l)+2))
		if i >= maxHover {
			quiet.WriteString(d)
			continue
		}
		b.f(`<path class="e" d="%s">`, d)
		t := fmt.Sprintf("p%d event at %s", ev.Process, secs(ev.Time))
		if v := ev.Value; v != nil && v.Ext().Detail != "" {
			t += ": " + v.Ext().Detail
		}
		b.title(t + fmt.Sprintf(" [op %d]", ev.Index))
		b.f(`</path>`)
	}
	if quiet.Len() > 0 {
		b.f(`<path class="e" d="%s"/>`, quiet.String())
	}
	// Anomalies lane, each marker a link to its paragraph.
	for i, a := range anomalies {
		if i >= maxBands {
			break
		}
		href := "#anomalies"
		if id, ok := ids[i]; ok {
			href = "#" + id
		}
		b.f(`<a href="%s"><rect class="al al-%s" x="%s" y="%d" width="%s" height="4">`, href, kindClass(a.Kind),
			msNum(a.Start), tlBandH+3+5*anomalyRow(a.Kind), num(max(ms(a.End-a.Start), 0.01)))
		t := a.Kind
		if a.Fenced {
			t += " (fenced)"
		}
		b.title(fmt.Sprintf("%s: processes %s, %s – %s", t, joinInts(a.Processes, ", "), secs(a.Start), secs(a.End)))
		b.f(`</rect></a>`)
	}
	// Tokens on the hold bars wide enough to carry one: the script writes
	// them as the view zooms (the plot's own coordinates stretch text).
	b.f(`</svg><g id="tl-tok" class="toks"></g></svg>`)
	out.SVG = template.HTML(b.String())

	var notes []string
	if notableEvery > 1 {
		notes = append(notes, fmt.Sprintf("%d fail, info, crash and anomaly ops, 1 in %d drawn", notable, notableEvery))
	}
	switch {
	case notableTitled < notableDrawn && notableEvery > 1:
		notes = append(notes, fmt.Sprintf("tooltips on %d of them", notableTitled))
	case notableTitled < notableDrawn:
		notes = append(notes, fmt.Sprintf("tooltips on %d of the %d fail, info, crash and anomaly ops", notableTitled, notable))
	}
	if markEvery > 1 {
		notes = append(notes, fmt.Sprintf("%d ok ops, 1 in %d drawn", okCount, markEvery))
	}
	switch {
	case okCount == 0 || sampleEvery == 1:
	case sampleEvery == 0:
		notes = append(notes, "no tooltips on ok ops")
	case sm != nil:
		notes = append(notes, fmt.Sprintf("tooltips on 1 in %d ok ops drawn", sampleEvery))
	default:
		notes = append(notes, fmt.Sprintf("tooltips on 1 in %d ok ops", sampleEvery*markEvery))
	}
	switch {
	case sm != nil && holdTitled < sm.holdsDrawn:
		notes = append(notes, fmt.Sprintf("tooltips on %d of the %d holds drawn", holdTitled, sm.holdsDrawn))
	case sm == nil && len(hs) > maxHoldRects:
		notes = append(notes, fmt.Sprintf("tooltips on the first %d of %d holds", maxHoldRects, len(hs)))
	}
	if len(notes) > 0 {
		out.Note = "Thinned to keep the page small: " + strings.Join(notes, "; ") + "."
	}
	if sm != nil {
		out.Note = strings.TrimSpace(sm.note(end) + " " + out.Note)
	}
	return out
}

// ps0 returns ps[0], or def when ps is empty.
func ps0(ps []int, def int) int {
	if len(ps) == 0 {
		return def
	}
	return ps[0]
}

// isPlain reports whether pr is an ordinary ok op: not a crash, and named
// by no anomaly.
func isPlain(pr history.Pair, anomalyOps map[int]bool) bool {
	return pr.Type() == history.OK && pr.Invoke.F != history.FCrash && !involved(pr, anomalyOps)
}

// ceilDiv returns a/b rounded up, for b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// involved reports whether an anomaly names pr's invoke or completion.
func involved(pr history.Pair, ops map[int]bool) bool {
	if len(ops) == 0 {
		return false
	}
	return ops[pr.Invoke.Index] || (pr.Complete != nil && ops[pr.Complete.Index])
}

// faultText describes a fault window for a tooltip.
func faultText(f history.Fault) string {
	s := f.F
	if len(f.Targets) > 0 {
		s += " of process " + joinInts(f.Targets, ", ")
	}
	if len(f.Nodes) > 0 {
		s += " of " + strings.Join(f.Nodes, ", ")
	}
	s += fmt.Sprintf(" from %s to %s", secs(f.Start), secs(f.End))
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return s
}

// anomalyRow returns the row of the anomalies lane an anomaly is drawn in,
// so that a double holder, the update it lost and the evidence of both do
// not hide each other.
func anomalyRow(kind string) int {
	switch kind {
	case "double-holder":
		return 0
	case "lost-update", "stale-write", "foreign-release", "token-order", "oversold", "lost-decrement", "stock-mismatch":
		return 1
	}
	return 2
}

// kindClass returns the CSS class suffix of an anomaly kind.
func kindClass(kind string) string {
	switch kind {
	case "double-holder", "lost-update", "nonlinearizable", "stale-write-rejected":
		return kind
	case "oversold", "lost-decrement":
		return "lost-update" // what the inventory lost, coloured as a lost update
	}
	return "other"
}

// segment is a horizontal line from (x, y), w long.
type segment struct{ x, y, w float64 }

// segmentsPath returns the path of segs, drawn lane by lane from left to
// right, each then a short move along its lane (m1.2 0) instead of across
// the lanes, to a tenth of a millisecond (a bar is at least that wide): a
// long run's tens of thousands of holds in a third fewer bytes.
func segmentsPath(segs []segment) string {
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Or(cmp.Compare(a.y, b.y), cmp.Compare(a.x, b.x)) })
	var p strings.Builder
	x, y := int64(0), 0.0 // the pen, x in tenths
	for _, s := range segs {
		sx, w := int64(math.Round(s.x*10)), max(int64(math.Round(s.w*10)), 1)
		p.WriteByte('m')
		p.WriteString(tenths(sx - x))
		if s.y >= y {
			p.WriteByte(' ')
		}
		p.WriteString(short(round2(s.y - y)))
		p.WriteByte('h')
		p.WriteString(tenths(w))
		x, y = sx+w, y+round2(s.y-y)
	}
	return p.String()
}

// tenths writes n tenths as short does: "1.2", ".3", "-.3", "2".
func tenths(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n/10, 10)
	if s == "0" && n%10 != 0 {
		s = ""
	}
	if n%10 != 0 {
		s += "." + strconv.FormatInt(n%10, 10)
	}
	if neg {
		s = "-" + s
	}
	return s
}
