package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

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
			if got := lostDataWhy(c.f); got != c.want {
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
