package workloads

func init() {
	register(Design{
		Name: "mysql-get-lock", Service: "mariadb", LockNodes: 1, Tokens: true, SessionHeld: true,
		New: newSQLSessionLock(mysqlDialect, sessionLockSQL{
			try:     "SELECT GET_LOCK(?, 0), CONNECTION_ID()",
			release: "SELECT RELEASE_LOCK(?), CONNECTION_ID()",
			arg:     func(key string) any { return "lockcheck:" + key },
		}),
		Summary: "MariaDB named lock: GET_LOCK(key, 0) retried until the acquire timeout, RELEASE_LOCK; token = NEXTVAL of a sequence at grant; the server releases it when it ends the session",
	})
}
