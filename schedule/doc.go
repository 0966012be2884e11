// Package schedule makes a fault schedule data: faults bound to lock events
// (a grant, a holder entering its critical section, a release, a rival's
// acquire, the server letting a lock go, the lease running low) or to a
// time, the engine that watches the history as it is recorded and fires
// each fault at its event, and the record of what a run applied
// (schedule.json), which a replay runs again.
//
// The spelling of a triggered fault, as --nemesis and a schedule file take
// it, is KIND@EVENT[/pN][#N][+OFFSET][:DURATION][*REPEAT]; see Parse.
//
// schedule may import history, nemesis and the internal helpers (suggest);
// it must not import checker, workloads or runner. What it needs from the
// controller comes through nemesis.Env and the recorder.
package schedule
