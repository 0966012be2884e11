package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// defaultRun is the stored default run (make run's: redis-set-px under
// pause, seed 1, 20 s, 10 workers), the report tests' golden input.
const defaultRun = "redis-pause-default"

// loadDefaultRun loads the default run, checks it as the runner does and
// returns its report's input.
func loadDefaultRun(t *testing.T) (fixture, Input) {
	t.Helper()
	fx := loadFixture(t, defaultRun)
	raw := struct {
		Lease time.Duration `json:"lease"`
	}{}
	if err := json.Unmarshal(fx.testRaw, &raw); err != nil {
		t.Fatal(err)
	}
	fx.meta.Lease = raw.Lease
	res := check(t, fx.h, fx.meta.Fencing)
	return fx, Input{Meta: fx.meta, History: fx.h, Result: res}
}

// testHold is a hold as the test works it out from the history itself.
type testHold struct {
	proc       int
	key        string
	acquire    int
	start, end time.Duration
}

// pausedHolder works out from the history alone the first holder a pause
// struck while it held the lock and during whose hold another process was
// granted the lock, and every grant made while it held the lock (the
// acquire indices). A hold lasts from an acquire ok to its process's next
// release or crash invoke, or the end of the history.
func pausedHolder(t *testing.T, h history.History) (testHold, []int) {
	t.Helper()
	var hs []testHold
	open := map[int][]int{}
	var end time.Duration
	for _, op := range h {
		end = max(end, op.Time)
	}
	for _, op := range h {
		switch {
		case op.F == history.FAcquire && op.Type == history.OK:
			open[op.Process] = append(open[op.Process], len(hs))
			hs = append(hs, testHold{proc: op.Process, key: op.Key, acquire: op.Index, start: op.Time, end: end})
		case op.Type == history.Invoke && (op.F == history.FRelease || op.F == history.FCrash):
			var keep []int
			for _, i := range open[op.Process] {
				if op.F == history.FRelease && hs[i].key != op.Key {
					keep = append(keep, i)
					continue
				}
				hs[i].end = op.Time
			}
			open[op.Process] = keep
		}
	}
	for _, op := range h {
		if op.F != history.FPause || op.Type != history.Info || op.Value == nil {
			continue
		}
		for _, target := range op.Value.Ext().Targets {
			for _, e := range hs {
				if e.proc != target || e.start > op.Time || e.end <= op.Time {
					continue
				}
				var later []int
				for _, o := range hs {
					if o.key == e.key && o.proc != e.proc && o.start >= e.start && o.start < e.end {
						later = append(later, o.acquire)
					}
				}
				if len(later) > 0 {
					slices.Sort(later)
					return e, later
				}
			}
		}
	}
	t.Fatal("no pause struck a holder whose lock was granted to another")
	return testHold{}, nil
}

// incidentSVG returns the first incident's drawing in page.
func incidentSVG(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<svg id="incident-svg"`)
	if i < 0 {
		t.Fatal("the page has no incident drawing")
	}
	j := strings.Index(page[i:], "</svg>")
	return page[i : i+j]
}

var (
	holdAttr  = regexp.MustCompile(`<rect class="in-hold( main)?" data-acquire="(\d+)"`)
	faultAttr = regexp.MustCompile(`<rect class="in-fault fk-(\S+)" data-lane="(-?\d+)" data-fault="(-?\d+)"`)
	laneAttr  = regexp.MustCompile(`<g class="in-lane[^"]*" data-lane="(-?\d+)"`)
)

// TestIncidentServerBandTitles checks, on the default run's first
// incident, that a server band carries a tooltip of its own only where it
// says more than its hold's: on the paused holder's lane, whose server
// band ends when the server let go, and nowhere on the lanes of the other
// grants, whose two bands agree (a long pause's page is mostly theirs).
func TestIncidentServerBandTitles(t *testing.T) {
	_, in := loadDefaultRun(t)
	_, page := writeReport(t, in)
	svg := incidentSVG(t, page)
	srv := regexp.MustCompile(`<rect class="in-srv"[^>]*>(<title>([^<]*)</title>)?</rect>`).FindAllStringSubmatch(svg, -1)
	holds := len(holdAttr.FindAllStringSubmatch(svg, -1))
	if len(srv) != holds || holds < 2 {
		t.Fatalf("%d server bands for %d holds, want one each (and several holds)", len(srv), holds)
	}
	titled := 0
	for _, m := range srv {
		if m[1] != "" {
			titled++
			if !strings.Contains(m[2], "the server holds it for process") {
				t.Errorf("server band tooltip %q", m[2])
			}
		}
	}
	if titled != 1 {
		t.Errorf("%d server bands have a tooltip, want 1 (the paused holder's; the other grants' bands agree with their holds)", titled)
	}
}

