package history

import "time"

// Nemesis operation names. A fault is recorded as an invoke/info pair of its
// start op (pause, partition, kill) and later an invoke/info pair of the op
// that ends it (resume, heal, restart). The fault is in force from the start
// op's info completion to the end op's info completion.
const (
	FPause     = "pause"
	FResume    = "resume"
	FPartition = "partition"
	FHeal      = "heal"
	FKill      = "kill"
	FRestart   = "restart"
	// FKillWorker is a crash of a worker process (SIGKILL); FRespawn ends
	// its window. The controller replaces a dead worker at once, so the
	// window only marks when the crash happened.
	FKillWorker = "kill-worker"
	FRespawn    = "respawn"
	// FClock moves a lock server's wall clock; FClockReset puts it back.
	FClock      = "clock"
	FClockReset = "clock-reset"
	// FSkew moves workers' client clocks; FUnskew puts them back.
	FSkew   = "skew"
	FUnskew = "unskew"
	// FFailover starts a master failover (the master cut off or killed, a
	// replica promoted); FHeal ends it.
	FFailover = "failover"
	// FClockJump moves a lock node's wall clock with whatever else the
	// nemesis's timeline needs (redlock-clock-jump); FClockReset ends it too.
	FClockJump = "clock-jump"
	// FSessionKill has a database server end a lock holder's session
	// (pg_terminate_backend, KILL CONNECTION); the client reconnects on
	// its own, so FReconnect only closes the window.
	FSessionKill = "session-kill"
	FReconnect   = "reconnect"
)

// Fault is one nemesis fault and the window it was in force.
type Fault struct {
	// F is the start op's name (pause, partition, kill).
	F string
	// Start is when the fault took effect; End when it was undone, or the end
	// of the history when it never was.
	Start, End time.Duration
	// Invoked is when its start op was invoked: the nemesis began it then,
	// and it struck between Invoked and Done (a kill's SIGKILL, sent after
	// a leader lookup, is recorded once the server is gone). Start when
	// the history has no invocation for it.
	Invoked time.Duration
	// Done is when its start op completed: the same as Start but for a
	// fault in force from its invocation (FaultOps.FromInvoke), which
	// took effect somewhere between Start and Done (a session-kill ends
	// the session, and the server its locks, before it completes).
	Done time.Duration
	// Targets and Nodes are what the fault acted on.
	Targets []int
	Nodes   []string
	// Detail is the nemesis's own description of the fault, for people:
	// checkers read Hit.
	Detail string
	// Hit is what the start op recorded it struck, nil in a history
	// recorded before faults carried one.
	Hit *Hit
	// Ops are the indices of the start and end completions.
	Ops []int
}

// Faults pairs each nemesis fault with the op that ended it. A start op that
// failed (its completion carries an error) is not a fault.
func (h History) Faults() []Fault {
	var faults []Fault
	open := make(map[string][]int) // end op name -> indices into faults
	invoked := make(map[string]time.Duration)
	var last time.Duration
	for _, op := range h {
		last = max(last, op.Time)
		if !op.IsNemesis() {
			continue
		}
		if op.Type == Invoke {
			invoked[op.F] = op.Time
			continue
		}
		if end, ok := EndOf(op.F); ok {
			if op.Error != "" {
				continue
			}
			f := Fault{F: op.F, Start: op.Time, Done: op.Time, Invoked: op.Time, End: -1, Ops: []int{op.Index}}
			if t, ok := invoked[op.F]; ok {
				f.Invoked = t
			}
			if t, ok := invoked[op.F]; ok && fromInvoke(op.F) {
				// A failover cuts the master off (or kills it) when it is
				// invoked and completes once a replica is promoted: the
				// split brain is in force from the invoke. A session-kill
				// completes after the server let the session's locks go.
				f.Start = t
			}
			if v := op.Value; v != nil {
				x := v.Ext()
				f.Targets, f.Nodes, f.Detail, f.Hit = x.Targets, x.Nodes, x.Detail, x.Hit
			}
			open[end] = append(open[end], len(faults))
			faults = append(faults, f)
			continue
		}
		for _, i := range open[op.F] {
			faults[i].End = op.Time
			faults[i].Ops = append(faults[i].Ops, op.Index)
		}
		delete(open, op.F)
	}
	for i := range faults {
		if faults[i].End < 0 {
			faults[i].End = last
		}
	}
	return faults
}
