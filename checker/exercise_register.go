package checker

import (
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// ExerciseRule decides, for one nemesis kind, whether a fault could have
// produced the anomaly its run looks for. A nemesis registers its kind's
// rule with RegisterExercise (nemesis.Register does it from the kind's own
// file); without one, every run of the kind is not exercised.
type ExerciseRule = exerciseRule

// ExerciseRun is what a rule may ask of the run under judgement.
type ExerciseRun = exerciseRun

// ExerciseFault is one fault under judgement: the history's fault, what
// its start op recorded it hit (Hit), its kind and the lease it is
// measured against.
type ExerciseFault = fault

// RegisterExercise adds the rule of one nemesis kind. A rule needs the
// kind's name, its start op and a Judge; a kind registered twice is a
// programming error and panics.
func RegisterExercise(r ExerciseRule) {
	if r.Nemesis == "" || r.F == "" || r.Judge == nil {
		panic(fmt.Sprintf("checker: exercise rule %q of op %q: name, op and Judge are required", r.Nemesis, r.F))
	}
	if HasExerciseRule(r.Nemesis) {
		panic(fmt.Sprintf("checker: exercise rule %q registered twice", r.Nemesis))
	}
	if r.Missed == nil {
		name := r.Nemesis
		r.Missed = func(*exerciseRun) string { return "no " + name + " fault could have produced an anomaly" }
	}
	registerExercise(r)
}

// Held reports whether process p held a lock at t.
func (x *exerciseRun) Held(p int, t time.Duration) bool { return x.holdOf(p, t) != nil }

// LeaseWords renders the run's lease for a sentence: "the 1 s lease", or
// "the lease" when unknown.
func (x *exerciseRun) LeaseWords() string { return x.leaseWords() }

// JudgeHolderFault is the rule of a fault that strikes one lock holder (a
// pause, a cut, a stall of its process): it was exercised when its target
// held the lock as it struck (or its start op's Hit says it struck a
// holder) and it lasted longer than the lease, or when an acquire or
// release of its target in flight while it was in force got no reply (a
// lost reply leaves a lock taken or given back unheard, however short the
// fault: reply-loss@acquire), or when its target was waiting in line for a
// lock another process held as it struck and it lasted longer than the
// lease (a queued waiter's session may end while it waits:
// etcd-io/etcd#11429).
func JudgeHolderFault(x *ExerciseRun, f *ExerciseFault) string {
	p, ok := target(f)
	if !ok {
		return "struck no worker"
	}
	if x.lostReplyDuring(p, f) {
		return ""
	}
	held := x.Held(p, f.Start)
	if f.Hit != nil {
		held = held || f.Hit.Holder
	}
	if !held && !x.queuedAt(p, f.Start) {
		return "struck a process that held no lock"
	}
	if !outlasts(f) {
		return shorter(f)
	}
	return ""
}

// queuedAt reports whether process p was waiting in line at t (queuedBehind).
func (x *exerciseRun) queuedAt(p int, t time.Duration) bool {
	_, ok := queuedBehind(x.a, x.holds, p, t)
	return ok
}

// queuedBehind returns the acquire invocation of process p that was in
// flight at t (invoked at or before t, not yet completed) while another
// process held the lock on its key, and false when there was none.
func queuedBehind(a *analysis, holds []hold, p int, t time.Duration) (*history.Op, bool) {
	for _, pr := range a.pairs {
		inv := pr.Invoke
		if inv.Process != p || inv.F != history.FAcquire || inv.Time > t || (pr.Complete != nil && pr.Complete.Time <= t) {
			continue
		}
		for i := range holds {
			h := &holds[i]
			if h.proc != p && h.key == inv.Key && h.start <= t && t < h.end {
				return inv, true
			}
		}
	}
	return nil, false
}

// JudgeNodeFault is the rule of a fault that strikes a lock node: it was
// exercised when a lock was held as it struck.
func JudgeNodeFault(x *ExerciseRun, f *ExerciseFault) string { return judgeNode(x, f) }

// ruleOf returns the rule of the nemesis kind name, whose faults start with
// op start: its registered rule, else the one its fault ops declare
// (history.FaultOps.Exercise).
func ruleOf(name, start string) (exerciseRule, bool) {
	if r, ok := ruleFor(name); ok {
		return r, true
	}
	ops, ok := history.FaultOpsOf(start)
	if !ok {
		return exerciseRule{}, false
	}
	switch ops.Exercise {
	case history.ExerciseHolder:
		return exerciseRule{Nemesis: name, F: start, Judge: JudgeHolderFault, Missed: func(x *exerciseRun) string {
			return "no " + name + " fault struck a lock holder for longer than " + x.leaseWords()
		}}, true
	case history.ExerciseNode:
		return exerciseRule{Nemesis: name, F: start, Judge: JudgeNodeFault, Missed: func(*exerciseRun) string {
			return "no " + name + " fault struck a lock node while a lock was held"
		}}, true
	}
	return exerciseRule{}, false
}

// lostReplyDuring reports whether an acquire or release of process p was
// in flight while f was in force and ended without a reply (info, or done
// by an application that heard none: history.Pair.Unheard).
func (x *exerciseRun) lostReplyDuring(p int, f *ExerciseFault) bool {
	for _, pr := range x.a.pairs {
		inv := pr.Invoke
		if inv.Process != p || (inv.F != history.FAcquire && inv.F != history.FRelease) || !pr.Unheard() {
			continue
		}
		if inv.Time <= f.End && (pr.Complete == nil || pr.Complete.Time >= f.Start) {
			return true
		}
	}
	return false
}
