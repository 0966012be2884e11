package checker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The faults of TestRegisteredExercise, registered from test code only.
func init() {
	history.RegisterFaultOps(history.FaultOps{Start: "toy-stall", End: "toy-unstall", Class: history.ClassProcess})
	RegisterExercise(ExerciseRule{Nemesis: "toy-stall", F: "toy-stall", Judge: JudgeHolderFault})
	history.RegisterFaultOps(history.FaultOps{Start: "toy-crash", End: "toy-reboot", Class: history.ClassNode})
	RegisterExercise(ExerciseRule{Nemesis: "toy-crash", F: "toy-crash", Judge: JudgeNodeFault,
		Missed: func(x *ExerciseRun) string {
			return "no toy-crash struck while a lock was held (" + x.LeaseWords() + ")"
		}})
	// Faults that declare their exercise shape and register no rule.
	history.RegisterFaultOps(history.FaultOps{Start: "toy-freeze", End: "toy-thaw", Exercise: history.ExerciseHolder})
	history.RegisterFaultOps(history.FaultOps{Start: "toy-unplug", End: "toy-plug", Exercise: history.ExerciseNode})
	history.RegisterFaultOps(history.FaultOps{Start: "toy-shrug", End: "toy-unshrug"})
}

// TestDeclaredExercise judges faults whose kinds registered no rule by the
// shape their fault ops declare, named by the kind their Hit records.
func TestDeclaredExercise(t *testing.T) {
	freeze := &history.Value{Extra: &history.Extra{Targets: []int{3}, Hit: &history.Hit{Nemesis: "freezer"}}}
	unplug := &history.Value{Extra: &history.Extra{Nodes: []string{"n1"}, Hit: &history.Hit{Nemesis: "unplugger"}}}
	checkExercise(t, []exerciseCase{
		{"a freeze of a holder, 3 leases", warm().held(3, 2.0, 5.2).nem("toy-freeze", 2.05, 5.05, freeze).build(), Valid, ""},
		{"a short freeze", warm().held(3, 2.0, 2.4).nem("toy-freeze", 2.05, 2.35, freeze).build(), Unknown,
			"no freezer fault struck a lock holder for longer than the 1 s lease (1 freezer fault"},
		{"an unplug while a lock was held", warm().held(3, 2.0, 2.4).nem("toy-unplug", 2.05, 4.0, unplug).build(), Valid, ""},
		{"an unplug while none was held", warm().held(3, 2.0, 2.1).nem("toy-unplug", 2.5, 4.0, unplug).build(), Unknown,
			"no unplugger fault struck a lock node while a lock was held (1 unplugger fault"},
		{"a fault with no shape", warm().held(3, 2.0, 5.2).nem("toy-shrug", 2.05, 5.05, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build(), Unknown,
			"no exercise rule for the toy-shrug nemesis (1 toy-shrug fault"},
	})
}

// TestRegisteredExercise judges faults of kinds registered from test code
// with the exported rules: a holder fault that outlasts the lease while its
// target holds the lock is exercised, a short one or one on a process that
// held nothing is not; a node fault is exercised while a lock is held.
func TestRegisteredExercise(t *testing.T) {
	stall := func(p int, hit bool) *history.Value {
		v := &history.Value{Extra: &history.Extra{Targets: []int{p}}}
		if hit {
			v.Mut().Hit = &history.Hit{Nemesis: "toy-stall", Holder: true}
		}
		return v
	}
	checkExercise(t, []exerciseCase{
		{"a stall of a holder, 3 leases", warm().held(3, 2.0, 5.2).nem("toy-stall", 2.05, 5.05, stall(3, true)).build(), Valid, ""},
		{"a stall of a holder, by its history alone", warm().held(3, 2.0, 5.2).nem("toy-stall", 2.05, 5.05, stall(3, false)).build(), Valid, ""},
		{"a short stall", warm().held(3, 2.0, 2.4).nem("toy-stall", 2.05, 2.35, stall(3, true)).build(), Unknown,
			"no toy-stall fault could have produced an anomaly (1 toy-stall fault, the longest 300 ms: 1 lasted no longer than the 1 s lease)"},
		{"a stall of a process that held nothing", warm().held(3, 2.0, 2.1).nem("toy-stall", 2.5, 5.5, stall(3, false)).build(), Unknown,
			"1 struck a process that held no lock"},
		{"a stall with no target", warm().held(3, 2.0, 2.1).nem("toy-stall", 2.5, 5.5, &history.Value{}).build(), Unknown,
			"1 struck no worker"},
		{"a short stall while its target's acquire lost its reply", warm().nem("toy-stall", 2.05, 2.35, stall(3, false)).acquireInfo(3, 2.1, 2.6).build(), Valid, ""},
		{"a short stall while its target's release lost its reply", warm().held(3, 2.0, 2.02).nem("toy-stall", 2.05, 2.35, stall(3, false)).
			pair(3, history.FRelease, "k", 2.1, 2.6, history.Info, nil, nil).build(), Valid, ""},
		{"a lost reply of another process's", warm().nem("toy-stall", 2.05, 2.35, stall(3, false)).acquireInfo(4, 2.1, 2.6).build(), Unknown,
			"1 struck a process that held no lock"},
		{"a lost reply after the fault", warm().nem("toy-stall", 2.05, 2.35, stall(3, false)).acquireInfo(3, 2.4, 2.9).build(), Unknown,
			"1 struck a process that held no lock"},
		{"a lost reply asked as the fault ended", warm().nem("toy-stall", 2.05, 2.35, stall(3, false)).acquireInfo(3, 2.35, 2.9).build(), Valid, ""},
		{"a lost reply given up as the fault began", warm().nem("toy-stall", 2.05, 2.35, stall(3, false)).acquireInfo(3, 1.9, 2.05).build(), Valid, ""},
		{"a lost reply given up before the fault", warm().nem("toy-stall", 2.05, 2.35, stall(3, false)).acquireInfo(3, 1.9, 2.0).build(), Unknown,
			"1 struck a process that held no lock"},
		{"an acquire never answered", warm().nem("toy-stall", 2.05, 2.35, stall(3, false)).add(2.1, 3, history.Invoke, history.FAcquire, "k", nil).build(), Valid, ""},
		{"a crash while a lock was held", warm().held(3, 2.0, 2.4).nem("toy-crash", 2.05, 4.0, &history.Value{Extra: &history.Extra{Nodes: []string{"n1"}}}).build(), Valid, ""},
		{"a crash while none was held", warm().held(3, 2.0, 2.1).nem("toy-crash", 2.5, 4.0, &history.Value{Extra: &history.Extra{Nodes: []string{"n1"}}}).build(), Unknown,
			"no toy-crash struck while a lock was held (the 1 s lease)"},
	})
	for _, bad := range []ExerciseRule{
		{Nemesis: "toy-stall", F: "toy-stall", Judge: JudgeHolderFault},
		{Nemesis: "toy-nothing", F: "toy-stall"},
		{F: "toy-stall", Judge: JudgeHolderFault},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterExercise(%q, %q) did not panic", bad.Nemesis, bad.F)
				}
			}()
			RegisterExercise(bad)
		}()
	}
}

// exerciseCase is a history and the exercise checker's verdict on it (with
// a 1 s lease), with a phrase of its reason when it is not exercised.
type exerciseCase struct {
	name string
	h    history.History
	want Validity
	why  string
}

// checkExercise runs the exercise checker on each case.
func checkExercise(t *testing.T, tests []exerciseCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := NewExercise(Options{Lease: time.Second}).Check(context.Background(), tt.h)
			if res.Valid != tt.want || !strings.Contains(res.NotExercised, tt.why) {
				t.Errorf("%v %q, want %v with %q", res.Valid, res.NotExercised, tt.want, tt.why)
			}
		})
	}
}
