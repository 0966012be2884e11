package history

import "time"

// Hit is what a nemesis fault struck, as the nemesis saw it when it acted.
// It rides on the fault's start op (and, for Lasted and Outlasted, on its
// end op), so that a reader and the exercise checker can tell a fault that
// could have broken the lock from one that missed: a pause of a worker that
// held no lock, a clock jump on a node where no lock was held, a failover
// that promoted nothing. The checker judges from the history's own holds
// where it can; Hit adds what only the nemesis knew.
type Hit struct {
	// Nemesis is the nemesis kind that made the fault (pause, pause-leader,
	// kill-follower, clock-back, failover-kill, ...): several kinds share
	// an op name.
	Nemesis string `json:"nemesis,omitempty"`
	// Holder says the struck worker held a lock (Key) when it was struck.
	Holder bool `json:"holder,omitempty"`
	// Key is the lock the struck worker held.
	Key string `json:"key,omitempty"`
	// InCS says the struck worker was inside its critical section, or had
	// been sent it and not answered (entering it).
	InCS bool `json:"in_cs,omitempty"`
	// Failpoint is the failpoint the struck worker was stopped at.
	Failpoint string `json:"failpoint,omitempty"`
	// Holders is how many workers held a lock when a fault on a node struck.
	Holders int `json:"holders,omitempty"`
	// Lease is the lease (or session timeout) the fault is measured against.
	Lease time.Duration `json:"lease,omitempty"`
	// Waited is how long the nemesis waited for a target worth striking (a
	// holder inside its critical section).
	Waited time.Duration `json:"waited,omitempty"`
	// Mechanism is how a starve fault held its target to a CPU quota
	// (cgroup2, cgroup1, duty-cycle: see clusters.ThrottleProcs), and
	// Quota that share of one CPU (0.05: 5 ms of every 100 ms).
	Mechanism string  `json:"mechanism,omitempty"`
	Quota     float64 `json:"quota,omitempty"`
	// Rate is how fast a clock-rate fault made the node's wall clock run
	// against real time (2: twice as fast).
	Rate float64 `json:"rate,omitempty"`
	// Promoted says a failover saw a replica promoted.
	Promoted bool `json:"promoted,omitempty"`
	// Unreplicated says the master was killed right after it acknowledged a
	// grant that its replicas had not seen (failover-kill).
	Unreplicated bool `json:"unreplicated,omitempty"`
	// Lasted is, on an end op, how long the fault was in force by the
	// nemesis's clock; Outlasted how much longer than Lease that was (0
	// when it was shorter).
	Lasted    time.Duration `json:"lasted,omitempty"`
	Outlasted time.Duration `json:"outlasted,omitempty"`
	// Offset is how far a clock fault moved the node's clock at first
	// (negative: back); Strobe says it then kept moving back and forth
	// between the offset and real time.
	Offset time.Duration `json:"offset,omitempty"`
	Strobe bool          `json:"strobe,omitempty"`
	// Takeover says a failover's replica took its master's slots over
	// (Redis Cluster's CLUSTER FAILOVER TAKEOVER) instead of being
	// promoted by Sentinels.
	Takeover bool `json:"takeover,omitempty"`
	// Node is the lock node a restart-lose crashed and started again with
	// its data gone; Lost are the keys it held then and lost (Redis), and
	// HeldOn the lock nodes on which the struck holder's key (Key) was set
	// as it struck, Node among them: when they are just a majority, losing
	// Node's copy leaves a majority of the nodes free for a rival.
	Node   string   `json:"node,omitempty"`
	Lost   []string `json:"lost,omitempty"`
	HeldOn []string `json:"held_on,omitempty"`
	// Toxic is what a link fault put on the struck worker's links to the
	// lock nodes: a Toxiproxy toxic (latency, timeout, reset_peer,
	// limit_data), or "refuse" for links whose listeners it closed; Stream
	// is the direction it acts on: "upstream" (requests), "downstream"
	// (replies) or "both".
	Toxic  string `json:"toxic,omitempty"`
	Stream string `json:"stream,omitempty"`
	// Delay and Jitter are a latency fault's added delay on each direction
	// of a link and its spread: each chunk waits Delay +/- Jitter.
	Delay  time.Duration `json:"delay,omitempty"`
	Jitter time.Duration `json:"jitter,omitempty"`
	// Shape is the shape a partition between servers gave their links
	// (majority, bridge, ring, swizzle). Cuts are the pairs of servers
	// whose links it cut, in the order it cut them; Restores, for a
	// swizzle, the order it restored them in. Reach maps every server it
	// took in to the servers that server still reached with every cut
	// made (a swizzle, whose cuts come one at a time, has none).
	Shape    string              `json:"shape,omitempty"`
	Cuts     [][2]string         `json:"cuts,omitempty"`
	Restores [][2]string         `json:"restores,omitempty"`
	Reach    map[string][]string `json:"reach,omitempty"`
	// Trigger is the spelling of the triggered fault that struck (package
	// schedule: pause@grant+5ms:lease+1s), "" for a fault fired at a
	// seeded random time. Event is the index of the op whose lock event
	// fired it (0 for a time trigger), Due when the trigger said to strike
	// (the event's time plus the offset), and Late how long after Due the
	// fault was in force, less Waited (a wait of the fault's own for its
	// moment is not the trigger's lateness).
	Trigger string        `json:"trigger,omitempty"`
	Event   int           `json:"event,omitempty"`
	Due     time.Duration `json:"due,omitempty"`
	Late    time.Duration `json:"late,omitempty"`
}

// HitOf returns op's Hit, or nil.
func HitOf(op *Op) *Hit {
	if op == nil || op.Value == nil {
		return nil
	}
	return op.Value.Ext().Hit
}
