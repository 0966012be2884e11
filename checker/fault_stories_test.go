package checker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestClockFaultStories checks that a double holder's story names the clock
// fault that let the second holder in.
func TestClockFaultStories(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     string
		v     *history.Value
		wants []string
	}{
		{"server clock forward", history.FClock,
			&history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "wall clock of lock0 jumped 3 s forward, and 3 s more every 500 ms"}},
			[]string{"A clock jump of node lock0 from 0.20 s to 3.20 s was in force: lock0's wall clock jumped 3 s forward, so the lock key's PX expiry passed early (Redis judges expiry by its wall clock)."}},
		{"server clock back", history.FClock,
			&history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "wall clock of lock0 jumped 3 s back, then forward to real time and back again every 500 ms"}},
			[]string{"lock0's wall clock was jumping back and forth"}},
		{"redlock clock jump", history.FClockJump,
			&history.Value{Extra: &history.Extra{Nodes: []string{"lock2"}, Detail: "lock2's wall clock jumped 1m0s forward"}},
			[]string{"lock2's wall clock jumped forward, so the first holder's key on lock2 expired early and lock2 counted towards a second majority"}},
		{"client clock skew", history.FSkew,
			&history.Value{Extra: &history.Extra{Targets: []int{1}, Detail: "clock of process 1 set 3 s ahead"}},
			[]string{"A client clock skew of process 1 from 0.20 s to 3.20 s was in force: the clocks of process 1 were skewed, so a client judged a live lock expired"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end, _ := history.EndOf(tc.f)
			b := &builder{}
			b.pair(history.NemesisProcess, tc.f, "", 0.199, 0.2, history.Info, nil, tc.v)
			b.pair(history.NemesisProcess, end, "", 3.199, 3.2, history.Info, nil, nil)
			h := b.acquire(0, 0, 0.1, 1, "a").
				cs(0, 0.15, 0.5, 0, 0).
				acquire(1, 0.25, 0.3, 2, "b").
				cs(1, 0.31, 0.4, 0, 0).
				release(1, 0.41, 0.42, true, "b").
				release(0, 0.6, 0.61, false, "a").build()
			r := NewOverlap(Options{}).Check(context.Background(), h)
			if r.Valid != Invalid {
				t.Fatalf("verdict %v, want invalid", r.Valid)
			}
			a := find(t, r, "double-holder")
			for _, w := range tc.wants {
				if !strings.Contains(a.Explanation, w) {
					t.Errorf("explanation:\n%s\nwant it to contain\n%s", a.Explanation, w)
				}
			}
		})
	}
	// A fault of another kind gets no clock sentence.
	if w := faultWhy(history.Fault{F: history.FKill, Nodes: []string{"lock0"}}); w != "" {
		t.Errorf("kill: %q", w)
	}
}

// TestSessionKillStory checks that a double holder whose first holder's
// database session was ended says so: when the session was terminated,
// that the server released the lock, and when the client wrote anyway.
func TestSessionKillStory(t *testing.T) {
	assertGoldenStory(t, "session-kill-double-holder", "double-holder",
		"Process 1's database session was terminated between 1.00 s and 4.20 s",
		"the server released its lock",
		"wrote by 5.10 s")
}

// TestSessionKillSentence is a table test of the sentence alone.
func TestSessionKillSentence(t *testing.T) {
	kill := history.Fault{F: history.FSessionKill, Start: 4200e6, End: 7200e6, Targets: []int{1}}
	aimed := history.Fault{F: history.FSessionKill, Start: 3000e6, Done: 4200e6, End: 7200e6, Targets: []int{1}}
	pause := history.Fault{F: history.FPause, Start: 4200e6, End: 7200e6, Targets: []int{1}}
	cases := []struct {
		name   string
		faults []history.Fault
		stale  int
		until  int64
		want   string
	}{
		{"kill of the stale holder", []history.Fault{kill}, 1, 5100e6, "terminated at 4.20 s"},
		{"a kill aimed for a while: between its invocation and completion", []history.Fault{aimed}, 1, 5100e6, "terminated between 3.00 s and 4.20 s;"},
		{"kill of another process", []history.Fault{kill}, 2, 5100e6, ""},
		{"kill after the hold", []history.Fault{kill}, 1, 4000e6, ""},
		{"a pause is not a kill", []history.Fault{pause}, 1, 5100e6, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := aftermath(c.faults, c.stale, timeDur(c.until))
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("got %q, want one containing %q", got, c.want)
			}
		})
	}
}

func timeDur(ns int64) time.Duration { return time.Duration(ns) }

