package checker

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// observed adds a server release of key k seen at heard, released at at
// (0: the observer could not say), of owner on node.
func (b *builder) observed(heard, at float64, how, owner, node string) *builder {
	return b.add(heard, history.NemesisProcess, history.Info, history.FServerRelease, "k",
		&history.Value{Owner: owner, Extra: &history.Extra{Nodes: []string{node}, Release: &history.Release{How: how, At: at2(at)}}})
}

// expiredAt201 is a history where process 0 (owner "a") was granted k
// with token 1 at 1.01 s and lock0 expired its key at 2.01 s, which the
// observer heard at 2.05 s.
func expiredAt201() *builder {
	return new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0")
}

// observedLease adds an observed release of key k, heard at heard, with
// the token and lease the observer read (etcd's).
func (b *builder) observedLease(heard float64, how, owner string, token int64, lease string) *builder {
	return b.add(heard, history.NemesisProcess, history.Info, history.FServerRelease, "k",
		&history.Value{Owner: owner, Token: token, Extra: &history.Extra{Release: &history.Release{How: how, Lease: lease}}})
}

// probe adds an observer probe heard at t with the given lag.
func (b *builder) probe(t, lag float64, node string) *builder {
	return b.add(t, history.NemesisProcess, history.Info, history.FServerRelease, "",
		&history.Value{Extra: &history.Extra{Nodes: []string{node}, Release: &history.Release{How: history.ReleaseExpired, Probe: true, Lag: at(lag), At: at(t - lag)}}})
}

// event adds a lone event of process p's lock client.
func (b *builder) event(t float64, p int, detail string) *builder {
	return b.add(t, p, history.Info, history.FEvent, "", &history.Value{Extra: &history.Extra{Detail: detail}})
}

// at2 is at, with 0 for 0.
func at2(s float64) time.Duration {
	if s == 0 {
		return 0
	}
	return at(s)
}

// csFail adds a critical section that failed without touching the
// resource (the storage refused the connection).
func (b *builder) csFail(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FCS, "k", t0, t1, history.Fail, nil, nil)
}

// releaseInfo adds a release that ended in doubt.
func (b *builder) releaseInfo(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FRelease, "k", t0, t1, history.Info, nil, nil)
}

// csRefused adds a critical section that the lock client refused to run,
// failing with err.
func (b *builder) csRefused(p int, t0, t1 float64, err string) *builder {
	b.pair(p, history.FCS, "k", t0, t1, history.Fail, nil, nil)
	b.ops[len(b.ops)-1].Error = err
	return b
}

// withError sets the error of the op added last.
func (b *builder) withError(err string) *builder {
	b.ops[len(b.ops)-1].Error = err
	return b
}

// acquireOn adds a grant by the named nodes (RedLock's majority).
func (b *builder) acquireOn(p int, t0, t1 float64, owner string, nodes ...string) *builder {
	return b.pair(p, history.FAcquire, "k", t0, t1, history.OK, nil, &history.Value{Owner: owner, Extra: &history.Extra{Nodes: nodes}})
}

// wantWindow is what a test expects of one window (times in seconds; -1
// for never told).
type wantWindow struct {
	proc              int
	released, learned float64
	length            float64
	class             string
	accesses, after   int
	refused           int
	by                string
}

