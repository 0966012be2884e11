package workloads

func init() {
	register(Design{
		Name: "pg-advisory-xact", Service: "postgres", LockNodes: 1, Tokens: true, SessionHeld: true,
		Workloads: []string{WorkloadRegister, WorkloadRegisterInDB},
		New: newSQLTxLock(pgDialect, txLockSQL{
			lock: "SELECT pg_advisory_xact_lock(?)::text, pg_backend_pid()",
			arg:  func(key string) any { return lockID(key) },
		}),
		Summary: "PostgreSQL transaction advisory lock: BEGIN, pg_advisory_xact_lock(hash(key)) (lock_timeout = acquire timeout), held for the critical section, COMMIT releases; token = nextval at grant",
	})
}
