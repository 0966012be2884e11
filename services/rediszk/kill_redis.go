package rediszk

import (
	"strings"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
)

// The combined topology's own fault, kill-redis: where `kill` strikes the
// ZooKeeper leader, it kills the Redis lock node. It is judged as kill is
// (a lock was held as it struck, and grants flowed); its kill ops say
// "SIGKILL redis node lock0", which tells them from kill's in a history
// without Hit.
func init() {
	nemesis.Register(nemesis.Kind{Name: "kill-redis", New: nemesis.NewKillPart(PartRedis),
		Summary: "SIGKILL the Redis lock node of the combined redis-zk topology (where `kill` strikes the ZooKeeper leader) and restart it after the fault duration",
		Exercise: &history.ExerciseRule{F: history.FKill, Shape: history.ExerciseNode, Matches: isRedisKill,
			Missed: "no kill-redis struck the Redis node while a lock was held and grants flowed"}})
}

// isRedisKill tells kill-redis's faults in a history without Hit.
func isRedisKill(f history.Fault) bool { return strings.Contains(f.Detail, PartRedis+" node") }
