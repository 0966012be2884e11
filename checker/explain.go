package checker

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// secs renders a time since the test started as seconds with two decimals.
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
}

// span renders an interval of time, e.g. "2.31 s–5.41 s", or "from 2.31 s
// on" when it never ended.
func span(from, to time.Duration) string {
	if to == forever {
		return "from " + secs(from) + " on"
	}
	return strconv.FormatFloat(from.Seconds(), 'f', 2, 64) + " s–" + secs(to)
}

// forever is the end of an op that may take effect at any later time.
const forever = time.Duration(1<<63 - 1)

// joinAnd joins words as English: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// procs renders process numbers: "process 3", "processes 3 and 1".
func procs(ps []int) string {
	words := make([]string, len(ps))
	for i, p := range ps {
		words[i] = strconv.Itoa(p)
	}
	if len(ps) == 1 {
		return "process " + words[0]
	}
	return "processes " + joinAnd(words)
}

// plural renders a count with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// capitalize upper-cases the first letter of an ASCII sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// withToken renders " (token 41)", or nothing when the lock has no tokens.
func withToken(token int64) string { return NumberTokens.with(token) }

// Token renders a fencing token of kind k as a story names it: "token 41",
// or for a ZooKeeper zxid "zxid 1:797" (epoch:counter, both in decimal).
func (k TokenKind) Token(token int64) string {
	if k == ZxidTokens {
		return fmt.Sprintf("zxid %d:%d", token>>32, token&0xffffffff)
	}
	return fmt.Sprintf("token %d", token)
}

// with renders " (token 41)" or " (zxid 1:797)", or nothing when the lock
// has no tokens.
func (k TokenKind) with(token int64) string {
	if token == 0 {
		return ""
	}
	return " (" + k.Token(token) + ")"
}

// describeFault renders a fault for Anomaly.Nemesis, e.g. "pause of process
// 3 from 2.40 s to 5.40 s".
func describeFault(f history.Fault) string {
	if f.F == history.FFailover && len(f.Nodes) == 1 {
		// The nemesis's detail tells the failover: how the master was
		// lost, who was promoted, who stayed with the old master.
		s := "failover of master " + f.Nodes[0]
		if f.Detail != "" {
			s += " (" + f.Detail + ")"
		}
		return s + " from " + secs(f.Start) + " to " + secs(f.End)
	}
	var what []string
	if len(f.Targets) > 0 {
		what = append(what, procs(f.Targets))
	}
	switch len(f.Nodes) {
	case 0:
	case 1:
		what = append(what, "node "+f.Nodes[0])
	default:
		what = append(what, "nodes "+joinAnd(f.Nodes))
	}
	s := f.F
	switch f.F {
	case history.FClock:
		s = "clock jump"
	case history.FSkew:
		s = "client clock skew"
	}
	if len(what) > 0 {
		s += " of " + joinAnd(what)
	} else if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	return s + " from " + secs(f.Start) + " to " + secs(f.End)
}

// faultsDuring returns the faults whose window intersects [from, to].
func faultsDuring(faults []history.Fault, from, to time.Duration) []history.Fault {
	var in []history.Fault
	for _, f := range faults {
		if f.Start <= to && f.End >= from {
			in = append(in, f)
		}
	}
	return in
}

// describeFaults renders faults for Anomaly.Nemesis.
func describeFaults(faults []history.Fault) []string {
	if len(faults) == 0 {
		return nil
	}
	out := make([]string, len(faults))
	for i, f := range faults {
		out[i] = describeFault(f)
	}
	return out
}

// targets reports whether fault f acted on process p.
func targets(f history.Fault, p int) bool {
	for _, t := range f.Targets {
		if t == p {
			return true
		}
	}
	return false
}

