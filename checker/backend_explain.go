package checker

import (
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// backendSentence tells, for a double holder (earlier hold e, later hold
// l), which server sessions ran their lock statements, when the history
// shows a pooler moved them (history.Value.Backend): e's lock and its
// release ran on different server sessions although its client reported
// no new session of its own (a connection pooler in transaction mode, such
// as PgBouncer's, lends each transaction whichever server session is
// free), and l was granted the lock on the very server session that held
// it for e (a session lock is re-entrant within its session). It returns
// "" when the history records no backends, or they say neither.
func backendSentence(a *analysis, e, l hold) string {
	eb := acquireBackend(a, e)
	if eb == 0 {
		return ""
	}
	var out []string
	if rel := releaseOK(a, e); rel != nil && rel.Value.Backend != 0 && rel.Value.Backend != eb && !reconnected(a.h, e.proc, e.start, rel.Time) {
		rb, released := rel.Value.Backend, rel.Value.Released
		s := fmt.Sprintf("Process %d's lock and its release ran on different server connections: it was granted on server session %d "+
			"and released on server session %d", e.proc, eb, rb)
		switch {
		case released == nil:
		case *released:
			s += ", which held the lock for another client and let go of that"
		default:
			s += ", which did not hold it"
		}
		s += "; its client reported no new session, so a connection pooler ran the two statements on different server sessions " +
			"(transaction pooling)"
		if released != nil && !*released {
			s += fmt.Sprintf(", and the lock stayed behind on server session %d", eb)
		}
		out = append(out, s+".")
	}
	if lb := acquireBackend(a, l); lb == eb {
		out = append(out, fmt.Sprintf("Process %d was granted the lock on server session %d too, which already held it for process %d: "+
			"a session lock is re-entrant within its server session, so the server granted it again.", l.proc, lb, e.proc))
	}
	return sentences(out...)
}

// acquireBackend returns the server session that granted hold h, 0 when
// its acquire ok names none.
func acquireBackend(a *analysis, h hold) int64 {
	if op := opAt(a.h, h.acquire); op != nil {
		// The history's own numbering, as the recorder writes it: no scan
		// (a long run's story asks this of every double holder).
		if op.Value == nil {
			return 0
		}
		return op.Value.Backend
	}
	for _, pr := range a.pairs {
		if pr.Complete != nil && pr.Complete.Index == h.acquire && pr.Complete.Value != nil {
			return pr.Complete.Value.Backend
		}
	}
	return 0
}

// releaseOK returns the ok completion of the release that ended hold h,
// nil when the hold ended otherwise (a crash's completion is info; a hold
// the history ended has no end op) or its release did not complete ok
// with a value.
func releaseOK(a *analysis, h hold) *history.Op {
	for _, pr := range a.pairs {
		if pr.Invoke.Index == h.endOp {
			if pr.Type() != history.OK || pr.Complete.Value == nil {
				return nil
			}
			return pr.Complete
		}
	}
	return nil
}

// reconnected reports whether process p reported an event other than a
// mark (such as a new database session) from from to to.
func reconnected(h history.History, p int, from, to time.Duration) bool {
	for i := range h {
		op := &h[i]
		if op.F == history.FEvent && !op.IsMark() && op.Process == p && op.Time >= from && op.Time <= to {
			return true
		}
	}
	return false
}

// opAt returns the op of h whose Index is i when it stands at position i,
// as in every history the recorder writes; nil otherwise (a history from
// elsewhere may number its ops otherwise, and is searched).
func opAt(h history.History, i int) *history.Op {
	if i >= 0 && i < len(h) && h[i].Index == i {
		return &h[i]
	}
	return nil
}
