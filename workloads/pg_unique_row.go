package workloads

func init() {
	register(Design{
		Name: "pg-unique-row", Service: "postgres", LockNodes: 1, Tokens: true, New: newSQLUniqueRow(pgDialect, false),
		Summary: "PostgreSQL lock row: INSERT under a unique key (owner, expires_at = now + lease, reentrant count), an acquire deletes an expired row first, release deletes the row if ours; expiry by the database clock; token = the row's id from a sequence",
	})
	register(Design{
		Name: "pg-unique-row-client-clock", Service: "postgres", LockNodes: 1, Tokens: true, New: newSQLUniqueRow(pgDialect, true),
		Summary: "pg-unique-row with expiry judged by the client's clock (expires_at written and compared as the client's time), so a skewed client deletes a live row",
	})
}