// faultSentence tells which faults were in force, and why the first pause of
// the stale holder matters. It returns "" when there were none.
// lost, when not empty, replaces "its lease ran out" as what happened during
// the stale holder's pause (e.g. "its ZooKeeper session 0x1f expired", or
// a database server's ending of its silent session).
func faultSentence(faults []history.Fault, stale int, lost string) string {
	if len(faults) == 0 {
		return ""
	}
	why := ""
	for _, f := range faults {
		if f.F == history.FFailover {
			why = failoverWhy(f)
			break
		}
		if f.F == history.FPause && targets(f, stale) {
			why = ": its lease ran out while it was stopped"
			if lost != "" {
				why = ": " + lost + " while it was stopped"
			}
			break
		}
		if f.F == history.FPartition && targets(f, stale) && lost != "" {
			why = ": " + lost + " while it was cut off"
			break
		}
	}
	if why == "" {
		for _, f := range faults {
			if w := cmp.Or(clockWhy(f), lostDataWhy(f)); w != "" {
				why = ": " + w
				break
			}
		}
	}
	if len(faults) == 1 {
		return "A " + describeFault(faults[0]) + " was in force" + why + "."
	}
	return fmt.Sprintf("%d faults were in force: %s", len(faults), strings.Join(describeFaults(faults), "; ")) + why + "."
}

// sessionEnded says how a database server ended process p's silent
// session, for faultSentence's lost: "the PostgreSQL server ended its
// silent database session after 2.00 s (its session timeout:
// idle_session_timeout) and released its lock". It returns "" when s is
// nil or no pause or partition of p among faults lasted longer than the
// timeout.
func sessionEnded(s *SessionTimeout, faults []history.Fault, p int) string {
	if s == nil {
		return ""
	}
	silent := false
	for _, f := range faults {
		if (f.F == history.FPause || f.F == history.FPartition) && targets(f, p) && f.End-f.Start > s.Timeout {
			silent = true
		}
	}
	if !silent {
		return ""
	}
	server := "the database server"
	if s.Server != "" {
		server = "the " + s.Server + " server"
	}
	timeout := "its session timeout"
	if s.Settings != "" {
		timeout += ": " + s.Settings
	}
	return fmt.Sprintf("%s ended its silent database session after %s (%s) and released its lock", server, secs(s.Timeout), timeout)
}

// clockWhy says how a clock fault lets a second client in, or "" for
// another fault. A server clock jump (clock) expires the lock key early,
// since Redis judges PX expiry by its wall clock; a skewed client clock
// (skew) makes a client judge a live lock expired.
func clockWhy(f history.Fault) string {
	switch f.F {
	case history.FClock:
		node := "the lock server"
		if len(f.Nodes) > 0 {
			node = f.Nodes[0]
		}
		if strobes(f) {
			return node + "'s wall clock was jumping back and forth, and each return to real time passed the PX expiry of keys set meanwhile early (Redis judges expiry by its wall clock)"
		}
		amount := jumpAmount(f)
		return node + "'s wall clock jumped " + amount + "forward, so the lock key's PX expiry passed early (Redis judges expiry by its wall clock)"
	case history.FClockJump:
		node := "the shared node"
		if len(f.Nodes) > 0 {
			node = f.Nodes[0]
		}
		why := node + "'s wall clock jumped forward, so the first holder's key on " + node +
			" expired early and " + node + " counted towards a second majority"
		if f.Detail != "" {
			why += " (" + f.Detail + ")"
		}
		return why
	case history.FSkew:
		what := "clocks of " + procs(f.Targets)
		if len(f.Targets) == 0 {
			what = "client clocks"
		}
		return "the " + what + " were skewed, so a client judged a live lock expired by its own clock and took it over"
	}
	return ""
}

// failoverWhy says how a failover breaks a single-master lock: with
// processes left on the old master's side (Targets), a split brain; with
// none (the master was killed), the grants it had not yet replicated.
func failoverWhy(f history.Fault) string {
	promoted := "the sentinels promoted a replica"
	if takeover(f) {
		// Redis Cluster: the master's replica took its slots over.
		promoted = "the master's replica was promoted and took over its slots"
	}
	if len(f.Targets) > 0 {
		return ": " + promoted + " while the old master still granted locks to " + procs(f.Targets) +
			" (split brain); grants acknowledged by the old master after the cut were never replicated, " +
			"so the new master granted the same locks again"
	}
	return ": " + promoted + " after the master was lost; grants the master had acknowledged " +
		"but not yet replicated were lost, so the new master granted the same locks again"
}

// maxEvents bounds the client events one story quotes.
const maxEvents = 3

