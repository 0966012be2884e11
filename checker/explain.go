package checker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// secs renders a time since the test started as seconds with two decimals.
func secs(d time.Duration) string { return history.Secs(d) }

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
func joinAnd(words []string) string { return history.JoinAnd(words) }

// procs renders process numbers: "process 3", "processes 3 and 1".
func procs(ps []int) string { return history.Procs(ps) }

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
// 3 from 2.40 s to 5.40 s" (history.DescribeFault).
func describeFault(f history.Fault) string { return history.DescribeFault(f) }

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
		if w := history.FaultWordsOf(f.F); w.First && w.Why != nil {
			if s := w.Why(f); s != "" {
				why = ": " + s
				break
			}
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
			if w := faultWhy(f); w != "" {
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

// faultWhy says how fault f let a second holder in, as its kind's words
// tell it (history.FaultWords.Why), or "" when they do not.
func faultWhy(f history.Fault) string {
	if w := history.FaultWordsOf(f.F); w.Why != nil {
		return w.Why(f)
	}
	return ""
}

// aftermath tells in a sentence of its own what the first of faults whose
// kind has words for it (history.FaultWords.Aftermath) did to process
// stale, which held the lock until heldUntil; "" when none did.
func aftermath(faults []history.Fault, stale int, heldUntil time.Duration) string {
	for _, f := range faults {
		if w := history.FaultWordsOf(f.F); w.Aftermath != nil {
			if s := w.Aftermath(f, stale, heldUntil); s != "" {
				return s
			}
		}
	}
	return ""
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
