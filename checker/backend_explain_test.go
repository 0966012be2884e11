package checker

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestBackendStory checks that the double holder of a session advisory
// lock taken through PgBouncer in transaction mode (a golden history cut
// from a real run) says the lock and its release ran on different server
// connections, and that the second grant came on the session that held it.
func TestBackendStory(t *testing.T) {
	assertGoldenStory(t, "pgbouncer-transaction-advisory", "double-holder",
		"Process 8's lock and its release ran on different server connections: it was granted on server session 17135 and released on server session 17139, which did not hold it;",
		"its client reported no new session",
		"and the lock stayed behind on server session 17135.",
		"Process 0 was granted the lock on server session 17135 too, which already held it for process 8")
}

// assertGoldenStory checks that the first anomaly of kind in the golden
// history name (testdata/histories/NAME) has every phrase in its story.
func assertGoldenStory(t *testing.T, name, kind string, phrases ...string) {
	t.Helper()
	h, err := history.ReadFile(filepath.Join("testdata", "histories", name, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	res := Default(Options{}).Check(context.Background(), h)
	for _, a := range res.Anomalies {
		if a.Kind != kind {
			continue
		}
		for _, want := range phrases {
			if !strings.Contains(a.Explanation, want) {
				t.Errorf("story lacks %q: %s", want, a.Explanation)
			}
		}
		return
	}
	t.Fatalf("no %s: %+v", kind, res.Anomalies)
}

// backendHistory is a double holder: process 1 is granted k0 on session
// b1 at 1 s, process 2 on session b2 at 2 s, and process 1 releases at
// 3 s on session rb, reporting released (nil: nothing). event > 0 puts an
// event of process eventProc at that many ms; noRelease ends process 1's
// hold with the history instead; info makes its release info, bare an ok
// with no value.
type backendHistory struct {
	b1, b2, rb       int64
	released         *bool
	event, eventProc int
	noRelease, info  bool
	bare             bool // the release ok carries no value
	bareGrant        bool // process 2's acquire ok carries no value
	pending          bool // process 3's acquire, invoked first, never completes
}

func (c backendHistory) build() history.History {
	ms := func(n int) int64 { return int64(n) * 1e6 }
	var h history.History
	add := func(t int64, p int, ty history.Type, f string, v *history.Value) {
		h = append(h, history.Op{Index: len(h), Time: timeDur(t), Process: p, Type: ty, F: f, Key: "k0", Value: v})
	}
	if c.pending {
		add(ms(800), 3, history.Invoke, history.FAcquire, nil)
	}
	add(ms(900), 1, history.Invoke, history.FAcquire, nil)
	add(ms(1000), 1, history.OK, history.FAcquire, &history.Value{Owner: "p1-a", Token: 1, Backend: c.b1})
	add(ms(1900), 2, history.Invoke, history.FAcquire, nil)
	if c.bareGrant {
		add(ms(2000), 2, history.OK, history.FAcquire, nil)
	} else {
		add(ms(2000), 2, history.OK, history.FAcquire, &history.Value{Owner: "p2-b", Token: 2, Backend: c.b2})
	}
	if c.event > 0 {
		h = append(h, history.Op{Index: len(h), Time: timeDur(ms(c.event)), Process: c.eventProc, Type: history.Info, F: history.FEvent,
			Value: &history.Value{Extra: &history.Extra{Detail: "database session 1 ended; reconnected as session 9"}}})
	}
	if !c.noRelease {
		add(ms(3000), 1, history.Invoke, history.FRelease, &history.Value{Owner: "p1-a", Token: 1})
		switch {
		case c.info:
			add(ms(3100), 1, history.Info, history.FRelease, &history.Value{Released: c.released, Backend: c.rb})
		case c.bare:
			add(ms(3100), 1, history.OK, history.FRelease, nil)
		default:
			add(ms(3100), 1, history.OK, history.FRelease, &history.Value{Released: c.released, Backend: c.rb})
		}
	}
	add(ms(4000), 2, history.Invoke, history.FRelease, &history.Value{Owner: "p2-b", Token: 2})
	add(ms(4100), 2, history.OK, history.FRelease, &history.Value{Released: history.Bool(true), Backend: c.b2})
	// The event goes in time order, after the ops of its instant.
	sort.SliceStable(h, func(i, j int) bool { return h[i].Time < h[j].Time })
	for i := range h {
		h[i].Index = i
	}
	return h
}

// TestBackendSentence is a table test of the sentence alone.
func TestBackendSentence(t *testing.T) {
	no, yes := history.Bool(false), history.Bool(true)
	const moved = "Process 1's lock and its release ran on different server connections: it was granted on server session 11 and released on server session 12"
	const reentrant = "Process 2 was granted the lock on server session 11 too, which already held it for process 1: a session lock is re-entrant"
	cases := []struct {
		name    string
		h       backendHistory
		want    []string
		notWant []string
	}{
		{"no backends recorded", backendHistory{released: no}, nil, []string{"server"}},
		{"release elsewhere, lock left behind", backendHistory{b1: 11, b2: 13, rb: 12, released: no},
			[]string{moved + ", which did not hold it; its client reported no new session", "(transaction pooling), and the lock stayed behind on server session 11."},
			[]string{reentrant, "another client"}},
		{"release elsewhere let go of another's", backendHistory{b1: 11, b2: 13, rb: 12, released: yes},
			[]string{moved + ", which held the lock for another client and let go of that;", "(transaction pooling)."},
			[]string{"stayed behind", "did not hold"}},
		{"release elsewhere, nothing reported", backendHistory{b1: 11, b2: 13, rb: 12},
			[]string{moved + "; its client", "(transaction pooling)."}, []string{"stayed behind", "did not hold", "another client"}},
		{"release on the granting session", backendHistory{b1: 11, b2: 13, rb: 11, released: yes}, nil, []string{"server"}},
		{"release names no session", backendHistory{b1: 11, b2: 13, released: no}, nil, []string{"server"}},
		{"grant names no session", backendHistory{b2: 11, rb: 12, released: no}, nil, []string{"server"}},
		{"second grant on the holding session", backendHistory{b1: 11, b2: 11, rb: 11, released: yes}, []string{reentrant}, []string{"different"}},
		{"both", backendHistory{b1: 11, b2: 11, rb: 12, released: no}, []string{moved, reentrant}, nil},
		{"the client reconnected in between", backendHistory{b1: 11, b2: 13, rb: 12, released: no, event: 2500, eventProc: 1}, nil, []string{"server"}},
		{"the client reconnected as its release ended", backendHistory{b1: 11, b2: 13, rb: 12, released: no, event: 3100, eventProc: 1}, nil, []string{"server"}},
		{"another client reconnected", backendHistory{b1: 11, b2: 13, rb: 12, released: no, event: 2500, eventProc: 2}, []string{moved}, nil},
		{"an event after the release", backendHistory{b1: 11, b2: 13, rb: 12, released: no, event: 3200, eventProc: 1}, []string{moved}, nil},
		{"an event before the grant", backendHistory{b1: 11, b2: 13, rb: 12, released: no, event: 950, eventProc: 1}, []string{moved}, nil},
		{"the client reconnected as it was granted", backendHistory{b1: 11, b2: 13, rb: 12, released: no, event: 1000, eventProc: 1}, nil, []string{"server"}},
		{"no release", backendHistory{b1: 11, b2: 13, noRelease: true}, nil, []string{"server"}},
		{"an acquire that never completed", backendHistory{b1: 11, b2: 13, rb: 12, released: no, pending: true}, []string{moved}, []string{reentrant}},
		{"a grant with no value", backendHistory{b1: 11, rb: 12, released: no, bareGrant: true}, []string{moved}, []string{reentrant}},
		{"release with no value", backendHistory{b1: 11, b2: 13, bare: true}, nil, []string{"server"}},
		{"release in doubt", backendHistory{b1: 11, b2: 13, rb: 12, released: no, info: true}, nil, []string{"server"}},
	}
	// Each case twice: numbered from 0, as the recorder numbers ops (the
	// grant is found by its index), and from 100, as a history from
	// elsewhere may be (it is searched for).
	for _, c := range cases {
		for _, from := range []int{0, 100} {
			t.Run(fmt.Sprintf("%s/from %d", c.name, from), func(t *testing.T) { checkBackendSentence(t, c.h, from, c.want, c.notWant) })
		}
	}
}

// checkBackendSentence builds b's history numbered from from and checks
// the sentence of its double holder has every phrase of want and none of
// notWant.
func checkBackendSentence(t *testing.T, b backendHistory, from int, want, notWant []string) {
	t.Helper()
	h := b.build()
	for i := range h {
		h[i].Index += from
	}
	if err := history.Validate(h); err != nil {
		t.Fatalf("bad test history: %v", err)
	}
	a := newAnalysis(h)
	holds := a.getHolds()
	var e, l *hold
	for i := range holds {
		switch holds[i].proc {
		case 1:
			e = &holds[i]
		case 2:
			l = &holds[i]
		}
	}
	if e == nil || l == nil {
		t.Fatalf("holds %+v", holds)
	}
	got := backendSentence(a, *e, *l)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("sentence lacks %q: %q", w, got)
		}
	}
	for _, w := range notWant {
		if strings.Contains(got, w) {
			t.Errorf("sentence has %q: %q", w, got)
		}
	}
	if len(want) == 0 && got != "" {
		t.Errorf("got %q, want nothing", got)
	}
}

// TestMarksTellNothing: a worker's marks (its write sent, a renewal) are
// neither a reconnection nor a lock client's report a story quotes.
func TestMarksTellNothing(t *testing.T) {
	ev := func(i, p int, at time.Duration, detail string) history.Op {
		return history.Op{Index: i, Time: at, Process: p, Type: history.Info, F: history.FEvent,
			Value: &history.Value{Extra: &history.Extra{Detail: detail}}}
	}
	h := history.History{
		ev(0, 1, 10*time.Millisecond, "write sent: k0 (token 3)"),
		ev(1, 1, 20*time.Millisecond, "renewal sent: k0 (owner a)"),
		ev(2, 2, 30*time.Millisecond, "database session 12 ended; reconnected as session 13"),
	}
	if reconnected(h, 1, 0, time.Second) {
		t.Error("process 1's marks read as a reconnection")
	}
	if !reconnected(h, 2, 0, time.Second) {
		t.Error("process 2's new session not read as a reconnection")
	}
	evs := eventsByProcess(h)
	if len(evs[1]) != 0 || len(evs[2]) != 1 {
		t.Errorf("events by process %v: want none of process 1 (marks), one of process 2", evs)
	}
}
