package history

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// CombinedLock is a lock granted on the servers of two services at once (a
// design that takes one lock on each and holds the lock only while it
// holds both): its grants name its halves in value.nodes, and the double
// holders' stories say what became of each half. The service that builds
// it registers it, beside its code.
type CombinedLock struct {
	// Halves are the names its grants give the halves in value.nodes; a
	// grant is of this lock when its nodes name every one.
	Halves []string
	// Tell says, for the earlier hold of a double holder, what became of
	// each half (one sentence or more) and, for the sentence of a pause or
	// a partition of its process, what ran out ("its Redis key and its
	// ZooKeeper session 0x1a expired").
	Tell func(h CombinedHold) (story, lost string)
}

// CombinedHold is the earlier hold of a double holder on a combined lock,
// with what the history tells of it.
type CombinedHold struct {
	// Process held the lock from Granted; Later was granted it at Taken,
	// while Process still held it.
	Process, Later int
	Granted, Taken time.Duration
	// Lease is the run's lease (a key's TTL, a session's timeout), zero
	// when unknown.
	Lease time.Duration
	// Faults are the faults in force while the two held the lock at once.
	Faults []Fault
	// Events are the process's own events (its client's session news).
	Events []*Op
	// Grace is how long before the grant a fault of the process may have
	// begun and still have struck this hold.
	Grace time.Duration
	// Release is the detail of the hold's release completion ("znode
	// already gone, redis key already gone"), "" without one.
	Release string
	// Session is the session its client last named before the grant
	// ("session 0x1a"), "" when it named none.
	Session string
}

var (
	combinedMu sync.RWMutex
	combined   []CombinedLock
)

// RegisterCombinedLock adds a combined lock. One without halves or a teller
// is a programming error and panics.
func RegisterCombinedLock(c CombinedLock) {
	if len(c.Halves) < 2 || c.Tell == nil {
		panic(fmt.Sprintf("history: combined lock %v needs two halves or more and a teller", c.Halves))
	}
	combinedMu.Lock()
	defer combinedMu.Unlock()
	combined = append(combined, c)
}

// CombinedLockOf returns the combined lock whose halves the grant's nodes
// all name, if any.
func CombinedLockOf(nodes []string) (CombinedLock, bool) {
	combinedMu.RLock()
	defer combinedMu.RUnlock()
	for _, c := range combined {
		all := true
		for _, h := range c.Halves {
			all = all && slices.Contains(nodes, h)
		}
		if all {
			return c, true
		}
	}
	return CombinedLock{}, false
}
