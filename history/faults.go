package history

import (
	"fmt"
	"sort"
	"sync"
)

// Fault classes: what a fault does to the system, which the report draws
// in one colour each.
const (
	// ClassProcess stops or kills a process (a worker, a server).
	ClassProcess = "process"
	// ClassNetwork cuts links.
	ClassNetwork = "network"
	// ClassNode takes a lock server or a session on it down.
	ClassNode = "node"
	// ClassClock moves a clock.
	ClassClock = "clock"
	// ClassOther is any other fault.
	ClassOther = "other"
)

// FaultOps describes the ops of one kind of fault as the history records
// them: the op that starts it, the op that ends it, and what it does. Each
// fault registers its FaultOps (RegisterFaultOps); EndOf, Faults, Validate
// and the report read them, so a new fault touches no list here.
type FaultOps struct {
	// Start and End are the op names (pause, resume).
	Start, End string
	// FromInvoke says the fault is in force from its start op's
	// invocation, not its completion: a failover cuts the master off when
	// it is invoked and completes once a replica is promoted; a
	// session-kill ends a session and completes after the server let its
	// locks go.
	FromInvoke bool
	// Class is what the fault does (ClassProcess, ...); "" is ClassOther.
	Class string
	// Exercise is how the exercise checker judges a fault of a kind that
	// registered no rule of its own: ExerciseHolder or ExerciseNode; ""
	// for none (every run of such a kind is then not exercised).
	Exercise string
}

var (
	faultMu  sync.RWMutex
	faultOps = make(map[string]FaultOps) // by start op
)

// RegisterFaultOps adds a fault's ops. Several nemesis kinds may share a
// start op (pause of a worker, pause-leader of a node) as long as they
// agree on the rest; a start op registered again with another end op, or
// an op name that is already a worker's, panics: it is a programming error
// found at init.
func RegisterFaultOps(f FaultOps) {
	if f.Start == "" || f.End == "" {
		panic(fmt.Sprintf("history: fault ops %+v: start and end op names are required", f))
	}
	if f.Class == "" {
		f.Class = ClassOther
	}
	for _, n := range []string{f.Start, f.End} {
		if isWorkerF(n) || n == FSeed || n == FFinal || n == FServerExit || n == FServerRelease {
			panic(fmt.Sprintf("history: fault op %q is already an op of another kind", n))
		}
	}
	faultMu.Lock()
	defer faultMu.Unlock()
	if old, ok := faultOps[f.Start]; ok && old != f {
		panic(fmt.Sprintf("history: fault ops %+v conflict with %+v", f, old))
	}
	faultOps[f.Start] = f
}

// FaultOpsOf returns the registered ops of the fault that start starts.
func FaultOpsOf(start string) (FaultOps, bool) {
	faultMu.RLock()
	defer faultMu.RUnlock()
	f, ok := faultOps[start]
	return f, ok
}

// EndOf returns the name of the op that ends the fault started by f, and
// false when f does not start a fault.
func EndOf(f string) (string, bool) {
	ops, ok := FaultOpsOf(f)
	return ops.End, ok
}

// fromInvoke reports whether the fault started by f is in force from its
// invocation.
func fromInvoke(f string) bool {
	ops, _ := FaultOpsOf(f)
	return ops.FromInvoke
}

// ClassOf returns the class of the fault started by f, ClassOther for one
// not registered.
func ClassOf(f string) string {
	if ops, ok := FaultOpsOf(f); ok {
		return ops.Class
	}
	return ClassOther
}

// faultFs returns every registered start and end op name, sorted.
func faultFs() []string {
	faultMu.RLock()
	defer faultMu.RUnlock()
	seen := make(map[string]bool)
	for _, f := range faultOps {
		seen[f.Start], seen[f.End] = true, true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// The faults of lockcheck's own nemeses, whose op names this package
// declares.
func init() {
	for _, f := range []FaultOps{
		{Start: FPause, End: FResume, Class: ClassProcess},
		{Start: FPartition, End: FHeal, Class: ClassNetwork},
		{Start: FKill, End: FRestart, Class: ClassNode},
		{Start: FKillWorker, End: FRespawn, Class: ClassProcess},
		{Start: FClock, End: FClockReset, Class: ClassClock},
		{Start: FSkew, End: FUnskew, Class: ClassClock},
		{Start: FFailover, End: FHeal, FromInvoke: true, Class: ClassNetwork},
		{Start: FClockJump, End: FClockReset, Class: ClassClock},
		// A session-kill aims at a holder, ends its session, and
		// completes once another worker was granted the lock: the
		// server let go before the completion.
		{Start: FSessionKill, End: FReconnect, FromInvoke: true, Class: ClassNode},
	} {
		RegisterFaultOps(f)
	}
}
