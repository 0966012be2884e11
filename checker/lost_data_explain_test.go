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
	b.pair(3, history.FAcquire, "k", 2.5, 2.74, history.OK, nil, &history.Value{Owner: "p3-a", Nodes: []string{"lock0", "lock3", "lock4"}})
	b.pair(history.NemesisProcess, "restart-lose", "", 2.92, 2.96, history.Info, nil, &history.Value{Nodes: []string{"lock3"},
		Hit: &history.Hit{Nemesis: "restart-lose", Holder: true, Key: "k", Holders: 1, Node: "lock3", Lost: []string{"k"},
			HeldOn: []string{"lock0", "lock3", "lock4"}}})
	b.pair(7, history.FAcquire, "k", 2.9, 3.03, history.OK, nil, &history.Value{Owner: "p7-b", Nodes: []string{"lock1", "lock2", "lock3"}})
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
