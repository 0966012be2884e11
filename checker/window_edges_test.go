package checker

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// The edges of the windows checker, each case a boundary of window.go's
// joins that a mutant of it moves (issue 25): which release ends a grant,
// which grant a release ends, where a hold's accesses begin and end, when
// the holder was told, and the order of the windows. Each case compares
// the whole exported window.

// learnedAt is a Window's Learned.
func learnedAt(s float64) *float64 { return &s }

func TestWindowEdges(t *testing.T) {
	gone := "its release found the lock gone"
	lock0 := []string{"lock0"}
	tests := []struct {
		name     string
		h        *builder
		want     []Window
		observed int
	}{
		{"of two releases of a grant on a node, the earlier instant ends it",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.3, 0, history.ReleaseDeleted, "a", "lock0").
				observed(2.5, 2.01, history.ReleaseExpired, "a", "lock0").release(0, 3, 3.01, false, "a"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.5,
				Learned: learnedAt(3.01), LearnedBy: gone, Length: 1, Class: ClassStopped, Ops: []int{1, 3, 5}}}, 2},
		{"of two releases of a grant on a node at one instant, the first heard ends it",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.3, 0, history.ReleaseDeleted, "a", "lock0").
				observed(2.4, 2.3, history.ReleaseExpired, "a", "lock0").release(0, 3, 3.01, false, "a"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseDeleted, Released: 2.3, Heard: 2.3,
				Learned: learnedAt(3.01), LearnedBy: gone, Length: 0.71, Class: ClassStopped, Ops: []int{1, 2, 5}}}, 2},
		{"a grant completed at the release's instant is the one it ended",
			new(builder).acquire(0, 1, 1.01, 1, "a").release(0, 1.5, 1.51, true, "a").acquire(1, 1.9, 2, 2, "b").
				observed(2.05, 2, history.ReleaseExpired, "", "lock0").release(1, 3, 3.01, false, "b"),
			[]Window{{Key: "k", Process: 1, Owner: "b", Token: 2, Nodes: lock0, How: history.ReleaseExpired, Released: 2, Heard: 2.05,
				Learned: learnedAt(3.01), LearnedBy: gone, Length: 1.01, Class: ClassStopped, Ops: []int{5, 6, 8}}}, 1},
		{"the node names the grant: not the later one on another node",
			new(builder).acquireOn(0, 1, 1.01, "a", "lock0").acquireOn(1, 1.1, 1.11, "b", "lock1").
				observed(2.05, 2, history.ReleaseExpired, "", "lock0").release(0, 3, 3.01, false, "a").release(1, 3.1, 3.11, true, "b"),
			[]Window{{Key: "k", Owner: "a", Nodes: lock0, How: history.ReleaseExpired, Released: 2, Heard: 2.05,
				Learned: learnedAt(3.01), LearnedBy: gone, Length: 1.01, Class: ClassStopped, Ops: []int{1, 4, 6}}}, 1},
		{"of two grants with one token, the release's owner names the grant",
			new(builder).acquire(0, 1, 1.01, 5, "a").release(0, 1.5, 1.51, true, "a").acquire(1, 1.9, 2, 5, "b").
				observedLease(2.5, history.ReleaseLease, "b", 5, "").release(1, 3, 3.01, false, "b"),
			[]Window{{Key: "k", Process: 1, Owner: "b", Token: 5, How: history.ReleaseLease, Released: 2.5, Heard: 2.5,
				Learned: learnedAt(3.01), LearnedBy: gone, Length: 0.51, Class: ClassStopped, Ops: []int{5, 6, 8}}}, 1},
		{"a release on no named node ends a grant of one node",
			new(builder).acquireOn(0, 1, 1.01, "a", "lock0").observedLease(2.05, history.ReleaseExpired, "a", 0, "").
				release(0, 3, 3.01, false, "a"),
			[]Window{{Key: "k", Owner: "a", How: history.ReleaseExpired, Released: 2.05, Heard: 2.05,
				Learned: learnedAt(3.01), LearnedBy: gone, Length: 0.96, Class: ClassStopped, Ops: []int{1, 2, 4}}}, 1},
		{"a release on no named node does not end a grant of two",
			new(builder).acquireOn(0, 1, 1.01, "a", "lock0", "lock1").probe(0.5, 0.01, "lock0").probe(0.6, 0.01, "lock1").
				observedLease(2.05, history.ReleaseExpired, "a", 0, "").release(0, 3, 3.01, false, "a"),
			nil, 1},
		{"a grant by two of four watched nodes was never a majority: no window",
			new(builder).acquireOn(0, 1, 1.01, "a", "lock0", "lock1").probe(0.5, 0.01, "lock0").probe(0.6, 0.01, "lock1").
				probe(0.7, 0.01, "lock2").probe(0.8, 0.01, "lock3").observed(2.5, 2.1, history.ReleaseExpired, "a", "lock0").
				observed(2.5, 2.2, history.ReleaseExpired, "a", "lock1").release(0, 4, 4.01, false, "a"),
			nil, 2},
		{"an access invoked as the grant completed is in the hold",
			new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.01, 3, 0, 0).observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
				release(0, 3.1, 3.11, false, "a"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				Learned: learnedAt(3.11), LearnedBy: gone, Length: 1.1, Accesses: 1, Class: ClassBeforeKnown, Ops: []int{1, 3, 6}}}, 1},
		{"an access invoked as the release was is not in the hold",
			expiredAt201().
				cs(0, 3, 3, 0, 0).release(0, 3, 3.01, false, "a"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				Learned: learnedAt(3.01), LearnedBy: gone, Length: 1, Class: ClassStopped, Ops: []int{1, 2, 6}}}, 1},
		{"told at the history's first instant, before the release, then wrote",
			new(builder).acquire(0, 0, 0, 1, "a").event(0, 0, "session lost").observed(0.5, 0.4, history.ReleaseExpired, "a", "lock0").
				cs(0, 1, 1.1, 0, 0).release(0, 2, 2.01, false, "a"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 0.4, Heard: 0.5,
				Learned: learnedAt(0), LearnedBy: `its lock client reported "session lost"`, Length: 0, Accesses: 1, After: 1,
				Class: ClassToldThenWrote, Ops: []int{1, 3, 2}}}, 1},
		{"an event while its release is in flight tells it",
			expiredAt201().
				add(3, 0, history.Invoke, history.FRelease, "k", &history.Value{Owner: "a"}).event(3.002, 0, "reconnected").
				event(3.005, 0, "lock lost").add(3.01, 0, history.OK, history.FRelease, "k", &history.Value{Released: history.Bool(true)}),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				Learned: learnedAt(3.005), LearnedBy: `its lock client reported "lock lost"`, Length: 0.995, Class: ClassStopped,
				Ops: []int{1, 2, 5}}}, 1},
		{"its release's completion ends what could tell it: not its next grant's failed release",
			expiredAt201().
				release(0, 3, 3, true, "a").acquire(0, 4, 4.01, 2, "a").releaseFail(0, 5, 5.01),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				LearnedBy: "never told: it released at 3.00 s", Length: 0.99, Class: ClassStopped, Ops: []int{1, 2}}}, 1},
		{"its retirement's completion ends what could tell it",
			expiredAt201().
				crash(0, 3).event(3.5, 0, "session expired"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				LearnedBy: "never told: it was retired at 3.00 s", Length: 0.99, Class: ClassStopped, Ops: []int{1, 2}}}, 1},
		{"held to the end of the history, told by a late event",
			expiredAt201().
				cs(0, 2.1, 2.2, 0, 0).event(2.5, 0, "lease expired").acquire(1, 2.6, 3, 2, "b"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				Learned: learnedAt(2.5), LearnedBy: `its lock client reported "lease expired"`, Length: 0.49, Accesses: 1,
				Class: ClassBeforeKnown, Ops: []int{1, 2, 5}}}, 1},
		{"an access left open at the end is counted",
			expiredAt201().
				add(2.1, 0, history.Invoke, history.FCS, "k", nil).event(2.5, 1, "idle"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				LearnedBy: "never told: it held the lock to the end of the history at 2.50 s", Length: 0.49, Accesses: 1,
				Class: ClassBeforeKnown, Ops: []int{1, 2}}}, 1},
		{"a critical section refused for a lost lock with a reply that names no refusal tells it",
			expiredAt201().
				pair(0, history.FCS, "k", 2.1, 2.2, history.Fail, nil, &history.Value{Token: 1}).withError("lease expired").
				release(0, 3, 3.01, false, "a"),
			[]Window{{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.01, Heard: 2.05,
				Learned: learnedAt(2.2), LearnedBy: `its lock client refused its critical section ("lease expired")`, Length: 0.19,
				Class: ClassStopped, Ops: []int{1, 2, 4}}}, 1},
		{"windows in order of release, then of grant",
			new(builder).acquire(0, 1, 1.01, 1, "a").acquire(1, 1.1, 1.11, 2, "b").acquire(2, 1.2, 1.21, 3, "c").
				observed(2.05, 2, history.ReleaseExpired, "c", "lock0").observed(2.06, 2, history.ReleaseExpired, "b", "lock0").
				observed(2.55, 2.5, history.ReleaseExpired, "a", "lock0").
				release(0, 3, 3.01, false, "a").release(1, 3.1, 3.11, false, "b").release(2, 3.2, 3.21, false, "c"),
			[]Window{
				{Key: "k", Process: 1, Owner: "b", Token: 2, Nodes: lock0, How: history.ReleaseExpired, Released: 2, Heard: 2.06,
					Learned: learnedAt(3.11), LearnedBy: gone, Length: 1.11, Class: ClassStopped, Ops: []int{3, 7, 12}},
				{Key: "k", Process: 2, Owner: "c", Token: 3, Nodes: lock0, How: history.ReleaseExpired, Released: 2, Heard: 2.05,
					Learned: learnedAt(3.21), LearnedBy: gone, Length: 1.21, Class: ClassStopped, Ops: []int{5, 6, 14}},
				{Key: "k", Owner: "a", Token: 1, Nodes: lock0, How: history.ReleaseExpired, Released: 2.5, Heard: 2.55,
					Learned: learnedAt(3.01), LearnedBy: gone, Length: 0.51, Class: ClassStopped, Ops: []int{1, 8, 10}},
			}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Window
			for _, w := range windowsOf(t, tt.h, tt.observed) {
				got = append(got, w.export())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("windows\n got %s\nwant %s", windowsJSON(got), windowsJSON(tt.want))
			}
		})
	}
}

