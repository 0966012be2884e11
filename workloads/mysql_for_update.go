package workloads

func init() {
	register(Design{
		Name: "mysql-for-update", Service: "mariadb", LockNodes: 1, Tokens: true, SessionHeld: true,
		Workloads: []string{WorkloadRegister, WorkloadRegisterInDB},
		New: newSQLTxLock(mysqlDialect, txLockSQL{
			prepare: "INSERT IGNORE INTO lockcheck_for_update (name) VALUES (?)",
			lock:    "SELECT name, CONNECTION_ID() FROM lockcheck_for_update WHERE name = ? FOR UPDATE",
			arg:     func(key string) any { return key },
		}),
		Summary: "MariaDB InnoDB row lock: BEGIN, SELECT ... FOR UPDATE of the key's row (innodb_lock_wait_timeout = acquire timeout), held for the critical section, COMMIT releases; token = NEXTVAL at grant; --workload register-in-db keeps the register in the same transaction",
	})
}
