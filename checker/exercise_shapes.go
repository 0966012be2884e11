package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// shapes are the judgements a nemesis kind's rule may name
// (history.ExerciseRule.Shape): the checker's mechanisms. The rules
// themselves (which kind, which faults, the sentence when none was
// exercised) are declared with each nemesis kind's record.
var shapes = map[string]func(x *exerciseRun, f *fault) string{
	history.ExerciseHolder:       JudgeHolderFault,
	history.ExerciseNode:         judgeNode,
	history.ExercisePause:        judgePause,
	history.ExercisePartition:    judgePartition,
	history.ExerciseCrash:        judgeCrash,
	history.ExerciseClock:        judgeClock,
	history.ExerciseClockClient:  judgeClockClient,
	history.ExerciseFailover:     judgeFailover,
	history.ExerciseFailoverKill: judgeFailoverKill,
	history.ExerciseRedlockJump:  judgeRedlockJump,
	history.ExerciseSessionKill:  judgeSessionKill,
}

// target returns a worker fault's one target process, false when it has none.
func target(f *fault) (int, bool) {
	if len(f.Targets) == 0 {
		return 0, false
	}
	return f.Targets[0], true
}

// judgePause: the paused process held the lock when the pause struck (it was
// in its critical section, entering it, or had not yet sent its release: a
// pause that lands once the release is sent is harmless), or waited in
// line for a lock another held (its own session may end while it waits),
// and the pause outlasted the lease.
func judgePause(x *exerciseRun, f *fault) string {
	p, ok := target(f)
	if !ok {
		return "paused no worker"
	}
	if x.holdOf(p, f.Start) == nil && !x.queuedAt(p, f.Start) {
		return "struck a process that held no lock"
	}
	if !outlasts(f) {
		return shorter(f)
	}
	return ""
}

// judgePartition: the cut-off process held the lock, or waited in line for
// a lock another held, and stayed cut off for longer than the lease.
func judgePartition(x *exerciseRun, f *fault) string {
	p, ok := target(f)
	if !ok {
		return "cut off no worker"
	}
	// The nemesis picked a holder (Hit.Holder); the history alone can only
	// ask whether the process held a lock when the cut was recorded: by
	// then a holder cut off while in its critical section may have sent
	// its release, which hangs.
	held := x.holdOf(p, f.Start) != nil
	if f.Hit != nil {
		held = f.Hit.Holder
	}
	if !held && !x.queuedAt(p, f.Start) {
		return "cut off a process that held no lock"
	}
	if !outlasts(f) {
		return shorter(f)
	}
	return ""
}

// judgeCrash: the killed worker was stopped at a failpoint, or held a lock.
func judgeCrash(x *exerciseRun, f *fault) string {
	if f.Hit != nil {
		if f.Hit.Failpoint != "" || f.Hit.Holder {
			return ""
		}
		return "killed a worker that held no lock and was at no failpoint"
	}
	if strings.Contains(f.Detail, "stopped at failpoint") { // a history recorded before Hit
		return ""
	}
	p, ok := target(f)
	if !ok {
		return "killed no worker"
	}
	for i := range x.holds {
		h := &x.holds[i]
		if h.proc == p && h.start <= f.Start && (h.end > f.Start || h.endKind == endCrash && h.end >= f.Invoked) {
			return ""
		}
	}
	return "killed a worker that held no lock and was at no failpoint"
}

// judgeNode: a lock was held when the node fault struck (the health window,
// checked before, says grants flowed).
func judgeNode(x *exerciseRun, f *fault) string {
	if f.Hit != nil && f.Hit.Holders > 0 {
		return "" // the nemesis saw a holder as it struck
	}
	if x.heldAt(f.Start) == nil && x.heldAt(f.Invoked) == nil {
		return "struck while no lock was held"
	}
	return ""
}

