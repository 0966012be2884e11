package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// kinds returns the sorted distinct kinds of anomalies, fenced ones only
// when fenced is true.
func kinds(as []Anomaly, fenced bool) []string {
	seen := make(map[string]bool)
	out := []string{}
	for _, a := range as {
		if a.Fenced == fenced && !seen[a.Kind] {
			seen[a.Kind] = true
			out = append(out, a.Kind)
		}
	}
	sort.Strings(out)
	return out
}

// find returns the first anomaly of kind, or fails the test.
func find(t *testing.T, r Result, kind string) Anomaly {
	t.Helper()
	for _, a := range r.Anomalies {
		if a.Kind == kind {
			return a
		}
	}
	t.Fatalf("no %s anomaly in %s result: %+v", kind, r.Checker, r.Anomalies)
	return Anomaly{}
}

type checkerCase struct {
	name    string
	h       history.History
	want    Validity
	kinds   []string // expected non-fenced kinds; nil means do not compare
	fenced  []string // expected fenced kinds; nil means do not compare
	inspect func(t *testing.T, r Result)
}

func runCases(t *testing.T, c Checker, cases []checkerCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Check(context.Background(), tc.h)
			if r.Valid != tc.want {
				t.Fatalf("valid = %v, want %v (error %q)\nanomalies: %s", r.Valid, tc.want, r.Error, dump(r.Anomalies))
			}
			if tc.kinds != nil && !slices.Equal(kinds(r.Anomalies, false), tc.kinds) {
				t.Errorf("kinds = %v, want %v\n%s", kinds(r.Anomalies, false), tc.kinds, dump(r.Anomalies))
			}
			if tc.fenced != nil && !slices.Equal(kinds(r.Anomalies, true), tc.fenced) {
				t.Errorf("fenced kinds = %v, want %v\n%s", kinds(r.Anomalies, true), tc.fenced, dump(r.Anomalies))
			}
			if r.Anomalies == nil {
				t.Error("Anomalies is nil")
			}
			if tc.inspect != nil {
				tc.inspect(t, r)
			}
		})
	}
}

func dump(as []Anomaly) string {
	b, _ := json.MarshalIndent(as, "", "  ")
	return string(b)
}