func TestWindows(t *testing.T) {
	tests := []struct {
		name string
		h    *builder
		want []wantWindow
		// observed is the count of observed releases of lock keys.
		observed int
	}{
		{"paused in its critical section, told by its release",
			new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 4, 0, 0).observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
				acquire(1, 1.5, 2.02, 2, "b").release(0, 4.01, 4.02, false, "a"),
			[]wantWindow{{0, 2.01, 4.02, 2.01, ClassBeforeKnown, 1, 0, 0, "its release found the lock gone"}}, 1},
		{"a hand-written history whose critical sections go back in time",
			expiredAt201().
				cs(0, 2.6, 2.7, 0, 0).cs(0, 0.2, 0.3, 1, 0).cs(0, 2.75, 2.78, 2, 0).release(0, 2.8, 2.81, false, "a").written(),
			[]wantWindow{{0, 2.01, 2.81, 0.8, ClassBeforeKnown, 2, 0, 0, "its release found the lock gone"}}, 1},
		{"told by an event, then wrote",
			new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 1.1, 0, 0).observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
				event(2.5, 0, "lease 0x1 expired: lock lost").cs(0, 2.6, 2.7, 1, 0).release(0, 2.8, 2.81, false, "a"),
			[]wantWindow{{0, 2.01, 2.5, 0.49, ClassToldThenWrote, 1, 1, 0, `its lock client reported "lease 0x1 expired: lock lost"`}}, 1},
		{"an access that began the instant it was told is after",
			expiredAt201().
				event(2.5, 0, "session expired").cs(0, 2.5, 2.7, 1, 0).release(0, 2.8, 2.81, false, "a"),
			[]wantWindow{{0, 2.01, 2.5, 0.49, ClassToldThenWrote, 1, 1, 0, `its lock client reported "session expired"`}}, 1},
		{"an access begun just before it was told is before",
			expiredAt201().
				cs(0, 2.499, 2.7, 1, 0).event(2.5, 0, "session expired").release(0, 2.8, 2.81, false, "a"),
			[]wantWindow{{0, 2.01, 2.5, 0.49, ClassBeforeKnown, 1, 0, 0, `its lock client reported "session expired"`}}, 1},
		{"a critical section that failed for another reason tells nothing",
			expiredAt201().
				csRefused(0, 2.1, 2.2, "storage: connection reset").release(0, 2.6, 2.61, false, "a"),
			[]wantWindow{{0, 2.01, 2.61, 0.6, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 1},
		{"a fenced refusal tells nothing of the lock",
			expiredAt201().
				csRejected(0, 2.1, 2.2, 0, 1, 2).withError("stale token 1 refused").cs(0, 2.3, 2.4, 1, 0).release(0, 2.6, 2.61, false, "a"),
			[]wantWindow{{0, 2.01, 2.61, 0.6, ClassBeforeKnown, 2, 0, 1, "its release found the lock gone"}}, 1},
		{"a failpoint or connect event tells nothing",
			expiredAt201().
				event(2.2, 0, "failpoint after-acquire: lost").event(2.3, 0, "session 0x1 connected").cs(0, 2.5, 2.7, 1, 0).releaseFail(0, 2.8, 2.81),
			[]wantWindow{{0, 2.01, 2.81, 0.8, ClassBeforeKnown, 1, 0, 0, "its release failed"}}, 1},
		{"stopped in time: its only access ended as the server let go",
			new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 2.01, 0, 0).observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
				releaseInfo(0, 3, 3.5),
			[]wantWindow{{0, 2.01, 3.5, 1.49, ClassStopped, 0, 0, 0, "its release ended in doubt"}}, 1},
		{"an access that failed for certain is none; one in doubt is one",
			expiredAt201().
				csFail(0, 2.1, 2.2).acquire(1, 2.1, 2.11, 2, "b").csInfo(0, 2.3, 2.4).crash(0, 2.4),
			[]wantWindow{{0, 2.01, -1, 0.39, ClassBeforeKnown, 1, 0, 0, "never told: it was retired at 2.40 s"}}, 1},
		{"a critical section refused by the lock client's validity check tells it",
			expiredAt201().
				csRefused(0, 1.02, 2.5, "redlock validity of k passed 0.5s ago").release(0, 2.6, 2.61, false, "a"),
			[]wantWindow{{0, 2.01, 2.5, 0.49, ClassStopped, 0, 0, 0, "its lock client refused its critical section (\"redlock validity of k passed 0.5s ago\")"}}, 1},
		{"fenced: the refused access is counted and marked",
			expiredAt201().
				csRejected(0, 2.1, 2.2, 0, 1, 2).release(0, 2.3, 2.31, false, "a"),
			[]wantWindow{{0, 2.01, 2.31, 0.3, ClassBeforeKnown, 1, 0, 1, "its release found the lock gone"}}, 1},
		{"told before the server let go: an empty window",
			new(builder).acquire(0, 1, 1.01, 1, "a").event(1.5, 0, "connection suspended").observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
				cs(0, 1.6, 2.5, 0, 0).release(0, 2.6, 2.61, false, "a"),
			[]wantWindow{{0, 2.01, 1.5, 0, ClassToldThenWrote, 1, 1, 0, `its lock client reported "connection suspended"`}}, 1},
		{"its own release is no window",
			new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 1.1, 0, 0).release(0, 1.2, 1.21, true, "a").
				observed(1.205, 0, history.ReleaseDeleted, "a", "lock0"),
			nil, 1},
		{"a release at the instant it invoked its own is no window",
			new(builder).acquire(0, 1, 1.01, 1, "a").release(0, 1.2, 1.21, false, "a").observed(1.3, 1.2, history.ReleaseExpired, "a", "lock0"),
			nil, 1},
		{"a release just before it invoked its own is one",
			new(builder).acquire(0, 1, 1.01, 1, "a").release(0, 1.2, 1.21, false, "a").observed(1.3, 1.199, history.ReleaseExpired, "a", "lock0"),
			[]wantWindow{{0, 1.199, 1.21, 0.011, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 1},
		{"an expiry after its release, its release having said released",
			new(builder).acquire(0, 1, 1.01, 1, "a").release(0, 1.2, 1.21, true, "a").observed(2.3, 2.2, history.ReleaseExpired, "a", "lock0"),
			nil, 1},
		{"a release with no owner belongs to the last grant before it",
			new(builder).acquire(0, 1, 1.01, 1, "a").release(0, 1.1, 1.11, true, "a").acquire(1, 1.2, 1.21, 2, "b").
				observed(2.05, 2.01, history.ReleaseExpired, "", "lock0").release(1, 3, 3.01, false, "b"),
			[]wantWindow{{1, 2.01, 3.01, 1, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 1},
		{"a deletion with no owner and no token belongs to none",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(1.5, 0, history.ReleaseDeleted, "", "lock0").release(0, 3, 3.01, true, "a"),
			nil, 1},
		{"a release with no owner before any grant belongs to none",
			new(builder).observed(0.5, 0.4, history.ReleaseExpired, "", "lock0").acquire(0, 1, 1.01, 1, "a").release(0, 1.1, 1.11, true, "a"),
			nil, 1},
		{"an owner no grant had belongs to none (RedLock's cleanup of a failed acquire)",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.05, 2.01, history.ReleaseDeleted, "zz", "lock0").release(0, 3, 3.01, false, "a"),
			nil, 1},
		{"a token no grant had, with no owner, belongs to none (a waiter's node)",
			new(builder).acquire(0, 1, 1.01, 1, "a").observedLease(2.05, history.ReleaseDeleted, "", 7, "").release(0, 3, 3.01, false, "a"),
			nil, 1},
		{"a token a grant had, with no owner, is that grant's",
			new(builder).acquire(0, 1, 1.01, 1, "a").observedLease(2.05, history.ReleaseDeleted, "", 1, "").release(0, 3, 3.01, false, "a"),
			[]wantWindow{{0, 2.05, 3.01, 0.96, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 1},
		{"a deletion heard, with no server time, is placed where it was heard",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.05, 0, history.ReleaseDeleted, "a", "lock0").release(0, 3, 3.01, false, "a"),
			[]wantWindow{{0, 2.05, 3.01, 0.96, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 1},
		{"held to the end of the history",
			expiredAt201().cs(0, 2.1, 2.2, 0, 0).acquire(1, 2.5, 3, 2, "b"),
			[]wantWindow{{0, 2.01, -1, 0.99, ClassBeforeKnown, 1, 0, 0, "never told: it held the lock to the end of the history at 3.00 s"}}, 1},
		{"RedLock: two of five nodes letting go leave a majority",
			redlock(2), nil, 2},
		{"RedLock: the third of five nodes loses it",
			redlock(3), []wantWindow{{0, 2.3, 4.01, 1.71, ClassBeforeKnown, 1, 0, 0, "its release found the lock gone"}}, 3},
		{"one owner for several grants: the token picks",
			new(builder).acquire(0, 1, 1.01, 1, "s").release(0, 1.1, 1.11, true, "s").acquire(0, 1.2, 1.21, 5, "s").
				observedLease(1.12, history.ReleaseDeleted, "s", 1, "lease 0x1").observedLease(2, history.ReleaseLease, "s", 5, "lease 0x1").
				release(0, 3, 3.01, false, "s"),
			[]wantWindow{{0, 2, 3.01, 1.01, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 2},
		{"one owner for several grants, no token: the last granted before",
			new(builder).acquire(0, 1, 1.01, 1, "s").release(0, 1.1, 1.11, true, "s").acquire(0, 1.2, 1.21, 5, "s").
				observedLease(1.12, history.ReleaseDeleted, "s", 0, "").observedLease(2, history.ReleaseLease, "s", 0, "").
				release(0, 3, 3.01, false, "s"),
			[]wantWindow{{0, 2, 3.01, 1.01, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 2},
		{"a token no grant had falls back to the time",
			new(builder).acquire(0, 1, 1.01, 1, "s").observedLease(2, history.ReleaseLease, "s", 9, "").release(0, 3, 3.01, false, "s"),
			[]wantWindow{{0, 2, 3.01, 1.01, ClassStopped, 0, 0, 0, "its release found the lock gone"}}, 1},
		{"no observation", new(builder).acquire(0, 1, 1.01, 1, "a").release(0, 1.2, 1.21, true, "a"), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := windowsOf(t, tt.h, tt.observed)
			if len(ws) != len(tt.want) {
				t.Fatalf("%d windows, want %d: %+v", len(ws), len(tt.want), ws)
			}
			for i, w := range ws {
				e := w.export()
				x := tt.want[i]
				learned := -1.0
				if e.Learned != nil {
					learned = *e.Learned
				}
				if e.Process != x.proc || !near(e.Released, x.released) || !near(learned, x.learned) || !near(e.Length, x.length) ||
					e.Class != x.class || e.Accesses != x.accesses || e.After != x.after || e.Refused != x.refused || e.LearnedBy != x.by {
					t.Errorf("window %d:\n got %+v (learned %v)\nwant %+v", i, e, learned, x)
				}
			}
		})
	}
}

// near compares seconds to the microsecond.
func near(a, b float64) bool { return math.Abs(a-b) < 2e-6 }

// redlock is a RedLock grant on lock0..lock4 whose first n nodes expire
// the key at 2.1, 2.2, 2.3 ... s, with an access at 3 s and a release
// that finds the lock gone.
func redlock(n int) *builder {
	b := new(builder).acquireOn(0, 1, 1.01, "a", "lock0", "lock1", "lock2", "lock3", "lock4")
	for i := 0; i < 5; i++ {
		node := "lock" + string(rune('0'+i))
		b.probe(0.5+0.01*float64(i), 0.01, node)
		if i < n {
			b.observed(2.5, 2.1+0.1*float64(i), history.ReleaseExpired, "a", node)
		}
	}
	return b.cs(0, 2.9, 3, 0, 0).release(0, 4, 4.01, false, "a")
}

func TestDistribution(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var out []time.Duration
		for _, x := range xs {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i
	}
	for _, tt := range []struct {
		name             string
		in               []time.Duration
		median, p99, max float64
	}{
		{"one", ms(7), 0.007, 0.007, 0.007},
		{"two", ms(9, 3), 0.003, 0.009, 0.009},
		{"three", ms(5, 1, 3), 0.003, 0.005, 0.005},
		{"a hundred", ms(hundred...), 0.05, 0.099, 0.1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := distribution(tt.in)
			if d["count"] != len(tt.in) || d["median_s"] != tt.median || d["p99_s"] != tt.p99 || d["max_s"] != tt.max {
				t.Fatalf("distribution = %v, want median %v p99 %v max %v", d, tt.median, tt.p99, tt.max)
			}
		})
	}
	if d := distribution(nil); len(d) != 1 || d["count"] != 0 {
		t.Fatalf("distribution of none = %v", d)
	}
}

func TestIsLossEvent(t *testing.T) {
	for _, tt := range []struct {
		detail string
		want   bool
	}{
		{"lease 0x694d expired: lock lost", true},
		{"session 0x1 expired", true},
		{"kazoo session 0x1 LOST: expired, lock lost", true},
		{"renewal of k0 refused: the key no longer has revision 3", true},
		{"renewal of k0 failed: i/o timeout", true},
		{"disconnected: EOF", true},
		{"connection SUSPENDED", true},
		{"database session 12 ended; reconnected as session 13", true},
		{"watchdog k0: released 3.0 s after the grant, longer than the 1.0 s lease: the lease ran out before the watchdog could renew it", true},
		{"lease 0x694d granted (TTL 2s)", false},
		{"session 0x1 connected", false},
		{"reconnected to 127.0.0.1:4222", false},
		{"failpoint after-acquire: expired", false},
		{"write sent: k0 (token 3)", false},                        // a mark
		{"renewal sent: lease 0x694d kept alive (TTL 2 s)", false}, // a mark
		{"renewal sent: k0 (owner lost-and-found)", false},         // a mark, whatever its owner is called
		{"", false},
	} {
		if got := isLossEvent(tt.detail); got != tt.want {
			t.Errorf("isLossEvent(%q) = %v, want %v", tt.detail, got, tt.want)
		}
	}
}

func TestWindowSentence(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    *builder
		want string
	}{
		{"before it could know",
			new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 4, 0, 0).cs(0, 4.001, 4.002, 1, 0).observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
				release(0, 4.01, 4.02, false, "a"),
			"The server's side: lock0 expired key k at 2.01 s (the observer heard it at 2.05 s); process 0 learned of it at 4.02 s, when its release found the lock gone, 2.01 s later, and accessed the resource twice in between, before it could know."},
		{"heard at once, told then wrote, fenced",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.011, 2.01, history.ReleaseLease, "a", "n1").
				event(2.5, 0, "lease expired").csRejected(0, 2.6, 2.7, 0, 1, 2).crash(0, 2.8),
			"The server's side: n1 deleted key k with its ended lease at 2.01 s; process 0 learned of it at 2.50 s, when its lock client reported \"lease expired\", 0.49 s later, and accessed the resource once in between, 1 after it was told (the fenced resource refused 1)."},
		{"etcd: no node, a lease",
			new(builder).acquire(0, 1, 1.01, 1, "a").observedLease(2.01, history.ReleaseLease, "a", 1, "lease 0x69").crash(0, 2.8),
			"The server's side: the server deleted key k with its ended lease 0x69 at 2.01 s; process 0 was never told (it was retired at 2.80 s, 0.79 s later), and made no access in between."},
		{"zookeeper: a node of a session deleted",
			new(builder).acquire(0, 1, 1.01, 7, "a").observedLease(2.01, history.ReleaseDeleted, "a", 7, "session 0x5").crash(0, 2.8),
			"The server's side: the server deleted key k (session 0x5) at 2.01 s; process 0 was never told (it was retired at 2.80 s, 0.79 s later), and made no access in between."},
		{"never told, stopped",
			new(builder).acquire(0, 1, 1.01, 1, "a").observed(2.011, 2.01, history.ReleaseDeleted, "a", "lock0").crash(0, 2.8),
			"The server's side: lock0 deleted key k at 2.01 s; process 0 was never told (it was retired at 2.80 s, 0.79 s later), and made no access in between."},
		{"told before",
			new(builder).acquire(0, 1, 1.01, 1, "a").event(1.5, 0, "disconnected").observed(2.011, 2.01, history.ReleaseExpired, "a", "lock0").crash(0, 2.8),
			"The server's side: lock0 expired key k at 2.01 s; process 0 had been told at 1.50 s, when its lock client reported \"disconnected\", before the server let go, and made no access in between."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := oneWindowStory(t, tt.h); got != tt.want {
				t.Fatalf("sentence\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	if s := windowStories(newAnalysis(new(builder).acquire(0, 1, 1.01, 1, "a").build())); s != nil {
		t.Fatalf("stories without observations: %v", s)
	}
}

// oneWindowStory is the one window story of h's history; it fails the test
// when there is not exactly one.
func oneWindowStory(t *testing.T, h *builder) string {
	t.Helper()
	s := windowStories(newAnalysis(h.build()))
	if len(s) != 1 {
		t.Fatalf("stories %v", s)
	}
	for _, got := range s {
		return got
	}
	return ""
}

// TestWindowsResult checks the checker's Stats, and that it never decides.
func TestWindowsResult(t *testing.T) {
	h := new(builder).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 4, 0, 0).observed(2.05, 2.01, history.ReleaseExpired, "a", "lock0").
		acquire(1, 1.5, 2.02, 2, "b").release(1, 2.1, 2.11, true, "b").observed(2.12, 0, history.ReleaseDeleted, "b", "lock0").
		release(0, 4.01, 4.02, false, "a").probe(1, 0.02, "lock0").probe(1.5, 0.04, "lock0").probe(2, 0.03, "lock0").build()
	r := NewWindows().Check(context.Background(), h)
	if r.Valid != Valid || len(r.Anomalies) != 0 || r.Checker != "windows" {
		t.Fatalf("result %+v", r)
	}
	b, err := json.Marshal(r.Stats)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"server_releases":2`, `"probes":3`, `"observer_lag":{"count":3,"max_s":0.04,"median_s":0.03,"p99_s":0.04}`,
		`"window":{"count":1,"max_s":2.01,"median_s":2.01,"p99_s":2.01}`,
		`"classes":{"stopped in time":0,"wrote after it was told":0,"wrote before it could know":1}`, `"ops":[2,8,14]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stats lack %s:\n%s", want, b)
		}
	}
	if r := NewWindows().Check(context.Background(), new(builder).acquire(0, 1, 1.01, 1, "a").build()); len(r.Stats) != 2 {
		t.Errorf("stats without observations: %v", r.Stats)
	}
	bad := history.History{{Index: 0, Process: 0, Type: history.OK, F: history.FAcquire}}
	if r := NewWindows().Check(context.Background(), bad); r.Valid != Unknown {
		t.Errorf("malformed history: %v", r.Valid)
	}
}

// TestWindowsGolden checks the windows of every history under
// testdata/windows against its want.json (-update rewrites it), and that
// the stories of its double holders name the server's release. The
// histories: a real redis-pause run, and planted-ignores-lost-event, a
// holder that wrote after its client reported the lease lost.
func TestWindowsGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "windows", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden window histories (%v)", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if err := history.Validate(h); err != nil {
				t.Fatal(err)
			}
			r := NewWindows().Check(context.Background(), h)
			got, err := json.MarshalIndent(r.Stats, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join(dir, "want.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("windows differ from %s:\n%s", path, got)
			}
			ov := NewOverlap(Options{}).Check(context.Background(), h)
			for _, a := range ov.Anomalies {
				if a.Kind == "double-holder" && !strings.Contains(a.Explanation, "The server's side:") {
					t.Errorf("a double holder's story without the server's side: %s", a.Explanation)
				}
			}
		})
	}
}

