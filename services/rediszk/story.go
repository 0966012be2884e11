package rediszk

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

func init() {
	history.RegisterCombinedLock(history.CombinedLock{
		Halves: []string{workloads.HalfRedis, workloads.HalfZooKeeper},
		Tell: func(h history.CombinedHold) (string, string) {
			hv := tellHalves(h)
			return hv.sentence(h), hv.lostWords(h.Session)
		},
	})
}

// halves is what the history tells of the two halves of a combined lock
// held by a process when another was granted it.
type halves struct {
	// redis says what became of the hold's Redis key.
	redis string
	// zk says what became of its ZooKeeper session, "" when the history
	// shows nothing of it.
	zk string
	// release is what the hold's own release found of each half, ""
	// without one.
	release string
}

// tellHalves derives, for the earlier hold h of a double holder, when each
// half was lost:
//   - the Redis key was set before the grant with a PX of the lease, so it
//     expired by the grant + lease; when that is after the later grant, the
//     key was lost another way (a node fault or a clock jump in the
//     faults);
//   - the ZooKeeper session expired on the servers about one session
//     timeout (the lease) into a pause or partition of the process that
//     outlasted it (and by the later grant at the latest), and the client
//     reports "session 0x… expired" once it hears of it (its events).
func tellHalves(h history.CombinedHold) halves {
	var out halves
	switch {
	case h.Lease <= 0:
		out.redis = fmt.Sprintf("its Redis key was gone by %s", history.Secs(h.Taken))
	case h.Granted+h.Lease <= h.Taken:
		out.redis = fmt.Sprintf("its Redis key expired by %s, its PX lease of %s after the grant", history.Secs(h.Granted+h.Lease), history.Secs(h.Lease))
	default:
		out.redis = fmt.Sprintf("its Redis key was gone by %s, before its PX lease of %s ran out at %s: lost, not expired",
			history.Secs(h.Taken), history.Secs(h.Lease), history.Secs(h.Granted+h.Lease))
		for _, f := range h.Faults {
			if f.Start <= h.Taken && f.End >= h.Granted && (f.F == history.FKill || f.F == history.FClock) && len(f.Targets) == 0 {
				out.redis += " (" + history.DescribeFault(f) + ")"
				break
			}
		}
	}
	sess := h.Session
	if sess == "" {
		sess = "session"
	}
	told := time.Duration(-1)
	for _, ev := range h.Events {
		if ev.Time >= h.Granted && ev.Value != nil && strings.Contains(ev.Value.Ext().Detail, "expired") {
			told = ev.Time
			break
		}
	}
	for _, f := range h.Faults {
		if (f.F != history.FPause && f.F != history.FPartition) || !slices.Contains(f.Targets, h.Process) ||
			f.Start < h.Granted-h.Grace || f.Start > h.Taken || h.Lease <= 0 || f.End-f.Start <= h.Lease {
			continue
		}
		what := "pause"
		if f.F == history.FPartition {
			what = "partition"
		}
		// The servers expire a session about one timeout after they last
		// heard from it, which may be a ping interval before the fault
		// began: never later than the successor's grant.
		out.zk = fmt.Sprintf("its ZooKeeper %s expired on the servers within about one session timeout (%s) of the %s's start, by %s",
			sess, history.Secs(h.Lease), what, history.Secs(min(f.Start+h.Lease, h.Taken)))
		break
	}
	switch {
	case out.zk != "" && told >= 0:
		out.zk += fmt.Sprintf(" (its client was told at %s)", history.Secs(told))
	case told >= 0:
		out.zk = fmt.Sprintf("its ZooKeeper %s expired (its client was told at %s)", sess, history.Secs(told))
	}
	out.release = h.Release
	return out
}

// sentence renders the halves of the hold's lock for its double-holder
// story.
func (hv halves) sentence(h history.CombinedHold) string {
	zk := hv.zk
	if zk == "" {
		zk = fmt.Sprintf("its ZooKeeper node was gone by %s", history.Secs(h.Taken))
	}
	s := fmt.Sprintf("Process %d held both halves of the combined lock, and lost both before process %d took them at %s: %s, and %s.",
		h.Process, h.Later, history.Secs(h.Taken), hv.redis, zk)
	if hv.release != "" {
		s += fmt.Sprintf(" Its release found: %s.", hv.release)
	}
	return s
}

// lostWords names what ran out during a pause of the process: its Redis
// key and its ZooKeeper session expired.
func (hv halves) lostWords(sess string) string {
	if sess == "" {
		return "its Redis key and its ZooKeeper session expired"
	}
	return "its Redis key and its ZooKeeper " + sess + " expired"
}
