package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// The first screen of a report shows the run's first incident on its own
// (checker.Incident: the anomalies one overlap of holders left behind),
// drawn to time scale: one lane per holder of the lock in it, and in each
// lane two bands, "the server holds it for you" (from the grant to the
// server's release: observed by the run's observer, or inferred from the
// lease) and "you believe you hold it" (from the grant to when the holder
// learned it had lost the lock, or let it go); the window between them,
// the fault on the lane of the process it struck, the tokens on the bars,
// the holder's accesses, the stale ones in red, and one plain sentence.
// For a double holder every grant made while the earlier holder still
// held the lock is drawn, however many.

// incidentOut is the first incident as the page shows it.
type incidentOut struct {
	// Count is the number of incidents in the run; Facets names the
	// first one's kinds in words.
	Count  int
	Facets string
	// Span is the first incident's time span, Sentence its story in one
	// plain sentence.
	Span, Sentence string
	// SVG is the drawing; nil when the incident has nothing to draw.
	SVG template.HTML
	// Anchor is the id of the headline anomaly's paragraph.
	Anchor string
	// T0 and T1 bound the incident in ms, for "show in timeline".
	T0, T1 string
	// Linearizability links linearizability.html when the incident is
	// not linearizable and the file is there.
	Linearizability bool
	// Others lists every incident, one line each, the first included.
	Others []incidentLine
}

// incidentLine is one incident in the list under the drawing.
type incidentLine struct {
	N                  int
	Span, Procs, Kinds string
	Anchor             string
	Fenced             bool
}

// Incident drawing geometry, in CSS pixels of the SVG's viewBox.
const (
	inWidth  = 1200
	inLabelW = 150
	inPlotW  = inWidth - inLabelW - 12
	inAxisH  = 20
	inLaneH  = 38 // a holder's lane
	// inLaneSmallH is a holder's lane when there are more than
	// inRoomyLanes: ten workers' lanes still fit the first screen.
	inLaneSmallH = 32
	inRoomyLanes = 6
	inMainH      = 68 // the lane of the holder the incident is about
	inNodeH      = 18 // the lane of faults that struck no holder
	// inNodeLaneH is the lane of a lock node (RedLock's lock0..lock4).
	inNodeLaneH = 22
)

// kindWords names anomaly kinds in plain words, for the incident's facets.
var kindWords = map[string]string{
	"double-holder": "two holders at once", "lost-update": "a lost update", "nonlinearizable": "a history that is not linearizable",
	"stale-write": "a stale write", "stale-write-rejected": "a stale write the resource refused", "foreign-release": "a release of another's lock",
	"token-order": "tokens out of order", "oversold": "items oversold", "lost-decrement": "a lost sale",
	"stock-mismatch": "stock that does not add up", "stuck-lock": "a stuck lock", "no-grants": "no grants at all",
}

// lostWindows returns the lost-lock windows the windows checker found
// (checker.Window), by the history index of the grant's acquire. It reads
// them from the "windows" sub-result's stats, as the checker left them or
// as decoded from results.json.
func lostWindows(res checker.Result) map[int]checker.Window {
	var find func(r checker.Result) any
	find = func(r checker.Result) any {
		if r.Checker == "windows" && r.Stats != nil {
			return r.Stats["windows"]
		}
		for _, s := range r.Results {
			if v := find(s); v != nil {
				return v
			}
		}
		return nil
	}
	raw := find(res)
	if raw == nil {
		return nil
	}
	var ws []checker.Window
	switch v := raw.(type) {
	case []checker.Window:
		ws = v
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &ws) != nil {
			return nil
		}
	}
	out := make(map[int]checker.Window, len(ws))
	for _, w := range ws {
		if len(w.Ops) > 0 {
			out[w.Ops[0]] = w
		}
	}
	return out
}

// fromSecs converts seconds (as results.json writes them) to a duration.
func fromSecs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// overlappers returns the holds of other processes on e's lock granted
// while e held it (the overlap checker's double holders: granted at or
// after e's grant and before e let go), in order of grant.
func overlappers(hs []holdIv, e holdIv) []holdIv {
	var out []holdIv
	for _, h := range hs {
		if h.key == e.key && h.proc != e.proc && h.acquire != e.acquire && h.start >= e.start && h.start < e.end {
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b holdIv) int { return cmp.Compare(a.start, b.start) })
	return out
}

// release is when the server let a hold go, as the incident draws it.
type release struct {
	at       time.Duration
	inferred bool
	words    string // "its lease expired on the server"
	label    string // "lease expired 5.12 s"
}

