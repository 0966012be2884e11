package history

import (
	"fmt"
	"sync"
)

// The exercise shapes: the judgements the exercise checker knows, which a
// nemesis kind's rule names (ExerciseRule.Shape) and a kind with op names
// of its own may declare (FaultOps.Exercise).
const (
	// ExerciseHolder: the fault strikes one worker (its start op's
	// Targets); it was exercised when that worker held a lock as it struck
	// and it lasted longer than the lease, or when an acquire or release
	// of it in flight got no reply.
	ExerciseHolder = "holder"
	// ExerciseNode: the fault strikes a lock node (Nodes); it was
	// exercised when a lock was held as it struck.
	ExerciseNode = "node"
	// ExercisePause: a pause of a worker that held a lock, longer than
	// the lease (or over a failpoint's window).
	ExercisePause = "pause"
	// ExercisePartition: a holder cut off from the lock nodes for longer
	// than the lease, told by the history alone.
	ExercisePartition = "partition"
	// ExerciseCrash: a worker killed while it held a lock or was stopped
	// at a failpoint.
	ExerciseCrash = "crash"
	// ExerciseClock: a lock server's clock moved while a lock was held on
	// it.
	ExerciseClock = "clock"
	// ExerciseClockClient: a worker with a moved clock tried to take a
	// lock while another held it.
	ExerciseClockClient = "clock-client"
	// ExerciseFailover: a replica promoted while a lock was held or the
	// old master still granted.
	ExerciseFailover = "failover"
	// ExerciseFailoverKill: a replica promoted after the killed master
	// had acknowledged a grant it had not replicated.
	ExerciseFailoverKill = "failover-kill"
	// ExerciseRedlockJump: a clock jump on the node a holder took while a
	// rival tried to take the lock.
	ExerciseRedlockJump = "redlock-jump"
	// ExerciseSessionKill: the database ended the session of a worker
	// that held a lock.
	ExerciseSessionKill = "session-kill"
)

// ExerciseRule says how the exercise checker judges the faults of one
// nemesis kind. Each nemesis declares its kind's rule with its record
// (nemesis.Kind.Exercise), beside its code; the checker keeps the
// judgements (the shapes).
type ExerciseRule struct {
	// Nemesis is the kind's name (Hit.Nemesis); F the op that starts its
	// faults.
	Nemesis, F string
	// Shape is the judgement: one of the Exercise* shapes.
	Shape string
	// Matches tells this kind's faults from another kind's with the same F
	// in a history whose ops carry no Hit (a pause of a worker, a
	// pause-leader of a node); nil matches every fault with F.
	Matches func(f Fault) bool
	// Missed is the sentence when none of the kind's faults was
	// exercised; "{lease}" in it stands for the run's lease ("the 1 s
	// lease").
	Missed string
}

var (
	ruleMu        sync.RWMutex
	exerciseRules []ExerciseRule
)

// RegisterExerciseRule adds the rule of one nemesis kind. A rule needs the
// kind's name, its start op and a shape; a kind registered twice is a
// programming error and panics.
func RegisterExerciseRule(r ExerciseRule) {
	if r.Nemesis == "" || r.F == "" || r.Shape == "" {
		panic(fmt.Sprintf("history: exercise rule %+v: name, start op and shape are required", r))
	}
	ruleMu.Lock()
	defer ruleMu.Unlock()
	for _, o := range exerciseRules {
		if o.Nemesis == r.Nemesis {
			panic(fmt.Sprintf("history: exercise rule of %q registered twice", r.Nemesis))
		}
	}
	exerciseRules = append(exerciseRules, r)
}

// ExerciseRules returns the registered rules, in registration order.
func ExerciseRules() []ExerciseRule {
	ruleMu.RLock()
	defer ruleMu.RUnlock()
	return append([]ExerciseRule(nil), exerciseRules...)
}

// ClaimedByAnother reports whether the declared rule of a kind other than
// name, for the same start op f and with a Matches of its own, matches hf:
// a fault of a narrower kind (kill-follower's of kill's), which name's
// rule leaves to it. A kind's Matches may use it to take every fault no
// narrower kind claims.
func ClaimedByAnother(name, f string, hf Fault) bool {
	for _, r := range ExerciseRules() {
		if r.Nemesis != name && r.F == f && r.Matches != nil && r.Matches(hf) {
			return true
		}
	}
	return false
}
