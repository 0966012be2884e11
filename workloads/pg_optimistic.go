package workloads

func init() {
	register(Design{
		Name: "pg-optimistic", Service: "postgres", LockNodes: 1, NoLock: true,
		Workloads: []string{WorkloadRegister}, New: newSQLOptimistic(pgDialect),
		Summary: "no lock: the register lives in PostgreSQL with a version column; read, think, UPDATE ... WHERE version = read version, retried on conflict; judged by the resource checkers only",
	})
}