func TestMutex(t *testing.T) {
	runCases(t, NewMutex(Options{}), []checkerCase{
		{name: "clean", h: clean(), want: Valid, kinds: []string{}},
		{name: "double holder", h: doubleHolderPause(), want: Invalid, kinds: []string{"nonlinearizable"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "nonlinearizable")
				if a.Key != "k" {
					t.Errorf("key = %q, want k", a.Key)
				}
				if !slices.Contains(a.Processes, 1) || !slices.Contains(a.Processes, 3) {
					t.Errorf("processes = %v, want 3 and 1", a.Processes)
				}
				if !strings.Contains(a.Explanation, "processes 3 and 1 both held lock k at 3.35 s") ||
					!strings.Contains(a.Explanation, "Process 3 asked for it at 2.30 s, was granted it at 2.31 s (token 42) and did not start its release until 5.60 s") {
					t.Errorf("explanation does not name the holder: %s", a.Explanation)
				}
				if r.Visualize == nil {
					t.Fatal("no Visualize on a failed Porcupine check")
				}
				var buf bytes.Buffer
				if err := r.Visualize(&buf); err != nil || !strings.Contains(buf.String(), "<html") {
					t.Errorf("visualization: %v, %d bytes", err, buf.Len())
				}
			}},
		{name: "fenced double holder still fails the mutex", h: fencedPauseRejected(), want: Invalid},
		{name: "release by a non-holder", want: Invalid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").release(1, 0.2, 0.3, true, "b").build()},
		{name: "second acquire while held", want: Invalid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").acquire(1, 0.2, 0.3, 2, "b").build()},
		{name: "crash frees the lock", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").csInfo(0, 0.2, 0.3).crash(0, 0.4).acquire(1, 0.5, 0.6, 2, "b").build()},
		{name: "indeterminate release frees the lock", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").pair(0, history.FRelease, "k", 0.2, 0.3, history.Info, nil, nil).
			crash(0, 0.4).acquire(1, 0.25, 0.6, 2, "b").build()},
		{name: "acquire that never completed", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").release(0, 0.2, 0.3, true, "a").
			add(0.4, 1, history.Invoke, history.FAcquire, "k", nil).build()},
		{name: "info heavy", h: infoHeavy(), want: Valid,
			inspect: func(t *testing.T, r Result) {
				if n := r.Stats["indeterminate_acquires_dropped"]; n != 50 {
					t.Errorf("dropped %v indeterminate acquires, want 50", n)
				}
			}},
		{name: "keys are independent", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").
			pair(1, history.FAcquire, "other", 0.2, 0.3, history.OK, nil, &history.Value{Owner: "b"}).build()},
	})
}

func TestMutexInfoHeavyIsFast(t *testing.T) {
	start := time.Now()
	r := NewMutex(Options{Timeout: 10 * time.Second}).Check(context.Background(), infoHeavy())
	if r.Valid != Valid {
		t.Fatalf("valid = %v (%s)", r.Valid, r.Error)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestResource(t *testing.T) {
	runCases(t, NewResource(Options{}), []checkerCase{
		{name: "clean", h: clean(), want: Valid, kinds: []string{}},
		{name: "paused writer loses an update", h: doubleHolderPause(), want: Invalid, kinds: []string{"lost-update"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "lost-update")
				if !slices.Equal(a.Processes, []int{3, 1}) {
					t.Errorf("processes = %v, want [3 1]", a.Processes)
				}
				want := "processes 3 and 1 both read 41 from the resource for lock k and both wrote 42: one update was lost (3's critical section ran 2.35 s–5.41 s, 1's 3.36 s–3.40 s)."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
				if len(a.Nemesis) != 1 || a.Nemesis[0] != "pause of process 3 from 2.40 s to 5.40 s" {
					t.Errorf("nemesis = %q", a.Nemesis)
				}
				if r.Visualize == nil {
					t.Error("no Visualize")
				}
			}},
		{name: "late in-doubt write", h: lateInDoubtWrite(), want: Invalid, kinds: []string{"lost-update"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "lost-update")
				if !slices.Equal(a.Processes, []int{5, 1, 2}) {
					t.Errorf("processes = %v, want [5 1 2]", a.Processes)
				}
				want := "Processes 1 and 2 both read 42 from the resource for lock k and both wrote 43, but 1's critical section (2.82 s–2.83 s) returned before 2's (3.02 s–3.03 s) began, so the register was set back to 42 in between: most likely by process 5's critical section, invoked at 2.12 s and left in doubt (info at 2.62 s, op 331), whose process was retired at 2.63 s: it read 41 before 42 was first written, and its write of 42 landed late. One update was lost."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
			}},
		{name: "refused stale write", h: fencedPauseRejected(), want: Valid},
		{name: "accepted stale write", h: fencedPauseAccepted(), want: Invalid, kinds: []string{"lost-update"}},
		{name: "indeterminate write that landed", want: Valid, h: (&builder{}).
			cs(0, 0, 0.1, 0, 0).csInfo(1, 0.2, 0.3).crash(1, 0.31).cs(2, 0.4, 0.5, 2, 0).build()},
		{name: "indeterminate write that did not land", want: Valid, h: (&builder{}).
			cs(0, 0, 0.1, 0, 0).csInfo(1, 0.2, 0.3).crash(1, 0.31).cs(2, 0.4, 0.5, 1, 0).build()},
		{name: "known read, write unknown, never landed", want: Valid, h: (&builder{}).
			cs(0, 0, 0.1, 0, 0).
			pair(1, history.FCS, "k", 0.2, 0.3, history.Info, nil, &history.Value{Read: history.Int64(1)}).
			cs(2, 0.4, 0.5, 1, 0).cs(2, 0.6, 0.7, 2, 0).build()},
		{name: "known read, write landed late", want: Valid, h: (&builder{}).
			cs(0, 0, 0.1, 0, 0).
			pair(1, history.FCS, "k", 0.2, 0.3, history.Info, nil, &history.Value{Read: history.Int64(1)}).
			cs(2, 0.4, 0.5, 2, 0).build()},
		{name: "value out of nowhere", want: Invalid, kinds: []string{"nonlinearizable"}, h: (&builder{}).
			cs(0, 0, 0.1, 0, 0).cs(1, 0.2, 0.3, 5, 0).build(),
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "nonlinearizable")
				if !strings.Contains(a.Explanation, "read 5") {
					t.Errorf("explanation: %s", a.Explanation)
				}
			}},
		{name: "two indeterminate writes explain a jump of two", want: Valid, h: (&builder{}).
			csInfo(0, 0, 0.1).crash(0, 0.11).csInfo(1, 0.2, 0.3).crash(1, 0.31).cs(2, 0.4, 0.5, 2, 0).build()},
		{name: "one indeterminate write does not explain a jump of two", want: Invalid, h: (&builder{}).
			csInfo(0, 0, 0.1).crash(0, 0.11).cs(2, 0.4, 0.5, 2, 0).build()},
		{name: "indeterminate write cannot land before it was invoked", want: Invalid, h: (&builder{}).
			cs(2, 0, 0.1, 1, 0).csInfo(0, 0.2, 0.3).crash(0, 0.31).build()},
	})
}

