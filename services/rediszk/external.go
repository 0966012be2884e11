package rediszk

import (
	"errors"

	"github.com/lockcheck/lockcheck/clusters"
)

// externalForm is the external form of the combined lock: the topology
// file lists the Redis server first, then the ZooKeeper ensemble's
// servers, all lock servers, in the order the workers get them.
var externalForm = &clusters.ExternalForm{
	Ensemble: true,
	Check: func(cfg clusters.ExternalConfig) error {
		if cfg.LockServers() < 2 {
			return errors.New("the combined lock needs the Redis server first, then the ZooKeeper servers: give at least two lock servers")
		}
		return nil
	},
	Extend: func(e *clusters.External) clusters.Topology { return &external{External: e} },
}

// external is the combined lock on servers someone else runs: its parts
// are the first lock server (Redis) and the others (ZooKeeper), so that a
// part's own fault (kill-redis) strikes the right one through the user's
// commands.
type external struct {
	*clusters.External
}

var _ clusters.Parted = (*external)(nil)

// PartNodes returns the Redis server's name for PartRedis, the ZooKeeper
// servers' for PartZooKeeper.
func (e *external) PartNodes(part string) []string {
	var lock []string
	for _, s := range e.Config().Servers {
		if s.Role == clusters.RoleLock {
			lock = append(lock, s.Name)
		}
	}
	switch {
	case len(lock) == 0:
		return nil
	case part == PartRedis:
		return lock[:1]
	case part == PartZooKeeper:
		return lock[1:]
	}
	return nil
}