// serverRelease returns when the server let h go: the observed release
// of its lost-lock window (w), else the grant plus the lease (inferred),
// else, with no lease known, the next holder's grant (inferred: the
// latest it can have been).
func serverRelease(h holdIv, w *checker.Window, lease time.Duration, next *holdIv) (release, bool) {
	if w != nil {
		at := fromSecs(w.Released)
		r := release{at: at}
		switch w.How {
		case history.ReleaseExpired:
			r.words, r.label = "its lease expired on the server", "lease expired"
		case history.ReleaseLease:
			r.words, r.label = "its session ended on the server and took the lock with it", "session ended"
			if strings.HasPrefix(w.Lease, "lease") {
				r.words, r.label = "its lease ended on the server and took the lock with it", "lease ended"
			}
		case history.ReleaseSessionEnded:
			r.words, r.label = "the database ended its session and the lock with it", "session ended"
		case history.ReleaseFailoverLost:
			r.words, r.label = "a failover lost its lock", "lost in failover"
		case history.ReleaseDeleted:
			r.words, r.label = "its lock key was deleted on the server", "key deleted"
		case history.ReleaseOverwritten:
			r.words, r.label = "another client wrote over its lock key on the server", "key written over"
		default:
			r.words, r.label = "the server released its lock", "server released it"
		}
		r.label += " " + secs2(at)
		return r, true
	}
	if lease > 0 && h.start+lease < h.end {
		at := h.start + lease
		return release{at: at, inferred: true, words: fmt.Sprintf("its %s lease ran out", secs2(lease)),
			label: "lease ran out " + secs2(at) + " (inferred)"}, true
	}
	if next != nil {
		return release{at: next.start, inferred: true, words: "the server let its lock go",
			label: "released by " + secs2(next.start) + " (inferred)"}, true
	}
	return release{}, false
}