func TestFencing(t *testing.T) {
	runCases(t, NewFencing(), []checkerCase{
		{name: "no tokens", h: plainDelForeignRelease(), want: Valid, inspect: func(t *testing.T, r Result) {
			if r.Stats["fenced"] != false {
				t.Errorf("fenced = %v, want false", r.Stats["fenced"])
			}
		}},
		{name: "rejected stale write", h: fencedPauseRejected(), want: Valid, kinds: []string{}, fenced: []string{"stale-write-rejected"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stale-write-rejected")
				want := "the resource refused process 3's write with token 42 at 5.41 s because it had already seen token 43."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
				if r.Stats["stale_writes_rejected"] != 1 {
					t.Errorf("stale_writes_rejected = %v", r.Stats["stale_writes_rejected"])
				}
			}},
		{name: "accepted stale write", h: fencedPauseAccepted(), want: Invalid, kinds: []string{"stale-write"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stale-write")
				want := "process 3 wrote with token 42 at 5.41 s after process 1's write with token 43 was accepted at 3.40 s: both read 41 from the resource for lock k, so 1's token reached the resource before 3's write, and the resource accepted a stale token."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
			}},
		{name: "accepted stale write, tokens not echoed", h: fencedNoEchoAccepted(), want: Invalid, kinds: []string{"stale-write"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stale-write")
				if !strings.Contains(a.Explanation, "process 3 wrote with token 42 at 5.41 s after process 1's write with token 43") {
					t.Errorf("explanation: %s", a.Explanation)
				}
			}},
		{name: "reply contradicts the token sent", h: tokenMismatch(), want: Unknown,
			inspect: func(t *testing.T, r Result) {
				if !strings.Contains(r.Error, "process 0's cs reply carries token 7, but the controller sent token 4") {
					t.Errorf("error %q", r.Error)
				}
			}},
		{name: "stale holder read the newer holder's write", h: staleReadsNewerWrite(), want: Invalid, kinds: []string{"stale-write"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stale-write")
				want := "Process 3's critical section (2.35 s–5.41 s) read 42, which process 1 wrote with token 43; yet its own write with token 42 was accepted at 5.41 s: the resource for lock k had seen token 43 before and accepted a stale token."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
				if !slices.Equal(a.Processes, []int{3, 1}) {
					t.Errorf("processes = %v", a.Processes)
				}
			}},
		{name: "token order", h: tokenOrderHistory(), want: Invalid, kinds: []string{"stale-write", "token-order"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "token-order")
				if !slices.Equal(a.Processes, []int{2, 1}) {
					t.Errorf("processes = %v, want [2 1]", a.Processes)
				}
			}},
		{name: "stale write after the other returned", want: Invalid, kinds: []string{"stale-write"}, h: (&builder{}).
			cs(0, 0, 0.1, 0, 9).cs(1, 0.2, 0.3, 1, 8).build(),
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stale-write")
				want := "process 1 wrote with token 8 at 0.30 s after process 0's write with token 9 was accepted at 0.10 s: the resource for lock k accepted a stale token."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
			}},
		{name: "equal tokens", want: Invalid, kinds: []string{"token-order"}, h: (&builder{}).
			acquire(0, 0, 0.1, 7, "a").release(0, 0.2, 0.3, true, "a").acquire(1, 0.4, 0.5, 7, "b").build()},
		{name: "concurrent grants are not ordered", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.3, 8, "a").acquire(1, 0.1, 0.2, 7, "b").build()},
	})
}

