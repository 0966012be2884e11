package nemesis

import (
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/clusters"
)

func init() {
	register(Kind{Name: "kill-redis", New: newKillRedis,
		Summary: "SIGKILL the Redis lock node of the combined redis-zk topology (where `kill` strikes the ZooKeeper leader) and restart it after the fault duration"})
}

// newKillRedis returns a Kill that strikes the Redis part of a
// clusters.Parted topology.
func newKillRedis(env Env, rng *rand.Rand) (Nemesis, error) {
	parts, ok := env.Cluster().(clusters.Parted)
	if !ok || len(parts.PartNodes(clusters.PartRedis)) == 0 {
		return nil, fmt.Errorf("kill-redis nemesis: no Redis part: %w", clusters.ErrUnsupported)
	}
	n, err := newKill(env, rng)
	if err != nil {
		return nil, err
	}
	k := n.(*Kill)
	k.part, k.parts = clusters.PartRedis, parts
	return k, nil
}
