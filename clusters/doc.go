// Package clusters starts and stops the lock services lockcheck tests: real
// server processes (redis-server, redis-sentinel, ZooKeeper, PostgreSQL,
// MariaDB) on free 127.0.0.1 ports, each in its own process group with its
// own temporary directory and log, and the in-process Toxiproxy proxies
// that every worker-to-node connection goes through. Each lock service
// registers itself (Service: how to look for its binaries and build its
// Topology) from its own file; the runner finds it with FindService.
//
// Lock nodes can run under the clock shim (clockshim/clockshim.c, an
// LD_PRELOAD library found or built by ClockShim), which moves their wall
// clocks for the clock nemesis.
//
// Setup waits until every node answers; Teardown stops exactly the processes
// Setup started, by process group, never by name. Optional capabilities
// (Killer, ...) are small interfaces found by type assertion. A topology
// links its lock nodes into a NodeSet (nodes.go), which kills, restarts,
// pauses and resumes one node by name and cuts and heals one worker
// slot's links for every topology, the container ones too (a NodeServer
// is a local process or a container).
//
// A topology may also observe its lock servers releasing locks
// (ReleaseObserver: observe*.go), on connections of the controller's own
// that no fault touches, so that the history has the server's side of a
// lost lock.
//
// clusters may import history and the internal helpers (cachedir, lookups,
// suggest); it must not import checker, workloads or runner.
package clusters
