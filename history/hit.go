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
}

// HitOf returns op's Hit, or nil.
func HitOf(op *Op) *Hit {
	if op == nil || op.Value == nil {
		return nil
	}
	return op.Value.Hit
}
