package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The halves of a combined Redis + ZooKeeper lock (redis-zk), as its
// grants name them in value.nodes.
const (
	halfRedis     = "redis"
	halfZooKeeper = "zookeeper"
)

// combined reports whether hold e was granted on both halves of a combined
// Redis + ZooKeeper lock: its acquire's value.nodes name "redis" and
// "zookeeper".
func (e hold) combined() bool {
	return slices.Contains(e.nodes, halfRedis) && slices.Contains(e.nodes, halfZooKeeper)
}

// halves is what the history tells of the two halves of a combined lock
// held by e when another process was granted it at taken.
type halves struct {
	// redis says what became of e's Redis key.
	redis string
	// zk says what became of e's ZooKeeper session, "" when the history
	// shows nothing of it.
	zk string
	// release is what e's own release found of each half, "" without one.
	release string
}

// combinedHalves derives, for the earlier hold e of a double holder on a
// combined lock and the later grant at taken, when each half was lost:
//   - the Redis key was set before e's grant with a PX of lease, so it
//     expired by e.start + lease; when that is after taken, the key was lost
//     another way (a node fault or a clock jump in faults);
//   - the ZooKeeper session expired on the servers about one session
//     timeout (lease) into a pause or partition of e's process that outlasted
//     it (and by taken at the latest), and the client reports "session 0x… expired" once it hears of it
//     (events: e's process's events).
//
// release is the detail of e's release completion ("znode already gone,
// redis key already gone"), "" when e did not complete one.
func combinedHalves(e hold, taken, lease time.Duration, faults []history.Fault, events []*history.Op, release string) halves {
	var out halves
	switch {
	case lease <= 0:
		out.redis = fmt.Sprintf("its Redis key was gone by %s", secs(taken))
	case e.start+lease <= taken:
		out.redis = fmt.Sprintf("its Redis key expired by %s, its PX lease of %s after the grant", secs(e.start+lease), secs(lease))
	default:
		out.redis = fmt.Sprintf("its Redis key was gone by %s, before its PX lease of %s ran out at %s: lost, not expired", secs(taken), secs(lease), secs(e.start+lease))
		for _, f := range faultsDuring(faults, e.start, taken) {
			if (f.F == history.FKill || f.F == history.FClock) && len(f.Targets) == 0 {
				out.redis += " (" + describeFault(f) + ")"
				break
			}
		}
	}
	sess := sessionBefore(events, e.start)
	if sess == "" {
		sess = "session"
	}
	told := time.Duration(-1)
	for _, ev := range events {
		if ev.Time >= e.start && ev.Value != nil && strings.Contains(ev.Value.Ext().Detail, "expired") {
			told = ev.Time
			break
		}
	}
	for _, f := range faults {
		if (f.F != history.FPause && f.F != history.FPartition) || !targets(f, e.proc) ||
			f.Start < e.start-eventGrace || f.Start > taken || lease <= 0 || f.End-f.Start <= lease {
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
			sess, secs(lease), what, secs(min(f.Start+lease, taken)))
		break
	}
	switch {
	case out.zk != "" && told >= 0:
		out.zk += fmt.Sprintf(" (its client was told at %s)", secs(told))
	case told >= 0:
		out.zk = fmt.Sprintf("its ZooKeeper %s expired (its client was told at %s)", sess, secs(told))
	}
	out.release = release
	return out
}

// sentence renders the halves of e's lock for its double-holder story.
func (hv halves) sentence(e hold, later int, taken time.Duration) string {
	zk := hv.zk
	if zk == "" {
		zk = fmt.Sprintf("its ZooKeeper node was gone by %s", secs(taken))
	}
	s := fmt.Sprintf("Process %d held both halves of the combined lock, and lost both before process %d took them at %s: %s, and %s.",
		e.proc, later, secs(taken), hv.redis, zk)
	if hv.release != "" {
		s += fmt.Sprintf(" Its release found: %s.", hv.release)
	}
	return s
}

// lostWords names what ran out during a pause of e's process for
// faultSentence: its Redis key and its ZooKeeper session expired.
func (hv halves) lostWords(sess string) string {
	if sess == "" {
		return "its Redis key and its ZooKeeper session expired"
	}
	return "its Redis key and its ZooKeeper " + sess + " expired"
}

// releaseDetails returns, by the index of a release invoke, the detail its
// ok completion carried.
func releaseDetails(a *analysis) map[int]string {
	out := make(map[int]string)
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FRelease && pr.Type() == history.OK {
			if v := pr.Value(); v != nil && v.Ext().Detail != "" {
				out[pr.Invoke.Index] = v.Ext().Detail
			}
		}
	}
	return out
}
