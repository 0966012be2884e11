package workloads

func init() {
	register(Design{
		Name: "pg-advisory", Service: "postgres", LockNodes: 1, Tokens: true, SessionHeld: true,
		New: newSQLSessionLock(pgDialect, sessionLockSQL{
			try:     "SELECT pg_try_advisory_lock(?), pg_backend_pid()",
			release: "SELECT pg_advisory_unlock(?), pg_backend_pid()",
			arg:     func(key string) any { return lockID(key) },
		}),
		Summary: "PostgreSQL session advisory lock: pg_try_advisory_lock(hash(key)) retried until the acquire timeout, pg_advisory_unlock; token = nextval of a sequence at grant; the server releases it when it ends the session",
	})
}