func TestOverlap(t *testing.T) {
	runCases(t, NewOverlap(Options{}), []checkerCase{
		{name: "clean", h: clean(), want: Valid, kinds: []string{}},
		{name: "double holder", h: doubleHolderPause(), want: Invalid, kinds: []string{"double-holder"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "double-holder")
				if !slices.Equal(a.Processes, []int{3, 1}) || a.Start != at(3.35) || a.End != at(3.45) {
					t.Errorf("processes %v from %v to %v, want [3 1] from 3.35s to 3.45s", a.Processes, a.Start, a.End)
				}
				want := "processes 3 and 1 both held lock k from 3.35 s to 3.45 s: 3 was granted it at 2.31 s (token 42) and did not start its release until 5.60 s; 1 was granted it at 3.35 s (token 43) and did not start its release until 3.45 s. A pause of process 3 from 2.40 s to 5.40 s was in force: its lease ran out while it was stopped."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
				if a.Fenced {
					t.Error("unfenced anomaly marked fenced")
				}
			}},
		{name: "crash ends a hold", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").csInfo(0, 0.2, 0.3).crash(0, 0.4).acquire(1, 0.5, 0.6, 2, "b").build()},
		{name: "hold to the end of the history", want: Invalid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").acquire(1, 0.5, 0.6, 2, "b").release(1, 0.7, 0.8, true, "b").build(),
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "double-holder")
				if !strings.Contains(a.Explanation, "still held it when the history ended at 0.80 s") {
					t.Errorf("explanation: %s", a.Explanation)
				}
			}},
		{name: "redlock majorities", want: Invalid, h: redlockClockJump(),
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "double-holder")
				want := "processes 0 and 1 both held lock k from 0.60 s to 0.70 s: 0 was granted it at 0.10 s on lock0, lock1 and lock2 and did not start its release until 0.90 s; 1 was granted it at 0.60 s on lock2, lock3 and lock4 and did not start its release until 0.70 s. A clock-jump of node lock2 from 0.50 s to 2.00 s was in force: lock2's wall clock jumped forward, so the first holder's key on lock2 expired early and lock2 counted towards a second majority."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
			}},
		{name: "plain DEL", h: plainDelForeignRelease(), want: Invalid, kinds: []string{"double-holder", "foreign-release"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "foreign-release")
				want := "process 3's release at 5.61 s deleted the lock key k held by process 1 (owner o1), granted at 3.35 s: a plain DEL does not check the owner. A pause of process 3 from 2.40 s to 5.40 s was in force: its lease ran out while it was stopped."
				if a.Explanation != want {
					t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
				}
				if !slices.Equal(a.Processes, []int{3, 1}) {
					t.Errorf("processes = %v", a.Processes)
				}
				if r.Stats["foreign_releases"] != 2 || r.Stats["double_holders"] != 2 {
					t.Errorf("stats = %v", r.Stats)
				}
			}},
	})
	runCases(t, NewOverlap(Options{Fenced: true}), []checkerCase{
		{name: "fenced double holder", h: fencedPauseRejected(), want: Invalid, kinds: []string{}, fenced: []string{"double-holder"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "double-holder")
				if !strings.HasSuffix(a.Explanation, "The lock is fenced: the resource refused 1 stale access from process 3 after 1 was granted the lock.") {
					t.Errorf("explanation: %s", a.Explanation)
				}
			}},
	})
}

func TestLiveness(t *testing.T) {
	runCases(t, NewLiveness(Options{}), []checkerCase{
		{name: "clean", h: clean(), want: Valid},
		{name: "no grants", h: noGrants(), want: Unknown, kinds: []string{},
			inspect: wantError("no process was ever granted a lock: the run proves nothing (10 acquire attempts: 10 failed, 0 indeterminate)")},
		{name: "empty history", h: history.History{}, want: Unknown, kinds: []string{},
			inspect: wantError("no process was ever granted a lock: the run proves nothing (0 acquire attempts: 0 failed, 0 indeterminate)")},
		{name: "grants stopped, bound disabled", h: stuckLockHistory(), want: Unknown, kinds: []string{},
			inspect: wantError("grants stopped at 1.01 s, 21.09 s before the end of the history, while 40 acquires failed or went unanswered and no fault was in force: " +
				"a lock server or the workers stopped working, so the rest of the run tested nothing")},
		{name: "grants stopped under a fault", h: grantsStoppedUnder(history.FPartition), want: Valid},
		{name: "a server exited", h: withServerExit(clean(), 2.5), want: Unknown, kinds: []string{},
			inspect: wantError("server lock0 exited at 2.50 s with no fault asking for it (pid 7, signal: killed): " +
				"the run ended there, and what it recorded proves nothing about the lock")},
		{name: "a server exit with no value", h: func() history.History {
			h := withServerExit(clean(), 2.5)
			for i := range h {
				if h[i].F == history.FServerExit {
					h[i].Value = nil
				}
			}
			return h
		}(), want: Unknown, kinds: []string{},
			inspect: wantError("a server exited at 2.50 s with no fault asking for it (it exited): " +
				"the run ended there, and what it recorded proves nothing about the lock")},
		{name: "a server exit naming no node", h: func() history.History {
			h := withServerExit(clean(), 2.5)
			for i := range h {
				if h[i].F == history.FServerExit {
					h[i].Value = &history.Value{Extra: &history.Extra{Detail: "pid 9, exit status 1"}}
				}
			}
			return h
		}(), want: Unknown, kinds: []string{},
			inspect: wantError("a server exited at 2.50 s with no fault asking for it (pid 9, exit status 1): " +
				"the run ended there, and what it recorded proves nothing about the lock")},
		{name: "a server exited, no grants", h: withServerExit(noGrants(), 0.5), want: Unknown, kinds: []string{},
			inspect: wantError("no process was ever granted a lock; server lock0 exited at 0.50 s with no fault asking for it (pid 7, signal: killed): " +
				"the run ended there, and what it recorded proves nothing about the lock")},
		{name: "grants stopped, no acquire after", h: grantsStoppedIdle(), want: Valid},
		{name: "stall of exactly the minimum", h: grantsStall(stallMin, 0), want: Valid},
		{name: "stall just over the minimum", h: grantsStall(stallMin+time.Millisecond, 0), want: Unknown},
		{name: "stall of exactly half the history", h: grantsStall(stallMin+time.Second, stallMin+time.Second), want: Valid},
		{name: "stall just over half the history", h: grantsStall(stallMin+time.Second, stallMin+time.Second-time.Millisecond), want: Unknown},
	})
	runCases(t, NewLiveness(Options{StuckBound: 10 * time.Second}), []checkerCase{
		{name: "stuck lock", h: stuckLockHistory(), want: Invalid, kinds: []string{"stuck-lock"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stuck-lock")
				if a.Start != at(2.03) {
					t.Errorf("start = %v, want the crash at 2.03 s", a.Start)
				}
				if !strings.Contains(a.Explanation, "from 2.03 s, when process 0 (granted it at 1.01 s) was retired,") {
					t.Errorf("explanation: %s", a.Explanation)
				}
			}},
		{name: "long critical section is not stuck", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").acquireFail(1, 1, 2).acquireFail(1, 15, 16).release(0, 20, 20.1, true, "a").
			acquire(1, 20.2, 20.3, 2, "b").build()},
		{name: "free but nobody asked", want: Valid, h: (&builder{}).
			acquire(0, 0, 0.1, 1, "a").release(0, 0.2, 0.3, true, "a").acquire(1, 30, 30.1, 2, "b").build()},
		{name: "stuck after its server exited is not stuck", h: withServerExit(stuckLockHistory(), 2.2), want: Unknown, kinds: []string{}},
	})
}

