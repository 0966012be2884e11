package workloads

func init() {
	register(Design{
		Name: "pg-for-update", Service: "postgres", LockNodes: 1, Tokens: true, SessionHeld: true,
		Workloads: []string{WorkloadRegister, WorkloadRegisterInDB},
		New: newSQLTxLock(pgDialect, txLockSQL{
			prepare: "INSERT INTO lockcheck_for_update (name) VALUES (?) ON CONFLICT DO NOTHING",
			lock:    "SELECT name, pg_backend_pid() FROM lockcheck_for_update WHERE name = ? FOR UPDATE",
			arg:     func(key string) any { return key },
		}),
		Summary: "PostgreSQL row lock: BEGIN, SELECT ... FOR UPDATE of the key's row (lock_timeout = acquire timeout), held for the critical section, COMMIT releases; token = nextval at grant; --workload register-in-db keeps the register in the same transaction",
	})
}
