// Package services links in the lock services whose code lives in a folder
// of its own under services/ (one package per service: its server
// processes, topology, versions and registration). Importing it registers
// them with clusters.RegisterService; the runner does, so every command
// and test that runs a service has them.
package services

import (
	// etcd members (the etcd-mutex designs).
	_ "github.com/lockcheck/lockcheck/services/etcd"
	// NATS JetStream servers (the nats-kv designs).
	_ "github.com/lockcheck/lockcheck/services/nats"
	// PostgreSQL, MariaDB and PgBouncer in front of PostgreSQL (the pg-*
	// and mysql-* designs).
	_ "github.com/lockcheck/lockcheck/services/sqldb"
	// Redis: single nodes, RedLock's five, Sentinel and Redis Cluster;
	// and the storage node of the protected resource every topology
	// starts.
	_ "github.com/lockcheck/lockcheck/services/redis"
	// The redis-zk combined lock: one Redis node beside a ZooKeeper
	// ensemble.
	_ "github.com/lockcheck/lockcheck/services/rediszk"
	// ZooKeeper ensembles (the zk-* designs, Curator, kazoo).
	_ "github.com/lockcheck/lockcheck/services/zookeeper"
)