// TestSessionTimeoutStory checks that a double holder of a lock that lives
// as long as its database session (Options.Session) blames the server's
// ending of the silent session, not a lease, when the holder was stopped
// for longer than the session timeout; and keeps the lease story otherwise.
func TestSessionTimeoutStory(t *testing.T) {
	pg := &SessionTimeout{Server: "PostgreSQL", Settings: "idle_session_timeout", Timeout: 2 * time.Second}
	cases := []struct {
		name    string
		session *SessionTimeout
		want    string
	}{
		{"database session", pg, "A pause of process 3 from 2.40 s to 5.40 s was in force: the PostgreSQL server ended its silent database session " +
			"after 2.00 s (its session timeout: idle_session_timeout) and released its lock while it was stopped."},
		{"unnamed server", &SessionTimeout{Timeout: time.Second}, "was in force: the database server ended its silent database session " +
			"after 1.00 s (its session timeout) and released its lock while it was stopped."},
		{"pause shorter than the timeout", &SessionTimeout{Server: "MariaDB", Timeout: 4 * time.Second}, "was in force: its lease ran out while it was stopped."},
		{"no session", nil, "was in force: its lease ran out while it was stopped."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewOverlap(Options{Session: c.session}).Check(context.Background(), doubleHolderPause())
			a := find(t, r, "double-holder")
			if !strings.HasSuffix(a.Explanation, c.want) {
				t.Errorf("explanation:\n got %s\nwant one ending %s", a.Explanation, c.want)
			}
		})
	}
}

// TestSessionEnded is a table test of the clause alone: a pause or a
// partition of the holder longer than the timeout ends its session.
func TestSessionEnded(t *testing.T) {
	s := &SessionTimeout{Server: "MariaDB", Settings: "wait_timeout", Timeout: 2 * time.Second}
	fault := func(f string, from, to float64, p int) history.Fault {
		return history.Fault{F: f, Start: time.Duration(from * 1e9), End: time.Duration(to * 1e9), Targets: []int{p}}
	}
	cases := []struct {
		name   string
		faults []history.Fault
		want   bool
	}{
		{"long pause", []history.Fault{fault(history.FPause, 1, 4, 1)}, true},
		{"long partition", []history.Fault{fault(history.FPartition, 1, 4, 1)}, true},
		{"short pause", []history.Fault{fault(history.FPause, 1, 2.5, 1)}, false},
		{"another process", []history.Fault{fault(history.FPause, 1, 4, 2)}, false},
		{"a kill is no silence", []history.Fault{fault(history.FSessionKill, 1, 4, 1)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := sessionEnded(s, c.faults, 1)
			if (got != "") != c.want {
				t.Errorf("got %q, want a clause: %v", got, c.want)
			}
			if c.want && !strings.HasPrefix(got, "the MariaDB server ended its silent database session after 2.00 s (its session timeout: wait_timeout)") {
				t.Errorf("got %q", got)
			}
		})
	}
}

// The restart-lose nemesis registers its ops from package nemesis, which
// checker does not import; the history below needs them here.
func init() {
	history.RegisterFaultOps(history.FaultOps{Start: "restart-lose", End: "restart-lose-end",
		Class: history.ClassNode, Exercise: history.ExerciseNode})
}

// TestRestartLoseStory: the timeline of a real RedLock run under
// restart-lose (seed 1 of `check run --lock redlock --nemesis restart-lose
// --workers 10 --think 500ms --lease 2s`): process 3 is granted k on
// lock0, lock3 and lock4, a bare majority of five; lock3 restarts empty;
// process 7 locks lock1, lock2 and lock3 while 3 works. The double
// holder's story names the restarted node, the key it lost and the nodes
// the key was left on, from the fault's Hit.
func TestRestartLoseStory(t *testing.T) {
	b := &builder{}
	b.cycles(3, 0.1, 0, 0, false)
	b.pair(3, history.FAcquire, "k", 2.5, 2.74, history.OK, nil, &history.Value{Owner: "p3-a", Extra: &history.Extra{Nodes: []string{"lock0", "lock3", "lock4"}}})
	b.pair(history.NemesisProcess, "restart-lose", "", 2.92, 2.96, history.Info, nil, &history.Value{
		Extra: &history.Extra{Nodes: []string{"lock3"}, Hit: &history.Hit{Nemesis: "restart-lose", Holder: true, Key: "k", Holders: 1, Node: "lock3", Lost: []string{"k"},
			HeldOn: []string{"lock0", "lock3", "lock4"}}},
	})
	b.pair(7, history.FAcquire, "k", 2.9, 3.03, history.OK, nil, &history.Value{Owner: "p7-b", Extra: &history.Extra{Nodes: []string{"lock1", "lock2", "lock3"}}})
	b.cs(3, 2.75, 3.23, 3, 0)
	b.cs(7, 3.04, 3.52, 3, 0)
	b.release(3, 3.24, 3.25, true, "p3-a")
	b.release(7, 3.53, 3.54, true, "p7-b")
	b.pair(history.NemesisProcess, "restart-lose-end", "", 4.96, 4.961, history.Info, nil, nil)
	res := Default(Options{}).Check(context.Background(), b.build())
	want := "A restart-lose of node lock3 from 2.96 s to 4.96 s was in force: lock3 was killed and restarted with its data gone " +
		"and lost key k, which its holder had on lock0, lock3 and lock4; with lock3's copy gone it was left on lock0 and lock4 only, " +
		"so the other nodes could grant k again while it was still held."
	for _, a := range res.Anomalies {
		if a.Kind == "double-holder" {
			if !strings.Contains(a.Explanation, want) {
				t.Errorf("story lacks\n%s\n%s", want, a.Explanation)
			}
			return
		}
	}
	t.Fatalf("no double holder: %+v", res.Anomalies)
}

