package workloads

func init() {
	register(Design{
		Name: "mysql-optimistic", Service: "mariadb", LockNodes: 1, NoLock: true,
		Workloads: []string{WorkloadRegister}, New: newSQLOptimistic(mysqlDialect),
		Summary: "no lock: the register lives in MariaDB with a version column; read, think, UPDATE ... WHERE version = read version, retried on conflict; judged by the resource checkers only",
	})
}
