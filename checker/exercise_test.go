package checker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// nem adds a nemesis fault from t0 to t1 whose start op carries v (and its
// end op nothing).
func (b *builder) nem(f string, t0, t1 float64, v *history.Value) *builder {
	end, _ := history.EndOf(f)
	b.pair(history.NemesisProcess, f, "", t0-0.001, t0, history.Info, nil, v)
	return b.pair(history.NemesisProcess, end, "", t1-0.001, t1, history.Info, nil, nil)
}

// warm returns a builder with 40 clean cycles by processes 0..2 until 2 s.
func warm() *builder { return (&builder{}).cycles(40, 0, 1, 0, false) }

// held adds process p's grant at t0, a critical section from t0+0.01 to cs
// and its release right after.
func (b *builder) held(p int, t0, cs float64) *builder {
	return b.acquire(p, t0, t0+0.002, 0, "o").pair(p, history.FCS, "k", t0+0.01, cs, history.OK, nil,
		&history.Value{Read: history.Int64(40), Wrote: history.Int64(41)}).release(p, cs+0.01, cs+0.02, true, "o")
}

func TestExercise(t *testing.T) {
	hit := func(kind string) *history.Hit { return &history.Hit{Nemesis: kind} }
	tests := []struct {
		name  string
		h     history.History
		lease time.Duration
		want  Validity
		why   string // a substring of NotExercised ("" when exercised)
	}{
		{"control run", warm().build(), time.Second, Valid, ""},
		{"an interrupted fault start", warm().add(2.5, history.NemesisProcess, history.Invoke, history.FPause, "", nil).build(),
			time.Second, Unknown, "never finished starting"},
		{"pause of a holder in its critical section, 3 leases", warm().held(3, 2.0, 5.2).
			nem(history.FPause, 2.05, 5.05, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: hit("pause")}}).build(), time.Second, Valid, ""},
		{"pause shorter than the lease", warm().held(3, 2.0, 2.4).
			nem(history.FPause, 2.05, 2.35, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: hit("pause")}}).build(), time.Second, Unknown,
			"no pause lasted longer than the 1 s lease while its process held the lock or waited in line for it (1 pause fault, the longest 300 ms: 1 lasted no longer than the 1 s lease)"},
		{"pause of a process that held no lock", warm().held(3, 2.0, 2.1).
			nem(history.FPause, 2.5, 5.5, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build(), time.Second, Unknown, "1 struck a process that held no lock"},
		{"pause of a waiter queued behind a holder, 3 leases", warm().held(3, 2.0, 5.2).acquireFail(4, 2.1, 5.3).
			nem(history.FPause, 2.2, 5.2, &history.Value{Extra: &history.Extra{Targets: []int{4}}}).build(), time.Second, Valid, ""},
		{"pause of a waiter shorter than the lease", warm().held(3, 2.0, 5.2).acquireFail(4, 2.1, 5.3).
			nem(history.FPause, 2.2, 2.9, &history.Value{Extra: &history.Extra{Targets: []int{4}}}).build(), time.Second, Unknown, "1 lasted no longer than the 1 s lease"},
		{"pause of an asker nobody held the lock against", warm().held(3, 2.0, 2.1).acquireFail(4, 2.5, 5.6).
			nem(history.FPause, 2.6, 5.5, &history.Value{Extra: &history.Extra{Targets: []int{4}}}).build(), time.Second, Unknown, "1 struck a process that held no lock"},
		{"pause of a waiter after its acquire ended", warm().held(3, 2.0, 5.2).acquireFail(4, 2.1, 2.15).
			nem(history.FPause, 2.2, 5.2, &history.Value{Extra: &history.Extra{Targets: []int{4}}}).build(), time.Second, Unknown, "1 struck a process that held no lock"},
		{"a partition of a waiter queued behind a holder", warm().held(3, 2.0, 5.2).acquireFail(4, 2.1, 5.3).
			nem(history.FPartition, 2.2, 5.2, &history.Value{Extra: &history.Extra{Targets: []int{4}}}).build(), time.Second, Valid, ""},
		{"pause once the release was sent", warm().held(3, 2.0, 2.1).
			nem(history.FPause, 2.115, 5.5, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build(), time.Second, Unknown, "held no lock"},
		{"lease unknown: length not judged", warm().held(3, 2.0, 2.4).
			nem(history.FPause, 2.05, 2.35, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build(), 0, Valid, ""},
		{"lease from the op when the options give none", warm().held(3, 2.0, 2.4).
			nem(history.FPause, 2.05, 2.35, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: &history.Hit{Nemesis: "pause", Lease: time.Second}}}).build(),
			0, Unknown, "the 1 s lease"},
		{"pause-leader while a lock was held", warm().held(3, 2.0, 2.4).
			nem(history.FPause, 2.05, 4.0, &history.Value{Extra: &history.Extra{Nodes: []string{"zk2"}}}).build(), time.Second, Valid, ""},
		{"pause-leader while none was held", warm().held(3, 2.0, 2.1).
			nem(history.FPause, 2.5, 4.0, &history.Value{Extra: &history.Extra{Nodes: []string{"zk2"}}}).build(), time.Second, Unknown,
			"no pause-leader struck a lock node while a lock was held and grants flowed"},
		{"partition of a holder for 2 leases", warm().held(3, 2.0, 2.4).
			nem(history.FPartition, 2.05, 4.05, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: &history.Hit{Nemesis: "partition", Holder: true}}}).build(), time.Second, Valid, ""},
		{"partition of a holder, by the history alone", warm().held(3, 2.0, 2.4).
			nem(history.FPartition, 2.05, 4.05, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build(), time.Second, Valid, ""},
		{"partition of a worker the nemesis saw hold nothing", warm().held(3, 2.0, 2.4).
			nem(history.FPartition, 2.05, 4.05, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: hit("partition")}}).build(), time.Second, Unknown,
			"1 cut off a process that held no lock"},
		{"partition of a holder for half a lease", warm().held(3, 2.0, 2.4).
			nem(history.FPartition, 2.05, 2.55, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: &history.Hit{Nemesis: "partition", Holder: true}}}).build(), time.Second, Unknown,
			"no partition cut a lock holder off for longer than the 1 s lease"},
		{"crash of a holder", warm().acquire(3, 2.0, 2.002, 0, "o").crash(3, 2.06).
			nem(history.FKillWorker, 2.05, 2.3, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build(), time.Second, Valid, ""},
		{"crash of a worker that held nothing", warm().
			nem(history.FKillWorker, 2.05, 2.3, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: hit("crash")}}).build(), time.Second, Unknown,
			"no crash killed a worker that held a lock or was stopped at a failpoint"},
		{"kill while a lock was held", warm().held(3, 2.0, 2.4).
			nem(history.FKill, 2.05, 3.0, &history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "SIGKILL lock0"}}).build(), time.Second, Valid, ""},
		{"kill-follower while none was held", warm().
			nem(history.FKill, 2.5, 3.0, &history.Value{Extra: &history.Extra{Nodes: []string{"zk3"}, Detail: "SIGKILL follower zk3"}}).build(), time.Second, Unknown,
			"no kill-follower struck"},
		{"clock jump while a lock was held", warm().held(3, 2.0, 2.4).
			nem(history.FClock, 2.05, 3.0, &history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "wall clock of lock0 jumped 3 s forward"}}).build(),
			time.Second, Valid, ""},
		{"clock-back while none was held", warm().
			nem(history.FClock, 2.5, 3.0, &history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}, Detail: "wall clock of lock0 jumped 3 s back"}}).build(),
			time.Second, Unknown, "no clock-back jump landed on a node while a lock was held there"},
		{"clock-client: a skewed waiter tried while another held", warm().held(0, 2.0, 2.5).acquireFail(1, 2.1, 2.2).
			nem(history.FSkew, 2.05, 3.0, &history.Value{Extra: &history.Extra{Targets: []int{1, 2}}}).build(), time.Second, Valid, ""},
		{"clock-client: no skewed waiter tried", warm().held(0, 2.0, 2.5).
			nem(history.FSkew, 2.05, 3.0, &history.Value{Extra: &history.Extra{Targets: []int{1, 2}}}).build(), time.Second, Unknown,
			"no worker with a skewed clock tried to take a lock while another worker held it"},
		{"failover promoted while the old master granted", warm().held(3, 2.5, 2.6).
			nem(history.FFailover, 2.4, 4.0, &history.Value{
				Extra: &history.Extra{Nodes: []string{"redis0"}, Targets: []int{3}, Detail: "cut master redis0 off; sentinels promoted redis1 after 0.4 s"},
			}).build(), time.Second, Valid, ""},
		{"failover promoted nothing", warm().held(3, 2.5, 2.6).
			nem(history.FFailover, 2.4, 4.0, &history.Value{
				Extra: &history.Extra{Nodes: []string{"redis0"}, Targets: []int{3}, Detail: "cut master redis0 off; no promotion within 15s (timeout)"},
			}).build(), time.Second, Unknown, "1 promoted no replica"},
		{"failover-kill right after a grant", warm().
			nem(history.FFailover, 2.0, 5.0, &history.Value{
				Extra: &history.Extra{Nodes: []string{"redis0"}, Hit: &history.Hit{Nemesis: "failover-kill", Promoted: true, Unreplicated: true}},
			}).build(), time.Second, Valid, ""},
		{"failover-kill with no fresh grant", warm().
			nem(history.FFailover, 2.0, 5.0, &history.Value{
				Extra: &history.Extra{Nodes: []string{"redis0"}, Detail: "SIGKILL master redis0; sentinels promoted redis1 after 3 s"},
			}).build(), time.Second, Unknown,
			"no failover-kill promoted a replica"},
		{"redlock-clock-jump with a holder and a rival", warm().held(3, 2.0, 3.5).acquireFail(4, 2.2, 2.8).
			nem(history.FClockJump, 2.1, 4.0, &history.Value{Extra: &history.Extra{Nodes: []string{"lock2"}}}).build(), time.Second, Valid, ""},
		{"a nemesis with no rule", warm().held(3, 2.0, 2.4).
			nem(history.FPause, 2.05, 5.05, &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: hit("earthquake")}}).build(), time.Second, Unknown,
			"no exercise rule for the earthquake nemesis"},
		{"first fault before any grant", (&builder{}).nem(history.FKill, 0.01, 0.5, &history.Value{Extra: &history.Extra{Nodes: []string{"lock0"}}}).
			cycles(10, 0.6, 1, 0, false).build(), time.Second, Unknown, "only 0 grants before the first fault at 0.01 s"},
		{"one fault exercised of two", warm().held(3, 2.0, 2.1).held(4, 3.0, 6.5).
			nem(history.FPause, 2.5, 5.5, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).
			nem(history.FPause, 5.6, 6.0, &history.Value{Extra: &history.Extra{Targets: []int{4}}}).
			nem(history.FPause, 3.05, 3.2, &history.Value{Extra: &history.Extra{Targets: []int{4}}}).build(), 100 * time.Millisecond, Valid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewExercise(Options{Lease: tt.lease}).Check(context.Background(), tt.h)
			if r.Checker != "exercise" || r.Valid != tt.want {
				t.Fatalf("%s %v, want %v; not exercised %q, error %q, stats %v", r.Checker, r.Valid, tt.want, r.NotExercised, r.Error, r.Stats)
			}
			if tt.why == "" && r.NotExercised != "" {
				t.Errorf("not exercised %q on an exercised run", r.NotExercised)
			}
			if !strings.Contains(r.NotExercised, tt.why) {
				t.Errorf("not exercised %q, want it to say %q", r.NotExercised, tt.why)
			}
		})
	}
}