// TestLostDataWhy is a table test of the sentence alone.
func TestLostDataWhy(t *testing.T) {
	hit := func(h history.Hit) history.Fault { return history.Fault{F: "restart-lose", Hit: &h} }
	cases := []struct {
		name string
		f    history.Fault
		want string
	}{
		{"no hit", history.Fault{F: "restart-lose"}, ""},
		{"another fault's hit", hit(history.Hit{Nemesis: "kill", Holders: 1}), ""},
		{"a member with nothing to read", hit(history.Hit{Node: "zk2"}), "zk2 was killed and restarted with its data gone, and came back empty"},
		{"keys but no holder's", hit(history.Hit{Node: "lock0", Lost: []string{"k0", "k1"}}),
			"lock0 was killed and restarted with its data gone and lost keys k0 and k1, so it could grant them again while their holders still held them"},
		{"a key its holder had elsewhere", hit(history.Hit{Node: "lock1", Key: "k0", Lost: []string{"k0"}, HeldOn: []string{"lock1", "lock2", "lock4"}}),
			"lock1 was killed and restarted with its data gone and lost key k0, which its holder had on lock1, lock2 and lock4; " +
				"with lock1's copy gone it was left on lock2 and lock4 only, so the other nodes could grant k0 again while it was still held"},
		{"the only copy", hit(history.Hit{Node: "lock0", Key: "k0", Lost: []string{"k0"}, HeldOn: []string{"lock0"}}),
			"lock0 was killed and restarted with its data gone and lost key k0, which its holder had on lock0; so k0 was free everywhere while it was still held"},
		{"the holder's key was not lost", hit(history.Hit{Node: "lock0", Key: "k1", Lost: []string{"k0"}, HeldOn: []string{"lock1"}}),
			"lock0 was killed and restarted with its data gone and lost key k0, so it could grant them again while their holders still held them"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := faultWhy(c.f); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestRestartLoseTokenStory: a single Redis node restarted empty between
// two grants loses its token counter with its keys, so the later grant's
// token is lower (token-order): an anomaly whose two grants straddle the
// restart names the node and what it lost; one with no restart in
// between (tokenOrderHistory's) does not.
func TestRestartLoseTokenStory(t *testing.T) {
	hit := &history.Hit{Nemesis: "restart-lose", Holder: true, Key: "k", Holders: 1, Node: "lock0",
		Lost: []string{"k", "k:token"}, HeldOn: []string{"lock0"}}
	b := (&builder{}).cycles(3, 0, 10, 0, false)
	b.pair(history.NemesisProcess, "restart-lose", "", 0.19, 0.2, history.Info, nil, &history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Hit: hit}})
	b.acquire(1, 0.21, 0.22, 1, "o1").release(1, 0.24, 0.25, true, "o1")
	b.pair(history.NemesisProcess, "restart-lose-end", "", 0.5, 0.501, history.Info, nil, nil)
	b.acquire(0, 0.6, 0.7, 1, "o0").release(0, 0.72, 0.73, true, "o0")
	res := NewFencing().Check(context.Background(), b.build())
	const why = " In between, lock0 was killed and restarted with its data gone at 0.20 s (it lost k and k:token), so a token counter kept on it started over."
	told := 0
	for _, a := range res.Anomalies {
		if a.Kind != "token-order" {
			continue
		}
		if !strings.HasSuffix(a.Explanation, "fencing tokens must increase in grant order."+why) ||
			len(a.Nemesis) != 1 || !strings.HasPrefix(a.Nemesis[0], "restart-lose of node lock0 from 0.20 s") {
			t.Errorf("token-order %v from %v to %v: %s (nemesis %v)", a.Processes, a.Start, a.End, a.Explanation, a.Nemesis)
		}
		told++
	}
	if told == 0 {
		t.Fatalf("no token-order anomaly: %+v", res.Anomalies)
	}
	for _, a := range NewFencing().Check(context.Background(), tokenOrderHistory()).Anomalies {
		if a.Kind == "token-order" && (strings.Contains(a.Explanation, "restarted") || a.Nemesis != nil) {
			t.Errorf("token-order with no restart in between: %s (nemesis %v)", a.Explanation, a.Nemesis)
		}
	}
}

// TestTokenResetWhy: only a restart-lose that struck after the earlier
// grant and by the later one is told, with what it lost when known.
func TestTokenResetWhy(t *testing.T) {
	restart := func(start float64, h *history.Hit) history.Fault {
		return history.Fault{F: "restart-lose", Start: at(start), End: at(start + 1), Nodes: []string{"lock0"}, Hit: h}
	}
	lost := &history.Hit{Node: "lock0", Lost: []string{"k:token"}}
	cases := []struct {
		name string
		f    history.Fault
		want string
	}{
		{"before the earlier grant", restart(0.5, lost), ""},
		{"at the earlier grant", restart(1, lost), ""},
		{"between", restart(1.5, lost), "In between, lock0 was killed and restarted with its data gone at 1.50 s (it lost k:token), so a token counter kept on it started over."},
		{"at the later grant", restart(2, &history.Hit{Node: "lock0"}), "In between, lock0 was killed and restarted with its data gone at 2.00 s, so a token counter kept on it started over."},
		{"after the later grant", restart(2.5, lost), ""},
		{"no hit", restart(1.5, nil), ""},
		{"another fault's hit", restart(1.5, &history.Hit{Nemesis: "kill", Holders: 1}), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, f, ok := tokenResetWhy([]history.Fault{c.f}, at(1), at(2))
			if got != c.want || ok != (c.want != "") || ok && f.Start != c.f.Start {
				t.Errorf("got %q, %v, %v; want %q", got, f.Start, ok, c.want)
			}
		})
	}
}