// judgeClock: a lock was held on the jumped node while its clock was off.
func judgeClock(x *exerciseRun, f *fault) string {
	for i := range x.holds {
		h := &x.holds[i]
		if h.start > f.End {
			break
		}
		if h.end <= f.Start {
			continue
		}
		// A combined lock (redis-zk) names its halves, not its nodes: it is
		// held on every node of both.
		if len(h.nodes) == 0 || len(f.Nodes) == 0 || slices.Contains(h.nodes, f.Nodes[0]) || h.combined() {
			return ""
		}
	}
	if len(f.Nodes) == 1 {
		return "jumped while no lock was held on " + f.Nodes[0]
	}
	return "jumped while no lock was held"
}

// judgeClockClient: a worker with a skewed clock tried to take a lock while
// a worker with the real clock held it.
func judgeClockClient(x *exerciseRun, f *fault) string {
	if len(f.Targets) == 0 {
		return "skewed no worker's clock"
	}
	for i := range x.holds {
		h := &x.holds[i]
		if h.start > f.End {
			break
		}
		if h.end <= f.Start || slices.Contains(f.Targets, h.proc) {
			continue
		}
		from, to := max(h.start, f.Start), min(h.end, f.End)
		for _, pr := range x.a.pairs {
			inv := pr.Invoke
			if inv.F == history.FAcquire && inv.Key == h.key && slices.Contains(f.Targets, inv.Process) &&
				inv.Time < to && pr.Returned() > from {
				return ""
			}
		}
	}
	return "saw no skewed worker try to take a lock another held"
}

// promoted reports whether a failover saw a replica promoted.
func promoted(f *fault) bool {
	if f.Hit != nil {
		return f.Hit.Promoted
	}
	return strings.Contains(f.Detail, "promoted") && !strings.Contains(f.Detail, "no promotion")
}

// judgeFailover: a replica was promoted while a lock was held, or while the
// workers left with the old master were granted locks it never replicated.
func judgeFailover(x *exerciseRun, f *fault) string {
	if !promoted(f) {
		return "promoted no replica"
	}
	if x.heldAt(f.Done) != nil {
		return ""
	}
	for i := range x.holds {
		h := &x.holds[i]
		if h.start > f.Start && h.start < f.End && slices.Contains(f.Targets, h.proc) {
			return ""
		}
	}
	return "promoted while no lock was held and the old master granted none"
}

// judgeFailoverKill: a replica was promoted after the master was killed
// right after a grant it had not replicated.
func judgeFailoverKill(_ *exerciseRun, f *fault) string {
	if !promoted(f) {
		return "promoted no replica"
	}
	if f.Hit != nil && f.Hit.Unreplicated || f.Hit == nil && strings.Contains(f.Detail, "right after it granted") {
		return ""
	}
	return "killed the master with no fresh grant unreplicated"
}

// judgeRedlockJump: a worker held the lock when the clock jumped, and
// another tried to take it while the fault was in force.
func judgeRedlockJump(x *exerciseRun, f *fault) string {
	h := x.heldAt(f.Start)
	if h == nil {
		return "jumped while no lock was held"
	}
	for _, pr := range x.a.pairs {
		inv := pr.Invoke
		if inv.F == history.FAcquire && inv.Process != h.proc && inv.Time < f.End && pr.Returned() > f.Start {
			return ""
		}
	}
	return fmt.Sprintf("saw no worker but process %d try to take the lock", h.proc)
}

// judgeSessionKill: the struck process held a lock when its session ended.
func judgeSessionKill(x *exerciseRun, f *fault) string {
	if f.Hit != nil {
		if f.Hit.Holder {
			return ""
		}
		return "ended the session of a worker that held no lock"
	}
	p, ok := target(f)
	if !ok {
		return "ended no worker's session"
	}
	if x.holdOf(p, f.Start) != nil || x.holdOf(p, f.Invoked) != nil {
		return ""
	}
	return "ended the session of a worker that held no lock"
}
