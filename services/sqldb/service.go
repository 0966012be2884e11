package sqldb

import (
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// pgLoginEnv are libpq's own variables for a login, which a PostgreSQL
// topology file's login comes from unless it names others.
var pgLoginEnv = clusters.LoginEnv{User: "PGUSER", Password: "PGPASSWORD", Database: "PGDATABASE"}

// The database services: PostgreSQL, MariaDB, and PgBouncer in front of
// PostgreSQL in its two pool modes (it fronts postgres: a PostgreSQL
// design runs on it with --service).
func init() {
	clusters.RegisterService(clusters.Service{
		Name: "postgres", Packages: "postgresql-15, redis-server (storage)",
		Summary:         "one PostgreSQL server (initdb into the run's temp dir, fsync on, session timeouts 2 x lease), run as the postgres user when lockcheck runs as root",
		Look:            clusters.LookAll(LookPostgres),
		New:             newSQLTopology(NewPostgres),
		Server:          "PostgreSQL",
		SessionSettings: "idle_in_transaction_session_timeout, idle_session_timeout and tcp_user_timeout",
		SessionTimeout:  sessionTimeout,
		External:        externalForm(pgLoginEnv, func(as *clusters.Login) dbEngine { return &postgresEngine{dbServer: dbServer{as: as}} }, false),
	})
	clusters.RegisterService(clusters.Service{
		Name: "mariadb", Packages: "mariadb-server, redis-server (storage)",
		Summary:         "one MariaDB server (mariadb-install-db into the run's temp dir, InnoDB flushed at every commit, wait_timeout and idle_transaction_timeout from the lease), run as the mysql user when lockcheck runs as root",
		Look:            clusters.LookAll(LookMariaDB),
		New:             newSQLTopology(NewMariaDB),
		Server:          "MariaDB",
		SessionSettings: "wait_timeout and idle_transaction_timeout",
		SessionTimeout:  func(lease time.Duration) time.Duration { return wholeSeconds(sessionTimeout(lease)) },
		External: externalForm(clusters.LoginEnv{User: "MARIADB_USER", Password: "MARIADB_PASSWORD", Database: "MARIADB_DATABASE"},
			func(as *clusters.Login) dbEngine { return &mariadbEngine{dbServer: dbServer{as: as}} }, false),
	})
	for _, mode := range []struct{ mode, summary string }{
		{"transaction", "a server session is lent to a client for one transaction and then to any other, so session state (a session advisory lock) stays behind on a session the client no longer has"},
		{"session", "a client keeps its server session until it disconnects, as with no pooler"},
	} {
		clusters.RegisterService(clusters.Service{
			Name: "pgbouncer-" + mode.mode, Fronts: "postgres",
			Packages: "pgbouncer, postgresql-15, redis-server (storage)",
			Summary:  "PgBouncer (pool_mode = " + mode.mode + ") in front of one PostgreSQL server, every worker's link to PgBouncer behind its own proxy; a lock-node fault (kill) strikes PgBouncer, the lock node the workers see: " + mode.summary,
			Look:     clusters.LookAll(LookPgBouncer, LookPostgres),
			New: newSQLTopology(func(cfg Config) *DB {
				return NewPgBouncer(cfg, mode.mode)
			}),
			Server:          "PostgreSQL",
			SessionSettings: "PostgreSQL's idle_in_transaction_session_timeout, idle_session_timeout and tcp_user_timeout (on PgBouncer's server sessions)",
			SessionTimeout:  sessionTimeout,
			Version:         PgBouncerVersion,
			External:        externalForm(pgLoginEnv, func(as *clusters.Login) dbEngine { return &postgresEngine{dbServer: dbServer{as: as}} }, true),
		})
	}
}
