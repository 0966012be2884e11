package checker

import "github.com/lockcheck/lockcheck/history"

// clock-client-strobe records its faults with clock-client's ops (skew) and
// is judged as clock-client is: a worker with a strobing clock tried to
// take a lock while a worker with the real clock held it.
func init() {
	RegisterExercise(ExerciseRule{Nemesis: "clock-client-strobe", F: history.FSkew, Judge: judgeClockClient,
		Matches: func(f history.Fault) bool { return f.Hit != nil && f.Hit.Nemesis == "clock-client-strobe" },
		Missed: func(*ExerciseRun) string {
			return "no worker with a strobing clock tried to take a lock while another worker held it"
		}})
}
