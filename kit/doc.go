// Package kit is the worker kit for Go: it speaks lockcheck's worker
// protocol (docs/worker-protocol.md) on stdin and stdout, so that a worker
// for your own lock client is the client's acquire and release and nothing
// else. The kit reads the requests, calls your Lock with the bounds the
// controller gave (acquire_timeout_ms, op_timeout_ms), runs the critical
// section on the protected resource itself (the register on the storage
// node, fenced exactly as docs/worker-protocol.md states when the run asks
// for fencing), and writes one reply per request with the completion the
// checkers trust: ok, fail only for an error you marked Definite (or
// ErrNotAcquired), and info for anything else, a timeout above all.
//
//	func main() {
//		kit.Main(func(ctx context.Context, cfg kit.Config) (kit.Lock, error) {
//			return newMyLock(cfg.LockAddrs[0], cfg.Lease())
//		})
//	}
//
// Worked examples for Redis, PostgreSQL, etcd and NATS are under
// kit/examples; `check conformance --worker-cmd` passes each. The kit
// imports the standard library only.
package kit
