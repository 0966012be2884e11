package checker

import "github.com/lockcheck/lockcheck/history"

// clock-client-strobe records its faults with clock-client's ops (skew) and
// is judged as clock-client is: a worker with a strobing clock tried to
// take a lock while a worker with the real clock held it. Its faults are
// told from clock-client's by their Hit (Hit.Nemesis); a history recorded
// before faults carried one has no clock-client-strobe, so no fault
// without it is one.
func init() {
	RegisterExercise(ExerciseRule{Nemesis: "clock-client-strobe", F: history.FSkew, Judge: judgeClockClient,
		Matches: func(history.Fault) bool { return false },
		Missed: func(*ExerciseRun) string {
			return "no worker with a strobing clock tried to take a lock while another worker held it"
		}})
}