// TestIncidentDrawsEveryOverlappingGrant checks, on the default run, that
// the first incident is drawn with the holder the pause struck and every
// grant made while it held the lock, and nothing else: the set drawn
// (the hold bars' acquires in the page) equals the set worked out from
// the history. The red holds of the full timeline are the same set.
func TestIncidentDrawsEveryOverlappingGrant(t *testing.T) {
	fx, in := loadDefaultRun(t)
	if n := len(in.Result.Incidents); n != 3 {
		t.Fatalf("the default run has %d incidents, want 3", n)
	}
	e, want := pausedHolder(t, fx.h)
	t.Logf("process %d was paused holding the lock (acquire op %d): %d grants while it held it", e.proc, e.acquire, len(want))
	_, page := writeReport(t, in)
	svg := incidentSVG(t, page)
	var got []int
	main := -1
	for _, m := range holdAttr.FindAllStringSubmatch(svg, -1) {
		i, _ := strconv.Atoi(m[2])
		if m[1] != "" {
			main = i
			continue
		}
		got = append(got, i)
	}
	slices.Sort(got)
	if main != e.acquire {
		t.Errorf("the incident is drawn about the hold of acquire op %d, want %d (process %d, paused)", main, e.acquire, e.proc)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the incident draws %d grants, want the %d made while process %d held the lock:\n got %v\nwant %v", len(got), len(want), e.proc, got, want)
	}
	// The full timeline draws the same grants red.
	pairs, err := fx.h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	dh, _ := doubleHolds(in.Result.Anomalies, holds(pairs, historyEnd(fx.h)))
	for _, i := range append(want, e.acquire) {
		if !dh[i] {
			t.Errorf("the timeline does not draw the hold of acquire op %d red", i)
		}
	}
}

// TestIncidentFaultOnItsLane checks, on the default run, that a pause is
// drawn on the lane of the process it stopped only, in the incident and
// in the full timeline, and that the incident names its lease's end and
// its holders' tokens.
func TestIncidentFaultOnItsLane(t *testing.T) {
	fx, in := loadDefaultRun(t)
	e, want := pausedHolder(t, fx.h)
	_, page := writeReport(t, in)
	svg := incidentSVG(t, page)
	lanes := laneAttr.FindAllStringSubmatch(svg, -1)
	if len(lanes) < 2 || lanes[0][1] != strconv.Itoa(e.proc) {
		t.Errorf("incident lanes %v, want process %d's first and at least one other", lanes, e.proc)
	}
	faults := faultAttr.FindAllStringSubmatch(svg, -1)
	if len(faults) == 0 {
		t.Error("the incident draws no fault")
	}
	onPaused := false
	for _, m := range faults {
		if m[1] != "pause" {
			continue
		}
		p, _ := strconv.Atoi(m[2])
		op, _ := strconv.Atoi(m[3])
		if !pausedBy(fx.h, op, p) {
			t.Errorf("the incident draws the pause of op %d on process %d's lane; it did not stop that process", op, p)
		}
		onPaused = onPaused || p == e.proc
	}
	if !onPaused {
		t.Errorf("the incident draws no pause on process %d's lane", e.proc)
	}
	if !strings.Contains(svg, `class="in-exp`) {
		t.Error("the incident has no expiry mark")
	}
	var tokenOf = map[int]int64{}
	for _, op := range fx.h {
		if op.F == history.FAcquire && op.Type == history.OK && op.Value != nil {
			tokenOf[op.Index] = op.Value.Token
		}
	}
	for _, tok := range []int64{tokenOf[e.acquire], tokenOf[want[0]]} {
		if !strings.Contains(svg, ">token "+strconv.FormatInt(tok, 10)+"<") {
			t.Errorf("the incident does not write token %d on its bar", tok)
		}
	}
	// The timeline: each pause band on the lane of its target.
	band := regexp.MustCompile(`<rect class="fb fb-process fk-pause"( data-lane="(\d+)")?`)
	targets := map[int]bool{}
	for _, f := range fx.h.Faults() {
		if f.F == history.FPause {
			for _, p := range f.Targets {
				targets[p%fx.meta.Workers] = true
			}
		}
	}
	bands := band.FindAllStringSubmatch(page, -1)
	if len(bands) == 0 {
		t.Fatal("the timeline draws no pause")
	}
	for _, m := range bands {
		l, err := strconv.Atoi(m[2])
		if err != nil || !targets[l] {
			t.Errorf("a pause band %q is not on a paused process's lane (%v)", m[0], targets)
		}
	}
}

