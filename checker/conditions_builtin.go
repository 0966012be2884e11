package checker

import (
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The built-in danger conditions. Each is decided from the history alone:
// the faults' records (what they struck, for how long), the holds, the
// replies that never came, the clients' own events and the lost-lock
// windows of the server-side observers.
func init() {
	for _, c := range []Condition{
		{Name: "holder-paused-past-lease", Aim: "grant+5ms:lease+500ms", Detect: pausedPastLease,
			Definition: "a holder was stopped (paused or starved) for at least a whole lease while it held the lock: its lease ran out while it was stopped, renewed or not"},
		{Name: "waiter-stopped-past-lease", Aim: "acquire+200ms:lease+1s", Detect: waiterStopped,
			Definition: "a process waiting in line for a lock another process held was paused, starved or cut off for at least a whole lease: its own session or lease could end while it waited (a queue lock's waiter, whose own session holds its place)"},
		{Name: "holder-cut-off", Aim: "grant+5ms", Detect: cutOff,
			Definition: "a holder's links to the lock service were cut or faulted (a partition, a blackhole, a link fault) while it held the lock"},
		{Name: "holder-crashed", Aim: "grant+5ms", Detect: crashedHolder,
			Definition: "a worker was killed (SIGKILL, a crash) while it held a lock or stood at a failpoint inside its acquire"},
		{Name: "node-struck-while-held", Aim: "grant+5ms", Detect: nodeStruck,
			Definition: "a lock server was killed, restarted, stopped or starved (a fault on a lock node) while a lock was held"},
		{Name: "release-reply-lost", Aim: "release", Detect: replyLost(history.FRelease),
			Definition: "a release got no reply (it ended info: it may or may not have let the lock go; or its application gave up waiting and went on, unheard)"},
		{Name: "acquire-reply-lost", Aim: "acquire", Detect: replyLost(history.FAcquire),
			Definition: "an acquire got no reply (it ended info: the lock may have been granted to a client that never heard so; or its application gave up waiting and went on, unheard)"},
		{Name: "late-renewal", Aim: "renewal:lease+500ms", Detect: lateRenewal,
			Definition: "a lease renewal (watchdog, keepalive) came after the lease had run out: the client reported its renewal refused with the lock gone, or a release more than a lease after its last renewal"},
		{Name: "grant-during-failover", Detect: grantDuring(isFailover),
			Definition: "a lock was granted while a failover was in force (the master cut off or killed, a replica promoted or being promoted)"},
		{Name: "grant-after-data-loss", Aim: "grant+5ms", Detect: grantDuring(isDataLoss),
			Definition: "a lock was granted while a lock node served again after a restart without its data (restart-lose)"},
		{Name: "clock-moved-while-held", Aim: "grant+5ms", Detect: clockWhileHeld,
			Definition: "a clock was stepped, strobed or made to run fast or slow (a server's or a client's) while a lock was held"},
		{Name: "session-ended-in-cs", Aim: "cs+1ms:lease+500ms", Detect: windowsWhere(endedInCS),
			Definition: "the lock service let a lock go (its lease, session or key ended) while its holder was inside its critical section"},
		{Name: "server-released-first", Aim: "cs+1ms:lease+500ms", Detect: windowsWhere(func(*Evidence, lostWindow) bool { return true }),
			Definition: "the lock service let a lock go while its holder, by the history, still held it and had not begun its release (a lost-lock window)"},
		{Name: "wrote-after-lock-lost", Aim: "cs+1ms:lease+500ms", Detect: windowsWhere(func(_ *Evidence, w lostWindow) bool { return w.accesses > 0 }),
			Definition: "a holder accessed the resource after the lock service had let its lock go (a lost-lock window with an access in it)"},
		{Name: "wrote-after-it-could-know", Detect: windowsWhere(func(_ *Evidence, w lostWindow) bool { return w.after > 0 }),
			Definition: "a holder started an access after its client had been told its lock was gone (an event, a refused renewal)"},
	} {
		RegisterCondition(c)
	}
}

// pausedPastLease finds the holders a process fault (pause, starve; not a
// kill) stopped for at least the lease its record names.
func pausedPastLease(e *Evidence) []Reach {
	var out []Reach
	for _, f := range e.Faults() {
		if history.ClassOf(f.F) != history.ClassProcess || f.F == history.FKillWorker || f.Hit == nil || f.Hit.Lease <= 0 {
			continue
		}
		if f.End-f.Start < f.Hit.Lease {
			continue
		}
		for _, p := range f.Targets {
			for _, h := range e.HeldAt(p, f.Start) {
				out = append(out, reachAt(f.Start+f.Hit.Lease, p, h.Key, h.Acquire, f.Ops[0]))
			}
		}
	}
	return out
}

// waiterStopped finds the processes a process or network fault (not a kill,
// not a failover's) struck for at least the lease its record names while
// they waited in line for a key another process held.
func waiterStopped(e *Evidence) []Reach {
	var out []Reach
	for _, f := range e.Faults() {
		class := history.ClassOf(f.F)
		if (class != history.ClassProcess && class != history.ClassNetwork) || f.F == history.FKillWorker || f.F == history.FFailover ||
			f.Hit == nil || f.Hit.Lease <= 0 || f.End-f.Start < f.Hit.Lease {
			continue
		}
		for _, p := range f.Targets {
			if inv, ok := queuedBehind(e.a, e.a.getHolds(), p, f.Start); ok {
				out = append(out, reachAt(f.Start+f.Hit.Lease, p, inv.Key, inv.Index, f.Ops[0]))
			}
		}
	}
	return out
}

// cutOff finds the holders a network fault struck (not a failover's: the
// workers it names are those left with the old master, not cut off).
func cutOff(e *Evidence) []Reach {
	var out []Reach
	for _, f := range e.Faults() {
		if history.ClassOf(f.F) != history.ClassNetwork || f.F == history.FFailover {
			continue
		}
		for _, p := range f.Targets {
			for _, h := range e.struckHolds(f, p) {
				out = append(out, reachAt(struckAt(f, h), p, h.Key, h.Acquire, f.Ops[0]))
			}
		}
	}
	return out
}

// crashedHolder finds the workers a crash killed while they held a lock,
// or while stopped at a failpoint (its hit says so).
func crashedHolder(e *Evidence) []Reach {
	var out []Reach
	for _, f := range e.Faults() {
		if f.F != history.FKillWorker {
			continue
		}
		for _, p := range f.Targets {
			hs := e.struckHolds(f, p)
			switch {
			case len(hs) > 0:
				out = append(out, reachAt(struckAt(f, hs[0]), p, hs[0].Key, hs[0].Acquire, f.Ops[0]))
			case f.Hit != nil && f.Hit.Failpoint != "":
				out = append(out, reachAt(f.Start, p, f.Hit.Key, f.Ops[0]))
			}
		}
	}
	return out
}

// struckAt is when fault f struck hold h, as near as the history tells:
// the fault's start, or h's when it came after; for a hold that had ended
// by the fault's start, the earliest moment of it after the fault was
// invoked.
func struckAt(f history.Fault, h Hold) time.Duration {
	if f.Start < h.End {
		return max(f.Start, h.Start)
	}
	return max(f.Invoked, h.Start)
}

// struckHolds returns the holds of process p that fault f struck. A fault
// whose record says what it struck (Hit) struck a holder when Hit.Holder
// says so, somewhere between its invocation and its record: the holds of
// p open in that span (a holder cut off or killed inside a 10 ms critical
// section has often sent its release by the time the fault is recorded,
// as the exercise checker's rules know). A fault without one (a history
// recorded before faults carried one) struck the holds open at its start.
func (e *Evidence) struckHolds(f history.Fault, p int) []Hold {
	if f.Hit == nil {
		return e.HeldAt(p, f.Start)
	}
	if !f.Hit.Holder {
		return nil
	}
	var out []Hold
	for _, h := range e.Holds() {
		if h.Process == p && h.Start <= f.Done && f.Invoked < h.End && (f.Hit.Key == "" || h.Key == f.Hit.Key) {
			out = append(out, h)
		}
	}
	return out
}

// nodeStruck finds the faults on lock nodes (a kill, a restart, a stop or
// a stall of a server: faults that name nodes and no worker) that struck
// while some lock was held: one reach per fault, at the first such hold.
//
// A fault on a node strikes somewhere between its invocation and its
// completion (a kill waits for the server to be gone before it is
// recorded, tens of milliseconds on a busy machine: longer than a 10 ms
// critical section), and its record counts the holders the nemesis saw at
// the moment it struck (Hit.Holders). A fault with such a record reached
// the condition when that count is not zero, shown by the first hold
// that overlaps its strike; one without (a history recorded before
// faults carried one) when a hold was open at its start.
func nodeStruck(e *Evidence) []Reach {
	var out []Reach
	for _, f := range e.Faults() {
		class := history.ClassOf(f.F)
		if len(f.Nodes) == 0 || len(f.Targets) > 0 || (class != history.ClassNode && class != history.ClassProcess) {
			continue
		}
		from, to := f.Start, f.Start
		if f.Hit != nil {
			if f.Hit.Holders == 0 {
				continue
			}
			from, to = f.Invoked, f.Done
		}
		for _, h := range e.Holds() {
			if h.Start <= to && from < h.End {
				out = append(out, reachAt(struckAt(f, h), h.Process, h.Key, h.Acquire, f.Ops[0]))
				break
			}
		}
	}
	return out
}

// replyLost returns the detector of the ops named f that got no reply.
func replyLost(f string) func(*Evidence) []Reach {
	return func(e *Evidence) []Reach {
		var out []Reach
		for _, pr := range e.Pairs() {
			if pr.Invoke.F != f || !pr.Unheard() {
				continue
			}
			ops := []int{pr.Invoke.Index}
			if pr.Complete != nil {
				ops = append(ops, pr.Complete.Index)
			}
			out = append(out, reachAt(pr.Invoke.Time, pr.Invoke.Process, pr.Invoke.Key, ops...))
		}
		return out
	}
}

// lateRenewal finds the clients' reports of a renewal too late: the
// watchdog's release more than a lease after its last renewal, or a
// renewal refused because the lock was gone.
func lateRenewal(e *Evidence) []Reach {
	var out []Reach
	h := e.History()
	for i := range h {
		op := &h[i]
		if op.F != history.FEvent || op.Value == nil || op.Value.Extra == nil {
			continue
		}
		d := op.Value.Extra.Detail
		late := strings.Contains(d, "longer than the") && strings.Contains(d, "lease")
		refused := strings.Contains(d, "renewal") && strings.Contains(d, "refused")
		if late || refused {
			out = append(out, reachAt(op.Time, op.Process, op.Key, op.Index))
		}
	}
	return out
}

// isFailover reports whether f is a failover (cut or killed master).
func isFailover(f history.Fault) bool { return f.F == history.FFailover }

// isDataLoss reports whether f restarted a node without its data.
func isDataLoss(f history.Fault) bool {
	return f.Hit != nil && (f.Hit.Nemesis == "restart-lose" || len(f.Hit.Lost) > 0)
}

// grantDuring returns the detector of the grants made while a fault that
// is matches was in force.
func grantDuring(is func(history.Fault) bool) func(*Evidence) []Reach {
	return func(e *Evidence) []Reach {
		var out []Reach
		for _, f := range e.Faults() {
			if !is(f) {
				continue
			}
			for _, h := range e.Holds() {
				if h.Start >= f.Start && h.Start <= f.End {
					out = append(out, reachAt(h.Start, h.Process, h.Key, h.Acquire, f.Ops[0]))
				}
			}
		}
		return out
	}
}

// clockWhileHeld finds the clock faults in force while a lock was held:
// one reach per fault, at the first hold it overlapped.
func clockWhileHeld(e *Evidence) []Reach {
	var out []Reach
	for _, f := range e.Faults() {
		if history.ClassOf(f.F) != history.ClassClock {
			continue
		}
		for _, h := range e.Holds() {
			if h.Start < f.End && f.Start < h.End {
				out = append(out, reachAt(max(f.Start, h.Start), h.Process, h.Key, h.Acquire, f.Ops[0]))
				break
			}
		}
	}
	return out
}

// windowsWhere returns the detector of the lost-lock windows keep keeps.
func windowsWhere(keep func(*Evidence, lostWindow) bool) func(*Evidence) []Reach {
	return func(e *Evidence) []Reach {
		var out []Reach
		ws, _, _ := lostWindows(e.a)
		for _, w := range ws {
			if keep(e, w) {
				out = append(out, reachAt(w.released, w.hold.proc, w.hold.key, w.ops...))
			}
		}
		return out
	}
}

// endedInCS reports whether w's lock went while its holder was inside a
// critical section: invoked, and not yet answered, at the release.
func endedInCS(e *Evidence, w lostWindow) bool {
	at := w.released
	for _, pr := range e.criticalSections(w.hold.proc) {
		if pr.Invoke.Time > at {
			continue
		}
		if pr.Complete == nil || pr.Complete.Time >= at {
			return true
		}
	}
	return false
}
