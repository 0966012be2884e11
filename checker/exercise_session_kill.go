package checker

import "github.com/lockcheck/lockcheck/history"

// The session-kill rule: the database ended the session of a worker that
// held a lock (mechanism M8), so the server released the lock while its
// client went on. A kill of a session that held nothing cannot produce a
// double holder.
func init() {
	registerExercise(exerciseRule{Nemesis: "session-kill", F: history.FSessionKill, Judge: judgeSessionKill,
		Missed: func(*exerciseRun) string {
			return "no session-kill ended the database session of a worker that held a lock"
		}})
}

// judgeSessionKill: the struck process held a lock when its session ended.
func judgeSessionKill(x *exerciseRun, f *fault) string {
	if f.Hit != nil {
		if f.Hit.Holder {
			return ""
		}
		return "ended the session of a worker that held no lock"
	}
	p, ok := target(f)
	if !ok {
		return "ended no worker's session"
	}
	if x.holdOf(p, f.Start) != nil || x.holdOf(p, f.Invoked) != nil {
		return ""
	}
	return "ended the session of a worker that held no lock"
}