// TestIncidentStaleAccess checks, on stored runs, that the accesses the
// incident draws in red are the paused holder's that ended after the lock
// was given to another (worked out from the history alone), and that
// the sentence names the first.
func TestIncidentStaleAccess(t *testing.T) {
	for _, tt := range []struct {
		run   string
		stale int // how many the history has
	}{
		{defaultRun, 0},            // its access failed when it resumed
		{"pause-double-holder", 1}, // it wrote after the pause
	} {
		t.Run(tt.run, func(t *testing.T) {
			fx := loadFixture(t, tt.run)
			raw := struct {
				Lease time.Duration `json:"lease"`
			}{}
			if err := json.Unmarshal(fx.testRaw, &raw); err != nil {
				t.Fatal(err)
			}
			fx.meta.Lease = raw.Lease
			in := Input{Meta: fx.meta, History: fx.h, Result: check(t, fx.h, fx.meta.Fencing)}
			e, later := pausedHolder(t, fx.h)
			var next time.Duration
			for _, op := range fx.h {
				if op.Index == later[0] {
					next = op.Time
				}
			}
			var want []int
			invoked := map[int]int{} // process -> its open cs invoke
			for _, op := range fx.h {
				if op.F != history.FCS || op.Process != e.proc {
					continue
				}
				if op.Type == history.Invoke {
					invoked[op.Process] = op.Index
					continue
				}
				inv := fx.h[invoked[op.Process]]
				refused := op.Value != nil && op.Value.Ext().Rejected != ""
				if inv.Time >= e.start && inv.Time < e.end && op.Time > next && (op.Type != history.Fail || refused) {
					want = append(want, inv.Index)
				}
			}
			if len(want) != tt.stale {
				t.Fatalf("the history has %d stale accesses of process %d, want %d: %v", len(want), e.proc, tt.stale, want)
			}
			_, page := writeReport(t, in)
			svg := incidentSVG(t, page)
			var got []int
			for _, m := range regexp.MustCompile(`<rect class="in-cs stale" data-op="(\d+)"`).FindAllStringSubmatch(svg, -1) {
				i, _ := strconv.Atoi(m[1])
				got = append(got, i)
			}
			if !slices.Equal(got, want) {
				t.Errorf("stale accesses drawn %v, want %v", got, want)
			}
			if len(want) > 0 && !strings.Contains(svg, ">stale: ") {
				t.Error("the stale access is not named on the drawing")
			}
		})
	}
}

// pausedBy reports whether the pause of h whose start completed at op
// stopped process p.
func pausedBy(h history.History, op, p int) bool {
	if op < 0 || op >= len(h) {
		return false
	}
	o := h[op]
	return o.F == history.FPause && o.Value != nil && slices.Contains(o.Value.Ext().Targets, p)
}

// TestServerRelease checks where an incident puts the server's release:
// the observed one, else the lease's end, else the next grant, the last
// two labelled inferred.
func TestServerRelease(t *testing.T) {
	h := holdIv{proc: 1, key: "k0", start: time.Second, end: 5 * time.Second}
	next := holdIv{proc: 2, start: 2500 * time.Millisecond}
	observed := checker.Window{How: history.ReleaseExpired, Released: 2.001}
	tests := []struct {
		name     string
		w        *checker.Window
		lease    time.Duration
		next     *holdIv
		at       time.Duration
		inferred bool
		label    string
	}{
		{"observed", &observed, time.Second, &next, 2001 * time.Millisecond, false, "lease expired 2.00 s"},
		{"lease", nil, time.Second, &next, 2 * time.Second, true, "lease ran out 2.00 s (inferred)"},
		{"next grant", nil, 0, &next, 2500 * time.Millisecond, true, "released by 2.50 s (inferred)"},
		{"lease past the hold", nil, 10 * time.Second, &next, 2500 * time.Millisecond, true, "released by 2.50 s (inferred)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := serverRelease(h, tt.w, tt.lease, tt.next)
			if !ok || r.at != tt.at || r.inferred != tt.inferred || r.label != tt.label {
				t.Errorf("serverRelease = %+v, %v; want at %s, inferred %v, label %q", r, ok, tt.at, tt.inferred, tt.label)
			}
		})
	}
	if _, ok := serverRelease(h, nil, 0, nil); ok {
		t.Error("a release with nothing to go by")
	}
}