// TestFaultSentenceFirstWhy: the first of the faults in force that is a
// failover (its words are First) or a pause of the stale holder says why:
// a failover before the pause tells its promotion, a pause before it the
// lease that ran out.
func TestFaultSentenceFirstWhy(t *testing.T) {
	failover := history.Fault{F: history.FFailover, Nodes: []string{"redis0"}, Start: time.Second, End: 3 * time.Second,
		Detail: "cut master redis0 off from replicas and sentinels; sentinels promoted redis1 after 2.0 s"}
	pause := history.Fault{F: history.FPause, Targets: []int{2}, Start: 2 * time.Second, End: 4 * time.Second}
	if got := faultSentence([]history.Fault{failover, pause}, 2, ""); !strings.Contains(got, "a replica was promoted") || strings.Contains(got, "its lease ran out") {
		t.Errorf("failover first: %q, want the failover's words", got)
	}
	if got := faultSentence([]history.Fault{pause, failover}, 2, ""); strings.Contains(got, "a replica was promoted") || !strings.Contains(got, "its lease ran out") {
		t.Errorf("pause first: %q, want the pause's words", got)
	}
	if got := faultSentence([]history.Fault{pause}, 2, ""); !strings.Contains(got, "its lease ran out while it was stopped") {
		t.Errorf("a pause alone: %q", got)
	}
}

// TestSessionNamedByServer: a paused holder whose client reported a
// session is told to have lost that session, named with the service's
// server when the options give it, and plainly when they do not.
func TestSessionNamedByServer(t *testing.T) {
	b := pausedHolder(false, func(b *builder) { b.cs(3, 2.35, 5.41, 41, 0) })
	b.add(1.0, 3, history.Info, history.FEvent, "", &history.Value{Extra: &history.Extra{Detail: "session 0x1f connected"}})
	h := b.build()
	for _, c := range []struct{ server, want string }{
		{"ZooKeeper", "its ZooKeeper session 0x1f (timeout 1.00 s, paused 3.00 s) expired while it was stopped"},
		{"", "its session 0x1f (timeout 1.00 s, paused 3.00 s) expired while it was stopped"},
	} {
		r := NewOverlap(Options{Lease: time.Second, Server: c.server}).Check(context.Background(), h)
		a := find(t, r, "double-holder")
		if !strings.Contains(a.Explanation, c.want) {
			t.Errorf("server %q: %s\nwant it to say %q", c.server, a.Explanation, c.want)
		}
	}
}