// eventsByProcess indexes the events (history.FEvent) each process's lock
// client reported, marks (history.Op.IsMark) left out.
func eventsByProcess(h history.History) map[int][]*history.Op {
	out := make(map[int][]*history.Op)
	for i := range h {
		if h[i].F == history.FEvent && !h[i].IsMark() {
			out[h[i].Process] = append(out[h[i].Process], &h[i])
		}
	}
	return out
}

// eventSentence quotes what process p's lock client reported in [from, to],
// and reports whether it said its session expired.
func eventSentence(events []*history.Op, p int, from, to time.Duration) (string, bool) {
	var quotes []string
	expired := false
	for _, ev := range events {
		if ev.Time < from || ev.Time > to || ev.Value == nil {
			continue
		}
		if strings.Contains(ev.Value.Ext().Detail, "expired") {
			expired = true
		}
		if len(quotes) < maxEvents {
			quotes = append(quotes, fmt.Sprintf("%q at %s", ev.Value.Ext().Detail, secs(ev.Time)))
		}
	}
	if len(quotes) == 0 {
		return "", false
	}
	return fmt.Sprintf("Process %d's lock client reported %s.", p, joinAnd(quotes)), expired
}

// sessionBefore returns the "session 0x…" (a ZooKeeper client's) or "lease
// 0x…" (an etcd client's) a process's client last reported before t, or "".
func sessionBefore(events []*history.Op, t time.Duration) string {
	s := ""
	for _, ev := range events {
		if ev.Time > t {
			break
		}
		if ev.Value == nil {
			continue
		}
		detail := ev.Value.Ext().Detail
		for _, what := range []string{"session", "lease"} {
			if strings.HasPrefix(detail, what+" 0x") {
				// The prefix makes the id the second field.
				s = what + " " + strings.Fields(detail)[1]
			}
		}
	}
	return s
}

// sessionService names the lock service whose client reported sess (see
// sessionBefore): an etcd lease or a ZooKeeper session.
func sessionService(sess string) string {
	if strings.HasPrefix(sess, "lease ") {
		return "etcd"
	}
	return "ZooKeeper"
}

// pausedLonger reports whether a pause of process p in faults lasted longer
// than d.
func pausedLonger(faults []history.Fault, p int, d time.Duration) (time.Duration, bool) {
	for _, f := range faults {
		if f.F == history.FPause && targets(f, p) && d > 0 && f.End-f.Start > d {
			return f.End - f.Start, true
		}
	}
	return 0, false
}

// sentences joins non-empty sentences with spaces.
func sentences(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// heldBoth tells the story of two holds of lock key that no order of the
// lock's operations can separate (the direct decision's conflict, see
// lockorder.go): whenever each operation took effect within the time it
// was in flight, the holder e still held the lock when later's acquire was
// answered. more is how many further grants e's hold overlapped; tokens
// says how to print the grants' tokens.
func heldBoth(key string, e, later *lockHold, more int, tokens TokenKind) string {
	s := fmt.Sprintf("No order of these operations fits a lock: whenever each one took effect, between when it was sent and when its answer came, "+
		"processes %d and %d both held lock %s at %s. Process %d asked for it at %s, was granted it at %s%s and %s; "+
		"process %d asked for it at %s and was granted it at %s%s.",
		e.proc, later.proc, key, secs(later.ar),
		e.proc, secs(e.ac), secs(e.ar), tokens.with(e.acq.token), holdEnd(e),
		later.proc, secs(later.ac), secs(later.ar), tokens.with(later.acq.token))
	if more > 0 {
		s += fmt.Sprintf(" Before process %d gave it up, the lock was granted %s more.", e.proc, plural(more, "time", "times"))
	}
	return s + " The overlap checker tells who held the lock when."
}

// holdEnd says what is certain about the end of a hold, as the overlap
// checker's stories say it: "did not start its release until 5.60 s".
func holdEnd(h *lockHold) string {
	switch {
	case h.end == nil:
		return "never released it"
	case h.end.kind == mCrash:
		return "was not retired until " + secs(h.ec)
	case h.end.abandon:
		return "started its release at " + secs(h.ec) + ", which failed"
	}
	return "did not start its release until " + secs(h.ec)
}

// registerNoOrder ends the story of a key of the protected register that
// the direct decision found no order for (regorder.go).
const registerNoOrder = "no order of the critical sections fits a register that each one read and then wrote, whenever each one took effect between when it began and when its answer came"
