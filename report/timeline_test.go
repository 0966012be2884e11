package report

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TestTimelineOverlapShades checks, on the default run, that a double
// holder's second holder's lane is shaded only while it held the lock
// (from its grant to its release, not to the end of the anomaly), and the
// paused holder's from that grant to the last moment another held it.
func TestTimelineOverlapShades(t *testing.T) {
	fx, in := loadDefaultRun(t)
	e, later := pausedHolder(t, fx.h)
	pairs, err := fx.h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	hs := holds(pairs, historyEnd(fx.h))
	var second holdIv
	for _, h := range hs {
		if h.acquire == later[0] {
			second = h
		}
	}
	_, shades := doubleHolds(in.Result.Anomalies, hs)
	found := false
	var onE time.Duration
	for _, s := range shades {
		switch {
		case s.proc == second.proc && s.from == second.start:
			found = true
			if s.to != second.end {
				t.Errorf("process %d's lane is shaded from %s to %s; it held the lock until %s", second.proc, secs(s.from), secs(s.to), secs(second.end))
			}
		case s.proc == e.proc:
			onE += s.to - s.from
		}
	}
	if !found {
		t.Errorf("no shade on process %d's lane for its grant at %s", second.proc, secs(second.start))
	}
	var last time.Duration
	for _, h := range hs {
		for _, a := range later {
			if h.acquire == a {
				last = max(last, min(h.end, e.end))
			}
		}
	}
	if want := last - second.start; onE != want {
		t.Errorf("process %d's lane is shaded for %s, want %s (from %s to %s)", e.proc, span(onE), span(want), secs(second.start), secs(last))
	}
}

// TestTimelineInFlight checks that the acquires in flight are hidden by
// default above five workers (a checkbox shows them) and shown with five
// or fewer.
func TestTimelineInFlight(t *testing.T) {
	for _, tt := range []struct {
		workers int
		hidden  bool
	}{{3, false}, {5, false}, {10, true}} {
		h := synthHistory(1, tt.workers, 4*time.Second)
		_, page := writeReport(t, Input{Meta: Meta{Name: "flight", Workers: tt.workers}, History: h, Result: check(t, h, false)})
		svgHidden := regexp.MustCompile(`<svg id="tl" class="tl noq"`).MatchString(page)
		boxChecked := strings.Contains(page, `id="tl-flight" checked`)
		if svgHidden != tt.hidden || boxChecked == tt.hidden {
			t.Errorf("%d workers: in-flight hidden %v, checkbox checked %v; want hidden %v", tt.workers, svgHidden, boxChecked, tt.hidden)
		}
		if !regexp.MustCompile(`<path class="a q"`).MatchString(page) {
			t.Errorf("%d workers: the acquires are not marked as in flight", tt.workers)
		}
		if !strings.Contains(page, "#tl.noq .q{display:none}") {
			t.Error("no rule hides the acquires in flight")
		}
	}
}

// TestTimelineNodeLanes checks that a design that takes its lock on
// several nodes (RedLock) gets a lane per lock node, with the grants
// each node made and its own releases, and that a fault of a node is
// drawn on that node's lane.
func TestTimelineNodeLanes(t *testing.T) {
	ms := time.Millisecond
	nodes := func(ns ...string) *history.Value {
		return &history.Value{Owner: "o1", Extra: &history.Extra{Nodes: ns}}
	}
	h := history.History{
		{Time: 0, Process: 0, Type: history.Invoke, F: history.FAcquire, Key: "k0"},
		{Time: 10 * ms, Process: 0, Type: history.OK, F: history.FAcquire, Key: "k0", Value: nodes("lock0", "lock1", "lock2")},
		{Time: 20 * ms, Process: history.NemesisProcess, Type: history.Invoke, F: history.FClockJump},
		{Time: 21 * ms, Process: history.NemesisProcess, Type: history.Info, F: history.FClockJump, Value: &history.Value{Extra: &history.Extra{Nodes: []string{"lock1"}}}},
		{Time: 30 * ms, Process: history.NemesisProcess, Type: history.Info, F: history.FServerRelease, Key: "k0",
			Value: &history.Value{Owner: "o1", Extra: &history.Extra{Nodes: []string{"lock1"}, Release: &history.Release{How: history.ReleaseExpired, At: 30 * ms}}}},
		{Time: 40 * ms, Process: 1, Type: history.Invoke, F: history.FAcquire, Key: "k0"},
		{Time: 50 * ms, Process: 1, Type: history.OK, F: history.FAcquire, Key: "k0", Value: &history.Value{Owner: "o2", Extra: &history.Extra{Nodes: []string{"lock1", "lock3", "lock4"}}}},
		{Time: 60 * ms, Process: history.NemesisProcess, Type: history.Invoke, F: history.FClockReset},
		{Time: 61 * ms, Process: history.NemesisProcess, Type: history.Info, F: history.FClockReset, Value: &history.Value{Extra: &history.Extra{Nodes: []string{"lock1"}}}},
		{Time: 70 * ms, Process: 0, Type: history.Invoke, F: history.FRelease, Key: "k0"},
		{Time: 71 * ms, Process: 0, Type: history.OK, F: history.FRelease, Key: "k0"},
		{Time: 80 * ms, Process: 1, Type: history.Invoke, F: history.FRelease, Key: "k0"},
		{Time: 81 * ms, Process: 1, Type: history.OK, F: history.FRelease, Key: "k0"},
	}
	for i := range h {
		h[i].Index = i
	}
	_, page := writeReport(t, Input{Meta: Meta{Name: "rl", Lock: "redlock", Workers: 2}, History: h, Result: check(t, h, false)})
	for _, n := range []string{"lock0", "lock1", "lock2", "lock3", "lock4"} {
		if !strings.Contains(page, ">node "+n+"<") {
			t.Errorf("no lane for node %s", n)
		}
	}
	if !strings.Contains(page, `<path class="hp nd"`) {
		t.Error("the node lanes draw no grant")
	}
	if !strings.Contains(page, "lock1 expired key k0 of o1") {
		t.Error("lock1's release of o1's key is not drawn")
	}
	// Lanes 0 and 1 are the workers', lock0..lock4 are 2..6: the clock
	// jump of lock1 is on lane 3 only.
	bands := regexp.MustCompile(`<rect class="fb fb-clock fk-clock-jump"( data-lane="(\d+)")?`).FindAllStringSubmatch(page, -1)
	if len(bands) != 1 || bands[0][2] != "3" {
		t.Errorf("clock-jump bands %q, want one on lock1's lane (3)", bands)
	}
	// The incident has the lock nodes' lanes too: the clock jump on
	// lock1's, lock1's own release of o1's key, the grants of both.
	svg := incidentSVG(t, page)
	lanes := regexp.MustCompile(`(?s)<g class="in-lane node[^"]*" data-node="(lock\d)">(.*?)</g>`).FindAllStringSubmatch(svg, -1)
	if len(lanes) != 5 {
		t.Fatalf("the incident has %d node lanes, want 5", len(lanes))
	}
	for _, l := range lanes {
		jump := strings.Contains(l[2], `class="in-fault fk-clock-jump"`)
		if jump != (l[1] == "lock1") {
			t.Errorf("node %s's lane has the clock jump: %v", l[1], jump)
		}
		if rel := strings.Contains(l[2], `class="in-nrel"`); rel != (l[1] == "lock1") {
			t.Errorf("node %s's lane has a release: %v", l[1], rel)
		}
		if grants := strings.Count(l[2], `<rect class="in-ngrant`); grants != map[string]int{"lock1": 2, "lock2": 1}[l[1]]+map[string]int{"lock0": 1, "lock3": 1, "lock4": 1}[l[1]] {
			t.Errorf("node %s's lane draws %d grants", l[1], grants)
		}
	}
	if !strings.Contains(page, "during a clock-jump of lock1") {
		t.Error("the incident's sentence does not name the clock jump of lock1")
	}
	// One lane per worker only, for a design of one node.
	one := synthHistory(1, 3, 2*time.Second)
	if _, page := writeReport(t, Input{Meta: Meta{Name: "one", Workers: 3}, History: one, Result: check(t, one, false)}); strings.Contains(page, ">node ") {
		t.Error("a design of one node has node lanes")
	}
}