// TestExerciseComposed: Default carries the reason to the top, an invalid
// verdict stays invalid, and a control run is exempt.
func TestExerciseComposed(t *testing.T) {
	ctx := context.Background()
	short := warm().held(3, 2.0, 2.4).nem(history.FPause, 2.05, 2.35, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build()
	r := Default(Options{Lease: time.Second}).Check(ctx, short)
	if r.Valid != Unknown || !strings.HasPrefix(r.NotExercised, "no pause lasted longer than the 1 s lease") {
		t.Fatalf("short pause: %v, not exercised %q", r.Valid, r.NotExercised)
	}
	// A double holder under a pause too short to explain it is still
	// invalid: Invalid > Unknown.
	double := warm().acquire(3, 2.0, 2.002, 0, "o3").acquire(4, 2.1, 2.102, 0, "o4").
		cs(3, 2.2, 2.3, 40, 0).cs(4, 2.21, 2.31, 40, 0).release(3, 2.4, 2.41, true, "o3").release(4, 2.42, 2.43, true, "o4").
		nem(history.FPause, 2.05, 2.35, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build()
	r = Default(Options{Lease: time.Second}).Check(ctx, double)
	if r.Valid != Invalid || r.NotExercised == "" {
		t.Fatalf("double holder under a short pause: %v, not exercised %q", r.Valid, r.NotExercised)
	}
	r = Default(Options{Lease: time.Second}).Check(ctx, warm().build())
	if r.Valid != Valid || r.NotExercised != "" {
		t.Fatalf("control: %v, not exercised %q", r.Valid, r.NotExercised)
	}
	// The same history from a run given a nemesis: it never struck.
	r = Default(Options{Lease: time.Second, Faulted: true}).Check(ctx, warm().build())
	if r.Valid != Unknown || r.NotExercised != "the nemesis started no fault before the run ended" {
		t.Fatalf("faulted run without faults: %v, not exercised %q", r.Valid, r.NotExercised)
	}
}

// TestExerciseRulesCoverFaults: every op that starts a fault has a rule, so
// no built-in fault is judged "no exercise rule".
func TestExerciseRulesCoverFaults(t *testing.T) {
	for _, f := range []string{history.FPause, history.FPartition, history.FKill, history.FKillWorker, history.FClock,
		history.FSkew, history.FFailover, history.FClockJump} {
		if _, ok := history.EndOf(f); !ok {
			t.Fatalf("%s starts no fault", f)
		}
		if k := kindOf(f, history.Fault{F: f}, nil); !HasExerciseRule(k) {
			t.Errorf("no exercise rule for %s (kind %q)", f, k)
		}
	}
}
