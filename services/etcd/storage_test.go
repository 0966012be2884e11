package etcd

// The topologies under test start the storage node beside their lock
// nodes; its service registers it.
import _ "github.com/lockcheck/lockcheck/services/redis"
