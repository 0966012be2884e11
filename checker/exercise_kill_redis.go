package checker

import (
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// The kill-redis rule: the Redis node of a combined topology (redis-zk) was
// killed while a lock was held, as for kill. Its kill ops say "SIGKILL
// redis node lock0", which tells them from kill's in a history without
// Hit.
func init() {
	registerExercise(exerciseRule{Nemesis: "kill-redis", F: history.FKill, Judge: judgeNode,
		Matches: isRedisKill,
		Missed: func(*exerciseRun) string {
			return "no kill-redis struck the Redis node while a lock was held and grants flowed"
		}})
}

// isRedisKill tells kill-redis's faults in a history without Hit.
func isRedisKill(f history.Fault) bool { return strings.Contains(f.Detail, "redis node") }
