package checker

import (
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// sessionKillSentence tells, for a double holder whose earlier holder
// (process stale) had its database session ended by the server while it
// held the lock, what happened (mechanism M8): when the session was
// terminated, that the server released the lock with it, and that the
// client, which noticed nothing, went on and finished its critical
// section at heldUntil. It returns "" when no session-kill fault in faults
// ended one of stale's sessions.
func sessionKillSentence(faults []history.Fault, stale int, heldUntil time.Duration) string {
	for _, f := range faults {
		if f.F != history.FSessionKill || !targets(f, stale) || f.Start > heldUntil {
			continue
		}
		// The kill came between the op's invocation and its completion.
		when := "at " + secs(f.Start)
		if secs(f.Done) != secs(f.Start) && f.Done > f.Start { // apart in the words, not only in time
			when = fmt.Sprintf("between %s and %s", secs(f.Start), secs(f.Done))
		}
		return fmt.Sprintf("Process %d's database session was terminated %s; the server released its lock with the session; "+
			"the client noticed nothing, went on and wrote by %s, after another process had been granted the lock.",
			stale, when, secs(heldUntil))
	}
	return ""
}