// windowsOf is the lost-lock windows of h's history, which must be valid
// and have observed releases in it.
func windowsOf(t *testing.T, h *builder, observed int) []lostWindow {
	t.Helper()
	ops := h.build()
	if err := history.Validate(ops); err != nil {
		t.Fatalf("test history: %v", err)
	}
	ws, _, n := lostWindows(newAnalysis(ops))
	if n != observed {
		t.Errorf("observed %d releases, want %d", n, observed)
	}
	return ws
}

// windowsJSON renders ws for a failure message.
func windowsJSON(ws []Window) string {
	b, _ := json.Marshal(ws)
	return string(b)
}

// TestWindowSentenceEdges: the sentence's cases at their boundaries.
func TestWindowSentenceEdges(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    *builder
		want string
	}{
		{"told at the history's first instant",
			new(builder).acquire(0, 0, 0, 1, "a").event(0, 0, "session lost").observed(0.5, 0.4, history.ReleaseExpired, "a", "lock0").
				cs(0, 1, 1.1, 0, 0).release(0, 2, 2.01, false, "a"),
			"The server's side: lock0 expired key k at 0.40 s (the observer heard it at 0.50 s); process 0 had been told at 0.00 s, " +
				"when its lock client reported \"session lost\", before the server let go, and accessed the resource once in between, " +
				"1 after it was told."},
		{"told at the release's instant",
			expiredAt201().
				event(2.01, 0, "lease expired").crash(0, 2.8),
			"The server's side: lock0 expired key k at 2.01 s (the observer heard it at 2.05 s); process 0 learned of it at 2.01 s, " +
				"when its lock client reported \"lease expired\", 0.00 s later, and made no access in between."},
		{"a way of release it does not know, three accesses",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.05, 2.01, "moved", "a", "lock0").
				cs(0, 2.1, 2.15, 0, 0).cs(0, 2.2, 2.25, 1, 0).cs(0, 2.3, 2.35, 2, 0).release(0, 3, 3.01, false, "a"),
			"The server's side: lock0 released key k at 2.01 s (the observer heard it at 2.05 s); process 0 learned of it at 3.01 s, " +
				"when its release found the lock gone, 1.00 s later, and accessed the resource 3 times in between, before it could know."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := oneWindowStory(t, tt.h); got != tt.want {
				t.Fatalf("sentence\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestWindowsStatsEdges: the Stats of a history with probes only (every
// figure, at zero) and of one with releases but no probe (no observer
// lag).
func TestWindowsStatsEdges(t *testing.T) {
	for _, tt := range []struct {
		name       string
		h          *builder
		want, lack []string
	}{
		{"probes only",
			new(builder).acquire(0, 1, 1.01, 1, "a").probe(1.5, 0.02, "lock0").release(0, 2, 2.01, true, "a"),
			[]string{`"server_releases":0`, `"probes":1`, `"observer_lag":{"count":1,"max_s":0.02,"median_s":0.02,"p99_s":0.02}`,
				`"windows":[]`, `"window":{"count":0}`,
				`"classes":{"stopped in time":0,"wrote after it was told":0,"wrote before it could know":0}`},
			nil},
		{"releases without probes",
			expiredAt201().release(0, 3, 3.01, false, "a"),
			[]string{`"server_releases":1`, `"probes":0`, `"window":{"count":1,"max_s":1,"median_s":1,"p99_s":1}`,
				`"classes":{"stopped in time":1,"wrote after it was told":0,"wrote before it could know":0}`},
			[]string{"observer_lag"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewWindows().Check(context.Background(), tt.h.build())
			b, err := json.Marshal(r.Stats)
			if err != nil || r.Valid != Valid {
				t.Fatalf("%v %v", r.Valid, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("stats lack %s:\n%s", w, b)
				}
			}
			for _, w := range tt.lack {
				if strings.Contains(string(b), w) {
					t.Errorf("stats have %s:\n%s", w, b)
				}
			}
		})
	}
}

// TestResourceFencedStat pins fencing.go's resource_fenced, a change since
// 18ae369 that issue 25's mutation run covers with window.go: a run whose
// grants carry tokens but whose critical sections do not is not fenced at
// the resource; one whose critical sections carry them is.
func TestResourceFencedStat(t *testing.T) {
	for _, tt := range []struct {
		fenced bool
	}{{false}, {true}} {
		r := NewFencing().Check(context.Background(), new(builder).cycles(3, 0, 1, 0, tt.fenced).build())
		if r.Stats["fenced"] != true || r.Stats["resource_fenced"] != tt.fenced {
			t.Errorf("fenced critical sections %v: stats %v", tt.fenced, r.Stats)
		}
	}
}