// TestObservationsDoNotChangeVerdicts checks each golden history of
// testdata/windows with Default, with and without its server-release ops:
// the same verdict and the same anomalies, but for the stories' sentence
// on the server's side.
func TestObservationsDoNotChangeVerdicts(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "windows", "*"))
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var bare history.History
			for _, op := range h {
				if op.F != history.FServerRelease {
					op.Index = len(bare)
					bare = append(bare, op)
				}
			}
			if len(bare) == len(h) {
				t.Fatal("no server-release op to strip")
			}
			opts := Options{Lease: time.Second, Faulted: true}
			with, without := Default(opts).Check(context.Background(), h), Default(opts).Check(context.Background(), bare)
			if with.Valid != without.Valid || len(with.Anomalies) != len(without.Anomalies) {
				t.Fatalf("with observations %v %d anomalies, without %v %d", with.Valid, len(with.Anomalies), without.Valid, len(without.Anomalies))
			}
			for i := range with.Anomalies {
				a, b := with.Anomalies[i], without.Anomalies[i]
				if a.Kind != b.Kind || a.Start != b.Start || a.End != b.End || !strings.HasPrefix(a.Explanation, b.Explanation) {
					t.Errorf("anomaly %d differs:\n with    %s\n without %s", i, a.Explanation, b.Explanation)
				}
			}
		})
	}
}