func TestStats(t *testing.T) {
	r := NewStats().Check(context.Background(), doubleHolderPause())
	if r.Valid != Valid {
		t.Fatalf("valid = %v", r.Valid)
	}
	counts := r.Stats["counts"].(map[string]map[string]int)
	if counts["acquire"]["ok"] != 44 || counts["acquire"]["fail"] != 41 {
		t.Errorf("acquire counts = %v", counts["acquire"])
	}
	if r.Stats["grants"] != 44 || r.Stats["released_lost"] != 1 {
		t.Errorf("stats = %v", r.Stats)
	}
	lat := r.Stats["latency_ms"].(map[string]map[string]float64)
	if lat["cs"]["max"] != 3060 {
		t.Errorf("cs latency = %v, want max 3060 ms", lat["cs"])
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

func TestDefault(t *testing.T) {
	ctx := context.Background()
	t.Run("fenced, stale write rejected", func(t *testing.T) {
		r := Default(Options{Fenced: true}).Check(ctx, fencedPauseRejected())
		if r.Valid != Valid {
			t.Fatalf("valid = %v (%s)\n%s", r.Valid, r.Error, dump(r.Anomalies))
		}
		for _, sub := range r.Results {
			switch sub.Checker {
			case "mutex", "overlap":
				if !sub.Advisory || sub.Valid != Invalid {
					t.Errorf("%s: advisory %v valid %v, want an advisory invalid", sub.Checker, sub.Advisory, sub.Valid)
				}
			case ConditionsName:
				if !sub.Advisory || sub.Valid != Valid {
					t.Errorf("%s: advisory %v valid %v, want an advisory valid", sub.Checker, sub.Advisory, sub.Valid)
				}
			default:
				if sub.Advisory || sub.Valid != Valid {
					t.Errorf("%s: advisory %v valid %v (%s)", sub.Checker, sub.Advisory, sub.Valid, sub.Error)
				}
			}
		}
		if k := kinds(r.Anomalies, false); len(k) != 0 {
			t.Errorf("unfenced anomalies %v", k)
		}
		if k := kinds(r.Anomalies, true); !slices.Equal(k, []string{"double-holder", "nonlinearizable", "stale-write-rejected"}) {
			t.Errorf("fenced anomalies %v", k)
		}
		if r.Visualize == nil {
			t.Error("the advisory mutex failure should still offer a visualization")
		}
	})
	t.Run("fenced, stale write accepted", func(t *testing.T) {
		r := Default(Options{Fenced: true}).Check(ctx, fencedPauseAccepted())
		if r.Valid != Invalid {
			t.Fatalf("valid = %v", r.Valid)
		}
		if k := kinds(r.Anomalies, false); !slices.Equal(k, []string{"lost-update", "stale-write"}) {
			t.Errorf("unfenced anomalies %v", k)
		}
	})
	t.Run("unfenced double holder", func(t *testing.T) {
		r := Default(Options{}).Check(ctx, doubleHolderPause())
		if r.Valid != Invalid {
			t.Fatalf("valid = %v", r.Valid)
		}
		if k := kinds(r.Anomalies, false); !slices.Equal(k, []string{"double-holder", "lost-update", "nonlinearizable"}) {
			t.Errorf("anomalies %v", k)
		}
	})
	t.Run("clean", func(t *testing.T) {
		// clean's one pause struck a process that held no lock: no
		// anomaly, and not exercised (unknown, never valid).
		r := Default(Options{StuckBound: 5 * time.Second}).Check(ctx, clean())
		if r.Valid != Unknown || len(r.Anomalies) != 0 || !strings.Contains(r.NotExercised, "held no lock") {
			t.Fatalf("valid = %v (%s), not exercised %q\n%s", r.Valid, r.Error, r.NotExercised, dump(r.Anomalies))
		}
		if r.Visualize != nil {
			t.Error("Visualize set on a result without anomalies")
		}
		if len(r.Results) != 9 {
			t.Errorf("%d sub-results, want 9", len(r.Results))
		}
	})
}

// panicker is a checker that panics.
type panicker struct{}

func (panicker) Name() string { return "panicker" }
func (panicker) Check(context.Context, history.History) Result {
	panic("boom")
}

// fixed is a checker that returns a fixed verdict.
type fixed struct {
	name string
	v    Validity
}

func (f fixed) Name() string { return f.name }
func (f fixed) Check(context.Context, history.History) Result {
	return Result{Checker: f.name, Valid: f.v, Anomalies: []Anomaly{{Kind: f.name}}}
}

func TestCompose(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		cs   []Checker
		want Validity
	}{
		{"empty", nil, Valid},
		{"all valid", []Checker{fixed{"a", Valid}, fixed{"b", Valid}}, Valid},
		{"unknown beats valid", []Checker{fixed{"a", Valid}, fixed{"b", Unknown}}, Unknown},
		{"invalid beats unknown", []Checker{fixed{"a", Invalid}, fixed{"b", Unknown}}, Invalid},
		{"panic is unknown", []Checker{fixed{"a", Valid}, panicker{}}, Unknown},
		{"advisory does not count", []Checker{fixed{"a", Valid}, Advisory(fixed{"b", Invalid})}, Valid},
		{"advisory panic does not count", []Checker{fixed{"a", Valid}, Advisory(panicker{})}, Valid},
		{"nested", []Checker{Compose("inner", fixed{"a", Valid}, fixed{"b", Invalid})}, Invalid},
	}
	for _, tt := range tests {
		for _, compose := range []func(string, ...Checker) Checker{Compose, ComposeInOrder} {
			t.Run(tt.name, func(t *testing.T) {
				r := compose("top", tt.cs...).Check(ctx, history.History{})
				if r.Valid != tt.want {
					t.Fatalf("valid = %v, want %v", r.Valid, tt.want)
				}
				if len(r.Results) != len(tt.cs) {
					t.Errorf("%d results, want %d", len(r.Results), len(tt.cs))
				}
				if r.Anomalies == nil {
					t.Error("nil anomalies")
				}
			})
		}
	}
	r := Compose("top", fixed{"a", Valid}, panicker{}).Check(ctx, nil)
	if p := r.Results[1]; p.Checker != "panicker" || p.Valid != Unknown || !strings.Contains(p.Error, "boom") {
		t.Errorf("panicking sub-result: %+v", p)
	}
	if !strings.Contains(r.Error, "panicker: checker panicked: boom") {
		t.Errorf("composed error %q", r.Error)
	}
	if r.Panicked != "panicker: boom" || r.Results[1].Panicked != "panicker: boom" || r.Results[0].Panicked != "" {
		t.Errorf("panicked: composed %q, subs %q and %q", r.Panicked, r.Results[0].Panicked, r.Results[1].Panicked)
	}
	// A panic is carried up through a nested composition, and with an
	// anomaly elsewhere the verdict is still a crash to report.
	r = Compose("top", fixed{"a", Invalid}, Compose("inner", fixed{"b", Valid}, panicker{})).Check(ctx, nil)
	if r.Panicked != "panicker: boom" {
		t.Errorf("nested: panicked %q", r.Panicked)
	}
	r = Compose("top", fixed{"a", Invalid}, fixed{"b", Valid}).Check(ctx, nil)
	if len(r.Anomalies) != 2 || r.Anomalies[0].Kind != "a" || r.Anomalies[1].Kind != "b" {
		t.Errorf("anomalies not concatenated in order: %+v", r.Anomalies)
	}
}

func TestMalformedHistoryIsUnknown(t *testing.T) {
	h := history.History{{Index: 0, Process: 0, Type: history.OK, F: history.FAcquire, Key: "k"}}
	for _, c := range []Checker{NewMutex(Options{}), NewResource(Options{}), NewFencing(), NewOverlap(Options{}),
		NewLiveness(Options{}), NewStats(), Default(Options{})} {
		t.Run(c.Name(), func(t *testing.T) {
			r := c.Check(context.Background(), h)
			if r.Valid != Unknown || !strings.Contains(r.Error, "malformed history") {
				t.Errorf("valid %v error %q, want unknown with a malformed-history error", r.Valid, r.Error)
			}
		})
	}
}

// ambiguous builds a history the register search cannot settle quickly: 24
// indeterminate critical sections that read 1 and may each have written 2
// or nothing, then a read that no order explains.
func ambiguous() history.History {
	b := (&builder{}).cs(0, 0, 0.1, 0, 0)
	for i := range 24 {
		b.pair(10+i, history.FCS, "k", 0.2, 0.3, history.Info, nil, &history.Value{Read: history.Int64(1)})
	}
	for i := range 400 {
		t := 1 + float64(i)*0.01
		b.cs(100+i, t, t+0.5, int64(1+i), 0)
	}
	b.cs(3, 10, 10.1, 9999, 0)
	return b.build()
}

func TestPorcupineTimeoutIsUnknown(t *testing.T) {
	for _, c := range []Checker{NewResource(Options{Timeout: 50 * time.Millisecond})} {
		start := time.Now()
		r := c.Check(context.Background(), ambiguous())
		if r.Valid != Unknown {
			t.Fatalf("%s: valid = %v after %v, want unknown\n%s", c.Name(), r.Valid, time.Since(start), dump(r.Anomalies))
		}
		if !strings.Contains(r.Error, "timed out") {
			t.Errorf("error %q", r.Error)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v with a 50ms timeout", d)
		}
	}
}

func TestCancelledContextIsUnknown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := NewMutex(Options{}).Check(ctx, doubleHolderPause())
	if r.Valid != Unknown {
		t.Fatalf("valid = %v, want unknown", r.Valid)
	}
}