// secs2 renders d as seconds with two decimals, as the stories do.
func secs2(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// tokenWords renders a token as the stories do: "token 41", "zxid 1:797".
func tokenWords(k checker.TokenKind, t int64) string { return k.Token(t) }

// tokenShort renders a token without its noun: "41", "1:797".
func tokenShort(k checker.TokenKind, t int64) string {
	s := k.Token(t)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}

// access is one critical section drawn in an incident.
type access struct {
	pr    history.Pair
	stale bool
	// failed: it certainly did not touch the resource (it failed, and
	// not because the fenced resource refused it).
	failed bool
}

// words describes an access: "wrote 41", "read 40 and wrote 41".
func (a access) words() string {
	v := a.pr.Value()
	var parts []string
	if v != nil && v.Read != nil {
		parts = append(parts, fmt.Sprintf("read %d", *v.Read))
	}
	refused := v != nil && v.Ext().Rejected != ""
	switch {
	case v != nil && v.Wrote != nil && refused:
		parts = append(parts, fmt.Sprintf("tried to write %d", *v.Wrote))
	case v != nil && v.Wrote != nil:
		parts = append(parts, fmt.Sprintf("wrote %d", *v.Wrote))
	case refused:
		parts = append(parts, "tried to access the resource")
	}
	if len(parts) == 0 {
		parts = append(parts, "accessed the resource")
	}
	return strings.Join(parts, " and ")
}

// buildIncident draws the run's first incident and lists them all.
// anomalies are res.Anomalies (the incidents' indices point into them);
// idOf gives the paragraph id of an anomaly by that index.
func buildIncident(in Input, pairs []history.Pair, hs []holdIv, faults []history.Fault, end time.Duration,
	idOf func(int) string, linearizability bool, nodes []string, rels []nodeRelease) *incidentOut {
	res := in.Result
	incs := res.Incidents
	if len(incs) == 0 && len(res.Anomalies) > 0 {
		incs = checker.Incidents(res.Anomalies)
	}
	if len(incs) == 0 {
		return nil
	}
	out := &incidentOut{Count: len(incs)}
	for i, inc := range incs {
		var kinds []string
		for _, k := range facetOrder(inc.Facets) {
			s := k
			if n := inc.Facets[k]; n > 1 {
				s += fmt.Sprintf(" ×%d", n)
			}
			kinds = append(kinds, s)
		}
		l := incidentLine{N: i + 1, Span: secs2(inc.Start) + " to " + secs2(inc.End), Procs: joinInts(inc.Processes, ", "),
			Kinds: strings.Join(kinds, ", "), Fenced: inc.Fenced}
		if len(inc.Anomalies) > 0 {
			l.Anchor = idOf(inc.Anomalies[0])
		}
		out.Others = append(out.Others, l)
	}
	first := incs[0]
	var words []string
	for _, k := range facetOrder(first.Facets) {
		w := kindWords[k]
		if w == "" {
			w = k
		}
		words = append(words, w)
	}
	out.Facets = joinWords(words)
	out.Span = secs2(first.Start) + " to " + secs2(first.End)
	out.T0, out.T1 = msNum(first.Start), msNum(first.End)
	if len(first.Anomalies) > 0 {
		out.Anchor = idOf(first.Anomalies[0])
	}
	out.Linearizability = linearizability && first.Facets["nonlinearizable"] > 0
	var head checker.Anomaly
	if len(first.Anomalies) > 0 && first.Anomalies[0] < len(res.Anomalies) {
		head = res.Anomalies[first.Anomalies[0]]
	}
	if pairs == nil {
		out.Sentence = capitalize(out.Facets) + "."
		return out
	}
	d := incidentDrawing{meta: in.Meta, wins: lostWindows(res), faults: faults, end: end,
		nodes: nodes, rels: rels}
	e, ok := subjectHold(head, hs)
	if ok {
		d.subject(e, overlappers(hs, e), pairs)
	} else {
		d.generic(first, hs, pairs)
	}
	out.SVG, out.Sentence = d.render()
	if out.Sentence == "" {
		out.Sentence = capitalize(out.Facets) + "."
	}
	return out
}

// facetOrder returns the kinds of facets in the order the incident
// checker ranks headlines: double holder first, evidence last.
func facetOrder(facets map[string]int) []string {
	var ks []string
	for k := range facets {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b string) int {
		if ra, rb := kindRank(a), kindRank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return ks
}

// joinWords joins words as English: "a", "a and b", "a, b and c".
func joinWords(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// capitalize upper-cases the first letter of an ASCII sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// subjectHold returns the hold a double-holder anomaly is about: the
// earlier holder's, whose acquire it names first.
func subjectHold(a checker.Anomaly, hs []holdIv) (holdIv, bool) {
	if a.Kind != "double-holder" || len(a.Ops) == 0 {
		return holdIv{}, false
	}
	for _, h := range hs {
		if h.acquire == a.Ops[0] {
			return h, true
		}
	}
	return holdIv{}, false
}

// inLane is one lane of an incident drawing.
type inLane struct {
	proc    int
	holds   []holdIv
	cs      []access
	main    bool
	faults  []history.Fault
	y, h    float64
	release release // the main lane's
	hasRel  bool
}

// incidentDrawing collects what an incident drawing shows.
type incidentDrawing struct {
	meta   Meta
	wins   map[int]checker.Window
	faults []history.Fault
	end    time.Duration

	lanes  []*inLane
	server []history.Fault // faults that struck no drawn holder nor lock node
	// nodes are the design's lock nodes when it takes its lock on
	// several (RedLock): a lane each, as in Kleppmann's diagram; rels
	// are their own releases, nodeFaults the faults that struck each.
	nodes      []string
	rels       []nodeRelease
	nodeFaults map[string][]history.Fault
	t0, t1     time.Duration
	sentence   string
	stale      []access
	failed     []access // the subject's accesses that failed after it lost the lock
	first      *holdIv  // the first grant that overlapped the subject
}

// laneOf returns the lane of process p, adding one.
func (d *incidentDrawing) laneOf(p int) *inLane {
	for _, l := range d.lanes {
		if l.proc == p {
			return l
		}
	}
	l := &inLane{proc: p}
	d.lanes = append(d.lanes, l)
	return l
}

// subject lays out a double holder: e's lane first, then one lane per
// process granted the lock while e held it, in order of first grant.
func (d *incidentDrawing) subject(e holdIv, later []holdIv, pairs []history.Pair) {
	main := d.laneOf(e.proc)
	main.main = true
	main.holds = []holdIv{e}
	var next *holdIv
	if len(later) > 0 {
		next = &later[0]
		d.first = &later[0]
	}
	var win *checker.Window
	if w, ok := d.wins[e.acquire]; ok {
		win = &w
	}
	main.release, main.hasRel = serverRelease(e, win, d.meta.Lease, next)
	d.t0, d.t1 = e.start, e.end
	for _, h := range later {
		l := d.laneOf(h.proc)
		l.holds = append(l.holds, h)
		d.t1 = max(d.t1, h.end)
	}
	// The accesses of the holders, within the drawing's span; the
	// subject's are stale once the lock was given to another.
	staleFrom := e.end
	if next != nil {
		staleFrom = next.start
	}
	if main.hasRel {
		staleFrom = min(staleFrom, main.release.at)
	}
	for _, pr := range pairs {
		inv := pr.Invoke
		if inv.F != history.FCS || inv.Key != e.key || pr.Complete == nil {
			continue
		}
		for _, l := range d.lanes {
			if l.proc != inv.Process {
				continue
			}
			for _, h := range l.holds {
				if inv.Time < h.start || inv.Time >= h.end {
					continue
				}
				refused := pr.Type() == history.Fail && pr.Complete.Value != nil && pr.Complete.Value.Ext().Rejected != ""
				if pr.Type() == history.Fail && !refused {
					// It did not touch the resource: drawn, not stale.
					l.cs = append(l.cs, access{pr: pr, failed: true})
					if l.main && pr.Complete.Time > staleFrom {
						d.failed = append(d.failed, access{pr: pr, failed: true})
						d.t1 = max(d.t1, pr.Complete.Time)
					}
					break
				}
				a := access{pr: pr, stale: l.main && pr.Complete.Time > staleFrom}
				l.cs = append(l.cs, a)
				if a.stale {
					d.stale = append(d.stale, a)
					d.t1 = max(d.t1, pr.Complete.Time)
				}
				break
			}
		}
	}
	if win != nil && win.Learned != nil {
		d.t1 = max(d.t1, fromSecs(*win.Learned))
	}
	// Later holds can run long past the incident (the last grant held to
	// the end of a history): keep the drawing about the overlap.
	d.t1 = min(d.t1, max(e.end, d.lastStale())+max((e.end-e.start)/4, 50*time.Millisecond))
	d.placeFaults()
	d.sentence = d.story(e, later, win)
}

// lastStale returns when the subject's last stale access completed.
func (d *incidentDrawing) lastStale() time.Duration {
	var t time.Duration
	for _, a := range d.stale {
		t = max(t, a.pr.Complete.Time)
	}
	return t
}

// generic lays out an incident that is not a double holder: one lane per
// process it names, with their holds in its span.
func (d *incidentDrawing) generic(inc checker.Incident, hs []holdIv, pairs []history.Pair) {
	d.t0, d.t1 = inc.Start, max(inc.End, inc.Start+time.Millisecond)
	for _, p := range inc.Processes {
		d.laneOf(p)
	}
	for _, h := range hs {
		if h.key != inc.Key && inc.Key != "" {
			continue
		}
		if h.start <= d.t1 && h.end >= d.t0 {
			for _, l := range d.lanes {
				if l.proc == h.proc {
					l.holds = append(l.holds, h)
				}
			}
		}
	}
	for _, pr := range pairs {
		if pr.Invoke.F != history.FCS || pr.Complete == nil || pr.Invoke.Time > d.t1 || pr.Complete.Time < d.t0 {
			continue
		}
		for _, l := range d.lanes {
			if l.proc == pr.Invoke.Process {
				l.cs = append(l.cs, access{pr: pr})
			}
		}
	}
	if len(d.lanes) > 0 {
		d.lanes[0].main = true
	}
	d.placeFaults()
}

// placeFaults puts each fault in the drawing's span on the lanes of the
// processes it struck, or, when it struck none of them (a server, a
// node, the network), in the lane of server faults.
func (d *incidentDrawing) placeFaults() {
	for _, f := range d.faults {
		if f.End < d.t0 || f.Start > d.t1 {
			continue
		}
		hit := false
		for _, l := range d.lanes {
			if slices.Contains(f.Targets, l.proc) {
				l.faults = append(l.faults, f)
				hit = true
			}
		}
		if !hit && len(f.Targets) == 0 {
			onNode := false
			for _, n := range f.Nodes {
				if slices.Contains(d.nodes, n) {
					if d.nodeFaults == nil {
						d.nodeFaults = map[string][]history.Fault{}
					}
					d.nodeFaults[n] = append(d.nodeFaults[n], f)
					onNode = true
				}
			}
			if !onNode {
				d.server = append(d.server, f)
			}
		}
		if hit {
			d.t0, d.t1 = min(d.t0, f.Start), max(d.t1, f.End)
		}
	}
}

// faultVerb says what a fault did to the process it struck.
func faultVerb(f string) string {
	switch f {
	case history.FPause:
		return "was paused"
	case history.FKillWorker:
		return "was killed"
	case history.FPartition:
		return "was cut off from the server"
	case history.FClock, history.FClockJump, history.FSkew:
		return "had its clock moved"
	}
	return "was struck by " + f
}

// story tells a double holder in one plain sentence.
func (d *incidentDrawing) story(e holdIv, later []holdIv, win *checker.Window) string {
	tok := d.meta.Tokens
	var b strings.Builder
	fmt.Fprintf(&b, "Process %d held lock %s", e.proc, e.key)
	if e.token != 0 {
		fmt.Fprintf(&b, " (%s)", tokenWords(tok, e.token))
	}
	main := d.lanes[0]
	var hit *history.Fault
	for i := range main.faults {
		if f := main.faults[i]; f.Start >= e.start && f.Start < e.end {
			hit = &main.faults[i]
			break
		}
	}
	if hit != nil {
		fmt.Fprintf(&b, " and %s at %s for %s", faultVerb(hit.F), secs2(hit.Start), secs2(hit.End-hit.Start))
	} else if f, ok := d.firstStruck(); ok {
		fmt.Fprintf(&b, " during a %s", describe(f))
	}
	b.WriteString("; ")
	if main.hasRel {
		r := main.release
		if r.inferred && d.meta.Lease > 0 && strings.Contains(r.words, "lease") {
			fmt.Fprintf(&b, "%s at %s (inferred: no server release was observed)", r.words, secs2(r.at))
		} else if r.inferred {
			fmt.Fprintf(&b, "%s by %s (inferred: no server release was observed)", r.words, secs2(r.at))
		} else {
			fmt.Fprintf(&b, "%s at %s", r.words, secs2(r.at))
		}
		b.WriteString(", and ")
	}
	if len(later) > 0 {
		h := later[0]
		fmt.Fprintf(&b, "the server gave the lock to process %d at %s", h.proc, secs2(h.start))
		if h.token != 0 {
			fmt.Fprintf(&b, " (%s)", tokenWords(tok, h.token))
		}
		if n := len(later) - 1; n > 0 {
			fmt.Fprintf(&b, " and %d more %s", n, map[bool]string{true: "time", false: "times"}[n == 1])
		}
		fmt.Fprintf(&b, " while process %d still believed it held it", e.proc)
	}
	if len(d.stale) > 0 {
		a := d.stale[0]
		fmt.Fprintf(&b, "; process %d then %s at %s", e.proc, a.words(), secs2(a.pr.Complete.Time))
		if e.token != 0 {
			fmt.Fprintf(&b, " under its old %s", tokenWords(tok, e.token))
		}
		if v := a.pr.Value(); v != nil && v.Ext().Rejected != "" {
			b.WriteString(", and the fenced resource refused it")
		} else {
			b.WriteString(", a stale access")
		}
		if n := len(d.stale) - 1; n > 0 {
			fmt.Fprintf(&b, " (and %d more)", n)
		}
	}
	if len(d.stale) == 0 && len(d.failed) > 0 {
		a := d.failed[0]
		fmt.Fprintf(&b, "; its access to the resource, begun at %s, failed at %s without touching it", secs2(a.pr.Invoke.Time), secs2(a.pr.Complete.Time))
	}
	if win != nil && win.Learned != nil {
		fmt.Fprintf(&b, "; it learned the lock was gone at %s, when %s", secs2(fromSecs(*win.Learned)), win.LearnedBy)
	}
	b.WriteString(".")
	return b.String()
}

// firstStruck returns the first fault that struck a server, a node or
// the network rather than a holder, by start.
func (d *incidentDrawing) firstStruck() (history.Fault, bool) {
	fs := slices.Clone(d.server)
	for _, n := range d.nodes {
		fs = append(fs, d.nodeFaults[n]...)
	}
	if len(fs) == 0 {
		return history.Fault{}, false
	}
	return slices.MinFunc(fs, func(a, b history.Fault) int { return cmp.Compare(a.Start, b.Start) }), true
}

// describe names a fault that struck no holder: "partition of lock1".
func describe(f history.Fault) string {
	s := f.F
	if len(f.Nodes) > 0 {
		s += " of " + strings.Join(f.Nodes, ", ")
	}
	return s
}

// render draws the incident and returns the SVG and the sentence. Each
// hold bar carries its acquire's history index (data-acquire), each
// access its invoke's (data-op), each fault its start op's (data-fault).
func (d *incidentDrawing) render() (template.HTML, string) {
	if len(d.lanes) == 0 {
		return "", d.sentence
	}
	if d.t1 <= d.t0 {
		d.t1 = d.t0 + time.Millisecond
	}
	pad := (d.t1 - d.t0) / 30
	t0, t1 := max(d.t0-pad, 0), d.t1+pad
	x := func(t time.Duration) float64 {
		t = min(max(t, t0), t1)
		return inLabelW + float64(t-t0)/float64(t1-t0)*inPlotW
	}
	y := float64(inAxisH)
	if len(d.server) > 0 {
		y += inNodeH
	}
	for _, l := range d.lanes {
		l.y = y
		l.h = inLaneH
		if len(d.lanes) > inRoomyLanes {
			l.h = inLaneSmallH
		}
		if l.main {
			l.h = inMainH
		}
		y += l.h
	}
	nodesY := y
	y += float64(len(d.nodes) * inNodeLaneH)
	height := y + 4
	tok := d.meta.Tokens
	var b svgBuf
	b.f(`<svg id="incident-svg" class="incident" viewBox="0 0 %d %s" role="img" aria-label="the first incident, to time scale">`, inWidth, num(height))
	// Time axis.
	step := niceStep((t1 - t0).Seconds(), 10)
	b.f(`<g class="axis">`)
	for s := float64(int((t0.Seconds())/step)+1) * step; s <= t1.Seconds()+1e-9; s += step {
		xx := x(time.Duration(s * float64(time.Second)))
		b.f(`<line x1="%s" x2="%s" y1="%d" y2="%s"/><text x="%s" y="13">%s</text>`, num(xx), num(xx), inAxisH-3, num(height), num(xx), tickLabel(s, step))
	}
	b.f(`</g>`)
	// Faults that struck no holder: a lane of their own.
	if len(d.server) > 0 {
		b.f(`<g class="in-lane" data-lane="server"><text class="in-name" x="%d" y="%d">server faults</text>`, inLabelW-8, inAxisH+12)
		for _, f := range d.server {
			b.f(`<rect class="in-fault fk-%s" x="%s" y="%d" width="%s" height="%d">`, f.F, num(x(f.Start)), inAxisH+3,
				num(max(x(f.End)-x(f.Start), 1)), inNodeH-6)
			b.title(faultText(f))
			b.f(`</rect><text class="in-flabel" x="%s" y="%d">%s</text>`, num(x(f.Start)+3), inAxisH+13, template.HTMLEscapeString(describe(f)))
		}
		b.f(`</g>`)
	}
	for i, l := range d.lanes {
		bandS, bandB, rowA := l.y+4, l.y+15, l.y+29 // server band, belief band, accesses
		if l.h == inLaneSmallH {
			bandS, bandB, rowA = l.y+3, l.y+13, l.y+26
		}
		if l.main {
			bandS, bandB, rowA = l.y+16, l.y+29, l.y+45
		}
		cls := "in-lane"
		if i%2 == 1 {
			cls += " odd"
		}
		b.f(`<g class="%s" data-lane="%d" data-y="%s" data-h="%s">`, cls, l.proc, num(l.y), num(l.h))
		b.f(`<rect class="in-bg" x="0" y="%s" width="%d" height="%s"/>`, num(l.y), inWidth, num(l.h))
		name := fmt.Sprintf("process %d", l.proc)
		ny := l.y + l.h/2 + 4
		if l.main {
			ny = l.y + 11
		}
		b.f(`<text class="in-name" x="%d" y="%s">%s</text>`, inLabelW-8, num(ny), name)
		if l.main {
			b.f(`<text class="in-row" x="%d" y="%s">server holds it</text><text class="in-row" x="%d" y="%s">believes it holds it</text>`,
				inLabelW-8, num(bandS+8), inLabelW-8, num(bandB+9))
		}
		// The faults that struck this process, on its lane only.
		for _, f := range l.faults {
			x0, x1 := x(f.Start), x(f.End)
			op := -1 // the fault's start op
			if len(f.Ops) > 0 {
				op = f.Ops[0]
			}
			b.f(`<rect class="in-fault fk-%s" data-lane="%d" data-fault="%d" x="%s" y="%s" width="%s" height="%s">`, f.F, l.proc, op, num(x0),
				num(l.y+1), num(max(x1-x0, 1)), num(l.h-2))
			b.title(faultText(f))
			b.f(`</rect>`)
			b.f(`<text class="in-flabel" x="%s" y="%s">%s %s</text>`, num(x0+3), num(l.y+10), template.HTMLEscapeString(f.F), secs2(f.End-f.Start))
		}
		lastLabel := 0.0
		var labels svgBuf // the tokens, drawn over every bar of the lane
		for _, h := range l.holds {
			srvEnd, believeEnd := h.end, h.end
			var w *checker.Window
			if ww, ok := d.wins[h.acquire]; ok {
				w = &ww
				srvEnd = min(srvEnd, fromSecs(ww.Released))
				if ww.Learned != nil {
					believeEnd = min(h.end, max(fromSecs(*ww.Learned), srvEnd))
				}
			}
			if l.main && l.hasRel {
				srvEnd = min(h.end, l.release.at)
			}
			xs, xb := x(h.start), x(believeEnd)
			xe := x(srvEnd)
			title := fmt.Sprintf("process %d held %s", h.proc, h.key)
			if h.token != 0 {
				title += " (" + tokenWords(tok, h.token) + ")"
			}
			title += fmt.Sprintf(" from %s to %s, until %s", secs(h.start), secs(h.end), h.endedBy)
			// The server's band has a tooltip of its own where it says
			// more than the hold's: on the main lane, or where the server
			// let go first. The other grants of a long pause are many
			// (a page's size is mostly theirs), and their two bands agree.
			b.f(`<rect class="in-srv" x="%s" y="%s" width="%s" height="9">`, num(xs), num(bandS), num(max(xe-xs, 0.8)))
			if l.main || srvEnd != h.end {
				b.title(fmt.Sprintf("the server holds it for process %d from %s to %s", h.proc, secs(h.start), secs(srvEnd)))
			}
			b.f(`</rect>`)
			b.f(`<rect class="in-hold%s" data-acquire="%d" x="%s" y="%s" width="%s" height="11">`, map[bool]string{true: " main", false: ""}[l.main],
				h.acquire, num(xs), num(bandB), num(max(xb-xs, 0.8)))
			b.title(title)
			b.f(`</rect>`)
			if xb > xe+0.5 {
				// The lost-lock window: the server let go, the holder
				// still believed it held the lock.
				names := d.windowAccesses(l, srvEnd, believeEnd)
				b.f(`<rect class="in-win" x="%s" y="%s" width="%s" height="%s">`, num(xe), num(bandS), num(xb-xe), num(bandB+11-bandS))
				t := fmt.Sprintf("lost-lock window of process %d: %s, from %s (the server let go) to %s", h.proc, span(believeEnd-srvEnd), secs(srvEnd), secs(believeEnd))
				if w != nil {
					t += " (" + w.LearnedBy + ")"
				}
				if len(names) > 0 {
					t += "; accesses in it: " + strings.Join(names, "; ")
				}
				b.title(t)
				b.f(`</rect>`)
				if l.main && xb-xe > 90 {
					b.f(`<text class="in-wlabel" x="%s" y="%s">window %s: %s</text>`, num((xe+xb)/2), num(bandS+8), span(believeEnd-srvEnd),
						template.HTMLEscapeString(accessCount(len(names))))
				}
			}
			if h.token != 0 {
				label := tokenShort(tok, h.token)
				if l.main || (d.first != nil && h.acquire == d.first.acquire) {
					label = tokenWords(tok, h.token)
				}
				tw := 6.0 * float64(len(label))
				fits := xb-xs >= tw+4
				must := l.main || (d.first != nil && h.acquire == d.first.acquire)
				if xs >= lastLabel && (fits || must) {
					tx := xs + 2
					labels.f(`<text class="in-tok%s" x="%s" y="%s">%s</text>`, map[bool]string{true: "", false: " out"}[fits], num(tx), num(bandB+9),
						template.HTMLEscapeString(label))
					lastLabel = tx + tw + 4
				}
			}
		}
		b.WriteString(labels.String())
		// Accesses.
		for _, a := range l.cs {
			inv, c := a.pr.Invoke, a.pr.Complete
			xa, xc := x(inv.Time), x(c.Time)
			cls := "in-cs"
			if a.stale {
				cls += " stale"
			}
			if a.failed {
				cls += " failed"
			}
			b.f(`<rect class="%s" data-op="%d" x="%s" y="%s" width="%s" height="6">`, cls, inv.Index, num(xa), num(rowA), num(max(xc-xa, 1.2)))
			b.title(opTitle(a.pr))
			b.f(`</rect>`)
		}
		if l.main {
			var named *access
			label := ""
			if len(d.stale) > 0 {
				named = &d.stale[0]
				label = "stale: " + named.words()
				if tk := l.holds[0].token; tk != 0 {
					label += " under " + tokenWords(tok, tk)
				}
				if v := named.pr.Value(); v != nil && v.Ext().Rejected != "" {
					label += ", refused by the resource"
				}
			} else if len(d.failed) > 0 {
				named = &d.failed[0]
				label = "access failed: it did not touch the resource"
			}
			if named != nil {
				a := *named
				xa, xc := x(a.pr.Invoke.Time), x(a.pr.Complete.Time)
				// Under the access: from its start, or ending at its end
				// when that leaves no room.
				anchor, xl := "start", max(xa, inLabelW)+2
				if xl+6*float64(len(label)) > inWidth {
					anchor, xl = "end", xc-2
				}
				cls := "in-stale"
				if a.failed {
					cls = "in-failed"
				}
				b.f(`<text class="%s" x="%s" y="%s" text-anchor="%s">%s</text>`, cls, num(xl), num(rowA+17), anchor, template.HTMLEscapeString(label))
			}
			if l.hasRel {
				r := l.release
				xr := x(r.at)
				cls := "in-exp"
				if r.inferred {
					cls += " inferred"
				}
				b.f(`<line class="%s" x1="%s" x2="%s" y1="%s" y2="%s"><title>%s</title></line>`, cls, num(xr), num(xr), num(l.y+1), num(l.y+l.h-1),
					template.HTMLEscapeString(r.label))
				anchor, xl := "start", xr+3
				if xl+6*float64(len(r.label)) > inWidth {
					anchor, xl = "end", xr-3
				}
				b.f(`<text class="in-explabel" x="%s" y="%s" text-anchor="%s">%s</text>`, num(xl), num(l.y+10), anchor, template.HTMLEscapeString(r.label))
			}
		}
		b.f(`</g>`)
	}
	d.renderNodes(&b, nodesY, x, t0, t1)
	b.f(`</svg>`)
	return template.HTML(b.String()), d.sentence
}

// windowAccesses names the accesses of l's holder between from and to.
func (d *incidentDrawing) windowAccesses(l *inLane, from, to time.Duration) []string {
	var out []string
	for _, a := range l.cs {
		if !a.failed && a.pr.Complete.Time > from && a.pr.Invoke.Time < to {
			out = append(out, fmt.Sprintf("%s at %s", a.words(), secs2(a.pr.Complete.Time)))
		}
	}
	return out
}

// accessCount says how many accesses a window held.
func accessCount(n int) string {
	switch n {
	case 0:
		return "no access"
	case 1:
		return "1 access"
	}
	return fmt.Sprintf("%d accesses", n)
}

// renderNodes draws the lanes of the lock nodes, from y down: on each,
// the grants of the drawn holders that the node made, from the grant to
// the holder's release or the node's own release of its key, the node's
// releases as ticks, and the faults that struck the node.
func (d *incidentDrawing) renderNodes(b *svgBuf, y float64, x func(time.Duration) float64, t0, t1 time.Duration) {
	relOf := releasesOf(d.rels, func(yield func(holdIv) bool) { // owner -> its key's releases
		for _, l := range d.lanes {
			for _, h := range l.holds {
				if !yield(h) {
					return
				}
			}
		}
	})
	for i, n := range d.nodes {
		ly := y + float64(i*inNodeLaneH)
		cls := "in-lane node"
		if (len(d.lanes)+i)%2 == 1 {
			cls += " odd"
		}
		b.f(`<g class="%s" data-node="%s">`, cls, n)
		b.f(`<rect class="in-bg" x="0" y="%s" width="%d" height="%d"/>`, num(ly), inWidth, inNodeLaneH)
		b.f(`<text class="in-name" x="%d" y="%s">node %s</text>`, inLabelW-8, num(ly+15), n)
		for _, f := range d.nodeFaults[n] {
			x0, x1 := x(f.Start), x(f.End)
			b.f(`<rect class="in-fault fk-%s" x="%s" y="%s" width="%s" height="%d">`, f.F, num(x0), num(ly+1), num(max(x1-x0, 1)), inNodeLaneH-2)
			b.title(faultText(f))
			b.f(`</rect><text class="in-flabel" x="%s" y="%s">%s</text>`, num(x0+3), num(ly+9), template.HTMLEscapeString(f.F))
		}
		for _, l := range d.lanes {
			for _, h := range l.holds {
				if !slices.Contains(h.nodes, n) {
					continue
				}
				end := h.end
				for _, r := range relOf[h.owner] {
					if at, _ := r.op.ReleaseAt(); r.node == n && at >= h.start && at < end {
						end = at
					}
				}
				xs, xe := x(h.start), x(end)
				b.f(`<rect class="in-ngrant%s" x="%s" y="%s" width="%s" height="8">`, map[bool]string{true: " main", false: ""}[l.main],
					num(xs), num(ly+10), num(max(xe-xs, 0.8)))
				b.title(fmt.Sprintf("%s held %s for process %d from %s to %s", n, h.key, h.proc, secs(h.start), secs(end)))
				b.f(`</rect>`)
				if xe-xs > 30 {
					b.f(`<text class="in-tok" x="%s" y="%s">p%d</text>`, num(xs+2), num(ly+17), h.proc)
				}
			}
		}
		for _, r := range d.rels {
			at, _ := r.op.ReleaseAt()
			if r.node != n || at < t0 || at > t1 {
				continue
			}
			xr := x(at)
			b.f(`<line class="in-nrel" x1="%s" x2="%s" y1="%s" y2="%s">`, num(xr), num(xr), num(ly+2), num(ly+inNodeLaneH-2))
			b.title(fmt.Sprintf("%s %s key %s of %s at %s", n, r.op.Value.Ext().Release.How, r.op.Key, r.owner, secs(at)))
			b.f(`</line>`)
		}
		b.f(`</g>`)
	}
}