// acquireSession adds a grant of a database session lock that names the
// session (history.Value.Backend) that took it.
func (b *builder) acquireSession(p int, t0, t1 float64, owner string, session int64) *builder {
	return b.pair(p, history.FAcquire, "k", t0, t1, history.OK, nil, &history.Value{Owner: owner, Backend: session})
}

// observedSession adds a database observer's release of key k by session
// (0: none named), heard at heard and placed at at, on node pg0.
func (b *builder) observedSession(heard, at float64, how string, session int64) *builder {
	rel := &history.Release{How: how, At: at2(at)}
	if session != 0 {
		rel.Lease = "session " + strconv.FormatInt(session, 10)
	}
	return b.add(heard, history.NemesisProcess, history.Info, history.FServerRelease, "k",
		&history.Value{Backend: session, Extra: &history.Extra{Nodes: []string{"pg0"}, Release: rel}})
}

// TestWindowsBySession: a database release names the session that held
// the lock, and where the grants name theirs, it ends that session's
// grant, not whichever was granted last before it.
func TestWindowsBySession(t *testing.T) {
	type want struct {
		proc     int
		released float64
		backend  int64
	}
	tests := []struct {
		name string
		h    *builder
		want []want
	}{
		{"the session's grant, though placed in the grant before",
			// Sampled: placed at the start of the sample that saw
			// session 12 hold it, before its grant's ok and before
			// process 0's release; by time it would be process 0's.
			new(builder).acquireSession(0, 1, 1.01, "a", 11).release(0, 2, 2.01, true, "a").acquireSession(1, 1.5, 2.03, "b", 12).
				observedSession(2.1, 1.99, history.ReleaseSessionEnded, 12).release(1, 2.6, 2.61, false, "b"),
			[]want{{1, 2.03, 12}}},
		{"a session ended inside its grant",
			new(builder).acquireSession(0, 1, 1.01, "a", 11).observedSession(2.1, 2.05, history.ReleaseSessionEnded, 11).
				release(0, 2.6, 2.61, false, "a"),
			[]want{{0, 2.05, 11}}},
		{"a session that held no grant of the key ended none",
			new(builder).acquireSession(0, 1, 1.01, "a", 11).observedSession(2.1, 2.05, history.ReleaseSessionEnded, 99).
				release(0, 2.6, 2.61, false, "a"),
			nil},
		{"a session granted the key twice: its grant before the release was heard",
			new(builder).acquireSession(0, 1, 1.01, "a", 11).release(0, 1.5, 1.51, true, "a").acquireSession(0, 1.9, 2.02, "c", 11).
				observedSession(2.1, 1.99, history.ReleaseSessionEnded, 11).crash(0, 2.5),
			[]want{{0, 2.02, 11}}},
		{"its earlier grant, let go before, is no window",
			new(builder).acquireSession(0, 1, 1.01, "a", 11).release(0, 1.5, 1.51, true, "a").
				observedSession(2.1, 2.05, history.ReleaseSessionEnded, 11).acquireSession(0, 2.5, 2.52, "c", 11).crash(0, 3),
			nil},
		{"grants that name no session: by time",
			new(builder).acquire(0, 1, 1.01, 0, "a").observedSession(2.1, 2.05, history.ReleaseSessionEnded, 99).
				release(0, 2.6, 2.61, false, "a"),
			[]want{{0, 2.05, 99}}},
		{"a deletion by a session is none: its placement may be early",
			new(builder).acquireSession(0, 1, 1.01, "a", 11).observedSession(2.1, 1.99, history.ReleaseDeleted, 11).
				release(0, 2, 2.01, true, "a"),
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h.build()
			if err := history.Validate(h); err != nil {
				t.Fatalf("test history: %v", err)
			}
			ws, _, _ := lostWindows(newAnalysis(h))
			if len(ws) != len(tt.want) {
				t.Fatalf("%d windows, want %d: %+v", len(ws), len(tt.want), ws)
			}
			for i, w := range ws {
				e := w.export()
				if x := tt.want[i]; e.Process != x.proc || !near(e.Released, x.released) || e.Backend != x.backend {
					t.Errorf("window %d: process %d released %v session %d, want %+v", i, e.Process, e.Released, e.Backend, x)
				}
			}
		})
	}
}