func TestValidityJSON(t *testing.T) {
	for v, s := range map[Validity]string{Valid: "true", Invalid: "false", Unknown: `"unknown"`} {
		b, err := json.Marshal(v)
		if err != nil || string(b) != s {
			t.Errorf("marshal %v = %s, %v; want %s", v, b, err, s)
		}
		var back Validity
		if err := json.Unmarshal(b, &back); err != nil || back != v {
			t.Errorf("unmarshal %s = %v, %v", b, back, err)
		}
	}
	var v Validity
	if err := json.Unmarshal([]byte(`"maybe"`), &v); err == nil {
		t.Error("unmarshal of \"maybe\" succeeded")
	}
	b, _ := json.Marshal(Result{Checker: "x"})
	if !strings.Contains(string(b), `"anomalies":[]`) || !strings.Contains(string(b), `"valid":true`) {
		t.Errorf("result JSON %s", b)
	}
	b, _ = json.Marshal(Anomaly{Kind: "x"})
	if !strings.Contains(string(b), `"processes":[]`) {
		t.Errorf("anomaly JSON %s", b)
	}
}

func TestUnsplittableStretchIsUnknown(t *testing.T) {
	// A critical section read 1 << 40 and may still land: no cut is
	// possible after it, and the stretch is too long for one search.
	b := (&builder{}).pair(0, history.FCS, "k", 0, 0.001, history.Info, nil, &history.Value{Read: history.Int64(1 << 40)})
	const limit = 2000 // as maxChunk, which takes long to build
	for i := range limit + 10 {
		t0 := 0.01 + float64(i)*0.001
		b.cs(1, t0, t0+0.0005, int64(i), 0)
	}
	r := (&resource{limit: limit}).Check(context.Background(), b.build())
	if r.Valid != Unknown || !strings.Contains(r.Error, "could not be split") {
		t.Fatalf("valid = %v, error %q; want unknown, could not be split", r.Valid, r.Error)
	}
}

