package checker

import "github.com/lockcheck/lockcheck/history"

// clock-client-rate records its faults with clock-client's ops (skew) and
// is judged as clock-client is: a worker whose clock ran fast tried to take
// a lock while a worker with the real clock held it. Its faults are told
// from clock-client's by their Hit (Hit.Nemesis).
func init() {
	RegisterExercise(ExerciseRule{Nemesis: "clock-client-rate", F: history.FSkew, Judge: judgeClockClient,
		Matches: func(history.Fault) bool { return false },
		Missed: func(*ExerciseRun) string {
			return "no worker whose clock ran fast tried to take a lock while another worker held it"
		}})
}