// TestWindowSentenceHow: the words of each way a server lets go.
func TestWindowSentenceHow(t *testing.T) {
	failover := func(nodes ...string) *builder {
		return new(builder).acquire(0, 1, 1.01, 0, "a").add(2.05, history.NemesisProcess, history.Info, history.FServerRelease, "k",
			&history.Value{
				Owner: "a",
				Extra: &history.Extra{Nodes: nodes, Detail: "redis1 was promoted without redis0's key", Release: &history.Release{How: history.ReleaseFailoverLost, At: at(2.05)}},
			}).crash(0, 2.8)
	}
	for _, tt := range []struct {
		name string
		h    *builder
		want string
	}{
		{"session-ended, the session named",
			new(builder).acquireSession(0, 1, 1.01, "a", 7363).observedSession(2.05, 2.01, history.ReleaseSessionEnded, 7363).crash(0, 2.8),
			"The server's side: pg0 ended session 7363 and its lock on key k at 2.01 s (the observer heard it at 2.05 s); process 0 was never told"},
		{"session-ended, the session by its id alone",
			new(builder).acquireSession(0, 1, 1.01, "a", 12).add(2.05, history.NemesisProcess, history.Info, history.FServerRelease, "k",
				&history.Value{Backend: 12, Extra: &history.Extra{Release: &history.Release{How: history.ReleaseSessionEnded, At: at(2.05)}}}).crash(0, 2.8),
			"The server's side: the server ended session 12 and its lock on key k at 2.05 s; process 0 was never told"},
		{"session-ended, no session named",
			new(builder).acquire(0, 1, 1.01, 0, "a").observedSession(2.05, 2.05, history.ReleaseSessionEnded, 0).crash(0, 2.8),
			"The server's side: pg0 ended the session that held key k at 2.05 s; process 0 was never told"},
		{"failover-lost on the promoted node",
			failover("redis1"),
			"The server's side: the promoted replica redis1 did not have key k at 2.05 s; process 0 was never told"},
		{"failover-lost, no node named",
			failover(),
			"The server's side: the promoted replica did not have key k at 2.05 s; process 0 was never told"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := oneWindowStory(t, tt.h); !strings.HasPrefix(got, tt.want) {
				t.Fatalf("sentence\n got %s\nwant %s...", got, tt.want)
			}
		})
	}
}

// TestHoldsBy checks the index of holds by a key: a key's holds in the
// order added, one or many, and none for a key never added.
func TestHoldsBy(t *testing.T) {
	m := newHoldsBy[string](4)
	m.add("a", 3)
	m.add("b", 1)
	m.add("b", 5)
	m.add("b", 2)
	var buf [1]int
	for _, c := range []struct {
		k    string
		want []int
	}{{"a", []int{3}}, {"b", []int{1, 5, 2}}, {"c", nil}} {
		got := m.get(c.k, &buf)
		if len(got) != len(c.want) {
			t.Errorf("get(%q) = %v, want %v", c.k, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("get(%q) = %v, want %v", c.k, got, c.want)
			}
		}
	}
}