// TestTokenWords checks that ZooKeeper zxids print as epoch:counter.
func TestTokenWords(t *testing.T) {
	if got := tokenWords(checker.ZxidTokens, 4294968093); got != "zxid 1:797" {
		t.Errorf("zxid %q", got)
	}
	if got := tokenShort(checker.ZxidTokens, 4294968093); got != "1:797" {
		t.Errorf("short zxid %q", got)
	}
	if got := tokenShort(checker.NumberTokens, 41); got != "41" {
		t.Errorf("short token %q", got)
	}
}

// TestFaultStyles checks that every fault kind has a colour of its own
// and a legend entry, a clock jump's not an op's teal.
func TestFaultStyles(t *testing.T) {
	var faults []history.Fault
	for _, f := range []string{history.FPause, history.FPartition, history.FClockJump, history.FPause, history.FKill, history.FSessionKill, history.FFailover, history.FClock, history.FSkew, history.FKillWorker} {
		faults = append(faults, history.Fault{F: f})
	}
	css, kinds := faultStyles(faults)
	if len(kinds) != 9 {
		t.Errorf("%d legend entries, want 9 (one per kind): %v", len(kinds), kinds)
	}
	seen := map[[3]int]string{}
	for _, k := range kinds {
		c := faultColour(k.Kind)
		if o, ok := seen[c]; ok {
			t.Errorf("%s and %s share a colour", k.Kind, o)
		}
		seen[c] = k.Kind
		if !strings.Contains(string(css), ".fb.fk-"+k.Kind+",") {
			t.Errorf("no colour for %s", k.Kind)
		}
	}
	if c := faultColour(history.FClockJump); c == [3]int{42, 157, 143} {
		t.Error("a clock jump is teal like acquire ok")
	}
}

// TestIncidentLeaseFromTestJSON checks that with no lease in Meta the
// incident infers the lease's end from the test.json beside the report,
// and says "inferred" either way.
func TestIncidentLeaseFromTestJSON(t *testing.T) {
	fx := loadFixture(t, "pause-double-holder") // no observer: no server release
	in := Input{Meta: fx.meta, History: fx.h, Result: check(t, fx.h, false)}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test.json"), fx.testRaw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir, want string
	}{
		{dir, "lease ran out 2.34 s (inferred)"},
		{t.TempDir(), "released by 2.34 s (inferred)"},
	} {
		path := filepath.Join(tt.dir, "report.html")
		if err := Write(path, in); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if svg := incidentSVG(t, string(b)); !strings.Contains(svg, ">"+tt.want+"<") {
			t.Errorf("with test.json %v: the incident does not say %q", tt.dir == dir, tt.want)
		}
	}
}

// TestAccessWords checks how the incident names an access.
func TestAccessWords(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	for _, tt := range []struct {
		v    *history.Value
		want string
	}{
		{&history.Value{Read: i(13), Wrote: i(14)}, "read 13 and wrote 14"},
		{&history.Value{Read: i(244), Wrote: i(245), Extra: &history.Extra{Rejected: "write", MaxToken: 300}}, "read 244 and tried to write 245"},
		{&history.Value{Extra: &history.Extra{Rejected: "write"}}, "tried to access the resource"},
		{nil, "accessed the resource"},
	} {
		a := access{pr: history.Pair{Invoke: &history.Op{F: history.FCS}, Complete: &history.Op{F: history.FCS, Type: history.OK, Value: tt.v}}}
		if got := a.words(); got != tt.want {
			t.Errorf("words of %+v = %q, want %q", tt.v, got, tt.want)
		}
	}
}