func TestMutexKeepsAnIndeterminateAcquireThatIsNotLast(t *testing.T) {
	// A harness that did not retire process 0 after its indeterminate
	// acquire: the acquire took effect, so 0's later release is fine and
	// 1's acquire before it is not.
	h := (&builder{}).acquireInfo(0, 0, 0.1).release(0, 0.5, 0.6, true, "a").acquire(1, 0.7, 0.8, 0, "b").build()
	if r := NewMutex(Options{}).Check(context.Background(), h); r.Valid != Valid {
		t.Errorf("valid = %v, want valid", r.Valid)
	}
	h = (&builder{}).acquireInfo(0, 0, 0.1).acquire(1, 0.2, 0.3, 0, "b").release(0, 0.5, 0.6, true, "a").build()
	if r := NewMutex(Options{}).Check(context.Background(), h); r.Valid != Invalid {
		t.Errorf("valid = %v, want invalid", r.Valid)
	}
}

// redlockClockJump is Kleppmann's RedLock timeline: process 0 locks lock0..2,
// lock2's clock jumps, process 1 locks lock2..4 while 0 still holds.
func redlockClockJump() history.History {
	b := &builder{}
	b.pair(0, history.FAcquire, "k", 0, 0.1, history.OK, nil, &history.Value{Owner: "a", Extra: &history.Extra{Nodes: []string{"lock0", "lock1", "lock2"}}})
	b.pair(history.NemesisProcess, history.FClockJump, "", 0.49, 0.5, history.Info, nil, &history.Value{Extra: &history.Extra{Nodes: []string{"lock2"}}})
	b.pair(1, history.FAcquire, "k", 0.55, 0.6, history.OK, nil, &history.Value{Owner: "b", Extra: &history.Extra{Nodes: []string{"lock2", "lock3", "lock4"}}})
	b.release(1, 0.7, 0.75, true, "b").release(0, 0.9, 0.95, false, "a")
	b.pair(history.NemesisProcess, history.FClockReset, "", 1.99, 2, history.Info, nil, nil)
	return b.build()
}

