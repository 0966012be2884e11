// Package workloads holds what runs inside a worker process: the lock clients
// (one file per lock design), the protected resource they guard, the worker
// side of the worker protocol (Serve), and the protocol's message types,
// which the controller in runner shares.
//
// workloads may import history, the internal helpers (lookups, suggest)
// and the lock services' client libraries; it must not import checker,
// nemesis, clusters or runner.
package workloads