// TestIncidentOther checks that an incident that is not a double holder
// (a lock no one could take for too long) is drawn with the lanes of
// the processes it names, over its span.
func TestIncidentOther(t *testing.T) {
	h := synthHistory(2, 3, 3*time.Second)
	res := check(t, h, false)
	res.Anomalies = append(res.Anomalies, checker.Anomaly{Kind: "stuck-lock", Key: "k0", Processes: []int{1, 2},
		Start: time.Second, End: 2 * time.Second, Explanation: "no one held k0"})
	res.Incidents = nil
	_, page := writeReport(t, Input{Meta: Meta{Name: "stuck", Workers: 3}, History: h, Result: res})
	svg := incidentSVG(t, page)
	lanes := laneAttr.FindAllStringSubmatch(svg, -1)
	if len(lanes) != 2 || lanes[0][1] != "1" || lanes[1][1] != "2" {
		t.Errorf("incident lanes %v, want processes 1 and 2", lanes)
	}
	if !strings.Contains(page, `<b id="incident-count">1 incident</b>`) || !strings.Contains(page, "a stuck lock") {
		t.Error("the page does not count one incident, a stuck lock")
	}
	if !strings.Contains(svg, `class="in-hold"`) {
		t.Error("the incident draws no hold")
	}
}

// TestReportWords checks the page's words: "fencing: not used" on an
// unfenced run, a glossary entry for every term the incident uses, and
// the incident's link to linearizability.html when it is there.
func TestReportWords(t *testing.T) {
	fx := loadFixture(t, "pause-double-holder")
	in := Input{Meta: fx.meta, History: fx.h, Result: check(t, fx.h, false)}
	_, page := writeReport(t, in, "linearizability.html")
	for _, s := range []string{"fencing: not used", `<a href="linearizability.html" id="incident-lin">`, `<section id="glossary">`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	glossary := page[strings.Index(page, `<section id="glossary">`):]
	for _, term := range []string{"grant", "token", "fencing", "lease", "server release", "lost-lock window", "incident", "double holder",
		"stale access", "lost update", "not linearizable", "in flight", "pause"} {
		if !regexp.MustCompile(`<dt>[^<]*` + regexp.QuoteMeta(term)).MatchString(glossary) {
			t.Errorf("the glossary does not define %q", term)
		}
	}
	// Asked for, but the resource took no tokens: not used either.
	noTokens := in
	noTokens.Meta.Fencing = true
	noTokens.Result.Results = append(slices.Clone(in.Result.Results), checker.Result{Checker: "fencing", NotUsed: "the resource took no tokens"})
	if _, page := writeReport(t, noTokens); !strings.Contains(page, "fencing: not used") {
		t.Error("a fenced run whose resource took no tokens does not say fencing: not used")
	}
	if n := strings.Count(page, `show in timeline</a> · <a href="linearizability.html">`); n != 1 {
		t.Errorf("%d anomaly paragraphs link linearizability.html, want the nonlinearizable one", n)
	}
	if _, page := writeReport(t, in); strings.Contains(page, `id="incident-lin"`) {
		t.Error("the incident links linearizability.html, which is not there")
	}
}