// wantError returns an inspect function that wants r.Error to be msg.
func wantError(msg string) func(t *testing.T, r Result) {
	return func(t *testing.T, r Result) {
		t.Helper()
		if r.Error != msg {
			t.Errorf("error:\n got %q\nwant %q", r.Error, msg)
		}
	}
}

// grantsStoppedUnder is stuckLockHistory with a fault of kind f in force
// from 3 s to the end: the fault explains the missing grants.
func grantsStoppedUnder(f string) history.History {
	h := stuckLockHistory()
	end := h[len(h)-1].Time
	b := &builder{ops: h}
	b.fault(f, 3, end.Seconds(), 1)
	return b.build()
}

// grantsStoppedIdle: grants until 1 s, then no acquire at all until a last
// op 20 s later (the workers stopped asking, nothing failed).
func grantsStoppedIdle() history.History {
	b := (&builder{}).cycles(5, 0, 1, 0, false)
	b.add(21, 1, history.Invoke, history.FCS, "k", nil).add(21.01, 1, history.OK, history.FCS, "k", &history.Value{})
	return b.build()
}

// grantsStall: one grant completed at pre, then one acquire that fails at
// pre + stall, the end of the history: a stall of stall in a history of
// pre + stall.
func grantsStall(stall, pre time.Duration) history.History {
	inv := max(pre-time.Millisecond, 0)
	ops := []history.Op{
		{Time: inv, Process: 0, Type: history.Invoke, F: history.FAcquire, Key: "k"},
		{Time: pre, Process: 0, Type: history.OK, F: history.FAcquire, Key: "k", Value: &history.Value{Owner: "o0"}},
		{Time: pre + time.Microsecond, Process: 1, Type: history.Invoke, F: history.FAcquire, Key: "k"},
		{Time: pre + stall, Process: 1, Type: history.Fail, F: history.FAcquire, Key: "k"},
	}
	return (&builder{ops: ops}).build()
}

// withServerExit is h with a server-exit op (lock0, killed) at t seconds.
func withServerExit(h history.History, t float64) history.History {
	b := &builder{ops: h}
	b.add(t, history.NemesisProcess, history.Info, history.FServerExit, "",
		&history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "pid 7, signal: killed"}})
	return b.build()
}

// inOrderProbe records when it runs, and how many probes ran at once.
type inOrderProbe struct {
	name    string
	mu      *sync.Mutex
	order   *[]string
	running *atomic.Int32
	most    *atomic.Int32
}

func (p inOrderProbe) Name() string { return p.name }
func (p inOrderProbe) Check(context.Context, history.History) Result {
	n := p.running.Add(1)
	defer p.running.Add(-1)
	for {
		m := p.most.Load()
		if n <= m || p.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(time.Millisecond) // overlap with the others, if they run side by side
	p.mu.Lock()
	*p.order = append(*p.order, p.name)
	p.mu.Unlock()
	return Result{Checker: p.name, Valid: Valid}
}

// TestComposeInOrder checks that ComposeInOrder runs its checkers one at a
// time in the order given, and that Default with OneAtATime judges a
// history as Default does.
func TestComposeInOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	var running, most atomic.Int32
	var cs []Checker
	for _, n := range []string{"a", "b", "c", "d"} {
		cs = append(cs, inOrderProbe{n, &mu, &order, &running, &most})
	}
	ComposeInOrder("top", cs...).Check(context.Background(), nil)
	if got := strings.Join(order, ""); got != "abcd" {
		t.Errorf("ran in order %q, want abcd", got)
	}
	if most.Load() != 1 {
		t.Errorf("%d checkers ran at once, want 1", most.Load())
	}

	for seed := range uint64(20) {
		h := simulate(seed, 0.3)
		side := Default(Options{Lease: time.Second}).Check(context.Background(), h)
		one := Default(Options{Lease: time.Second, OneAtATime: true}).Check(context.Background(), h)
		if side.Valid != one.Valid || dump(side.Anomalies) != dump(one.Anomalies) {
			t.Fatalf("seed %d: side by side %v %s, one at a time %v %s", seed, side.Valid, dump(side.Anomalies), one.Valid, dump(one.Anomalies))
		}
	}
}
