package workloads

func init() {
	register(Design{Name: "redis-py-lock", Service: "redis", LockNodes: 1, Tokens: false,
		Worker: []string{"python3", "python/redis_py_lock.py"},
		Plain:  []string{"python3", "python/plain_redis_py_lock.py"},
		Summary: "the library redis-py (Debian python3-redis), Redis.lock(key, timeout=lease, blocking_timeout=--acquire-timeout), " +
			"in a Python worker (workers/python/redis_py_lock.py); no fencing token, no watchdog"})
}
