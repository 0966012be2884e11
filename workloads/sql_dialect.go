package workloads

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// sqlDialect is what differs between the databases the SQL designs run on.
// Queries are written with ? placeholders; rebind turns them into $n for
// PostgreSQL.
type sqlDialect struct {
	name   string // "postgres", "mysql"
	driver string
	// dsn is the data source name for cfg's first lock node, the session
	// named app.
	dsn func(cfg Config, app string) string
	// sessionID returns the server's id of the session.
	sessionID string
	// schema creates every table and the token sequence, idempotently.
	schema []string
	// nextToken returns the next value of the token sequence.
	nextToken string
	// lockTimeout sets how long a lock wait may last, before BEGIN
	// (MariaDB, session-wide) or right after it (PostgreSQL, SET LOCAL).
	lockTimeout     func(d time.Duration) string
	lockTimeoutInTx bool
	insertIfAbsent  string // insert (name) into a table unless present: %s is the table
	insertRow       string // insert a lock row unless one exists, RETURNING id: %s is its expires_at
	now             string // the database clock, in milliseconds
	// expiresIn is the database clock plus ? milliseconds.
	expiresIn        string
	statementError   func(err error) bool
	lockNotAvailable func(err error) bool
	twoPhase         twoPhase
}

// rebind rewrites ? placeholders as $1, $2, ... for PostgreSQL.
func (d *sqlDialect) rebind(q string) string {
	if d.name != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// classify marks a server's error reply as definite (the statement had no
// effect, or was rolled back); anything else (a timeout, a lost
// connection) is left for Classify, which makes it info.
func (d *sqlDialect) classify(err error) error {
	var pg *pgconn.PgError
	var my *mysql.MySQLError
	if errors.As(err, &pg) || errors.As(err, &my) {
		return Definite(err)
	}
	return err
}

// pgDialect is PostgreSQL's dialect, through pgx's database/sql driver.
var pgDialect = &sqlDialect{
	name: "postgres", driver: "pgx",
	dsn: func(cfg Config, app string) string {
		secs := max(1, int(cfg.OpTimeout().Seconds()+0.999))
		u := url.URL{Scheme: "postgres", Host: cfg.LockAddrs[0], Path: "/" + cfg.Database, User: url.User(cfg.User),
			RawQuery: fmt.Sprintf("sslmode=disable&connect_timeout=%d&application_name=%s", secs, url.QueryEscape(app))}
		if cfg.Password != "" {
			u.User = url.UserPassword(cfg.User, cfg.Password)
		}
		if cfg.Pooled {
			// Unnamed statements, parsed and run in one round trip: a
			// pooler in transaction mode may run the next statement on
			// another server session, which never saw a named one.
			u.RawQuery += "&default_query_exec_mode=exec"
		}
		return u.String()
	},
	sessionID: "SELECT pg_backend_pid()",
	schema: []string{
		// The two-int advisory key space does not overlap pg-advisory's
		// bigint keys.
		"SELECT pg_advisory_xact_lock(0, 0)",
		"CREATE TABLE IF NOT EXISTS lockcheck_for_update (name text PRIMARY KEY)",
		"CREATE TABLE IF NOT EXISTS lockcheck_rows (name text PRIMARY KEY, owner text NOT NULL, holder text NOT NULL, expires_at timestamptz(3) NOT NULL, count int NOT NULL, id bigint NOT NULL)",
		"CREATE TABLE IF NOT EXISTS lockcheck_registers (name text PRIMARY KEY, value bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0)",
		"CREATE SEQUENCE IF NOT EXISTS lockcheck_token",
	},
	nextToken: "SELECT nextval('lockcheck_token')",
	lockTimeout: func(d time.Duration) string {
		return fmt.Sprintf("SET LOCAL lock_timeout = %d", max(1, d.Milliseconds()))
	},
	lockTimeoutInTx: true,
	insertIfAbsent:  "INSERT INTO %s (name) VALUES (?) ON CONFLICT DO NOTHING",
	insertRow: "INSERT INTO lockcheck_rows (name, owner, holder, expires_at, count, id) " +
		"VALUES (?, ?, ?, %s, 1, nextval('lockcheck_token')) ON CONFLICT DO NOTHING RETURNING id",
	now:       "clock_timestamp()",
	expiresIn: "clock_timestamp() + (? * interval '1 millisecond')",
	statementError: func(err error) bool {
		var pg *pgconn.PgError
		return errors.As(err, &pg) && pg.Severity != "FATAL" && pg.Severity != "PANIC"
	},
	lockNotAvailable: func(err error) bool {
		var pg *pgconn.PgError
		return errors.As(err, &pg) && pg.Code == "55P03"
	},
	twoPhase: pgTwoPhase,
}

// mysqlDialect is MariaDB's (and MySQL's) dialect.
var mysqlDialect = &sqlDialect{
	name: "mysql", driver: "mysql",
	dsn: func(cfg Config, app string) string {
		c := mysql.NewConfig()
		c.User, c.Passwd, c.Net, c.Addr, c.DBName = cfg.User, cfg.Password, "tcp", cfg.LockAddrs[0], cfg.Database
		c.Timeout = max(time.Second, cfg.OpTimeout())
		c.ParseTime = true
		c.ConnectionAttributes = "program_name:" + app
		return c.FormatDSN()
	},
	sessionID: "SELECT CONNECTION_ID()",
	schema: []string{
		"CREATE TABLE IF NOT EXISTS lockcheck_for_update (name varchar(191) PRIMARY KEY) ENGINE=InnoDB",
		"CREATE TABLE IF NOT EXISTS lockcheck_rows (name varchar(191) PRIMARY KEY, owner varchar(191) NOT NULL, holder varchar(191) NOT NULL, expires_at datetime(3) NOT NULL, count int NOT NULL, id bigint NOT NULL) ENGINE=InnoDB",
		"CREATE TABLE IF NOT EXISTS lockcheck_registers (name varchar(191) PRIMARY KEY, value bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0) ENGINE=InnoDB",
		"CREATE SEQUENCE IF NOT EXISTS lockcheck_token",
	},
	nextToken: "SELECT NEXTVAL(lockcheck_token)",
	lockTimeout: func(d time.Duration) string {
		return fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", max(1, int(d.Seconds()+0.5)))
	},
	insertIfAbsent: "INSERT IGNORE INTO %s (name) VALUES (?)",
	insertRow: "INSERT IGNORE INTO lockcheck_rows (name, owner, holder, expires_at, count, id) " +
		"VALUES (?, ?, ?, %s, 1, NEXTVAL(lockcheck_token)) RETURNING id",
	now:       "NOW(3)",
	expiresIn: "NOW(3) + INTERVAL (? * 1000) MICROSECOND",
	statementError: func(err error) bool {
		var my *mysql.MySQLError
		if !errors.As(err, &my) {
			return false
		}
		switch my.Number {
		case 1053, 1927, 2006, 2013: // shutdown, connection killed, gone away, lost
			return false
		}
		return true
	},
	lockNotAvailable: func(err error) bool {
		var my *mysql.MySQLError
		return errors.As(err, &my) && my.Number == 1205
	},
	twoPhase: mysqlTwoPhase,
}

// twoPhase is how a dialect runs a two-phase transaction: the critical
// section of register-in-db prepares the transaction that holds the lock
// and its write (durable from then on, its locks kept even if the session
// ends), and the release commits it, from any session.
type twoPhase struct {
	begin   func(gid string) []string
	prepare func(gid string) []string
	commit  func(gid string) string
	// rollback ends the open (not yet prepared) transaction gid.
	rollback func(gid string) []string
	// list returns the gids of the prepared transactions (one column:
	// the gid; MariaDB's XA RECOVER has four, see preparedGIDs).
	list string
}

var pgTwoPhase = twoPhase{
	begin:    func(string) []string { return []string{"BEGIN"} },
	prepare:  func(gid string) []string { return []string{"PREPARE TRANSACTION '" + gid + "'"} },
	commit:   func(gid string) string { return "COMMIT PREPARED '" + gid + "'" },
	rollback: func(string) []string { return []string{"ROLLBACK"} },
	list:     "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'lockcheck-%'",
}

var mysqlTwoPhase = twoPhase{
	begin:    func(gid string) []string { return []string{"XA START '" + gid + "'"} },
	prepare:  func(gid string) []string { return []string{"XA END '" + gid + "'", "XA PREPARE '" + gid + "'"} },
	commit:   func(gid string) string { return "XA COMMIT '" + gid + "'" },
	rollback: func(gid string) []string { return []string{"XA END '" + gid + "'", "XA ROLLBACK '" + gid + "'"} },
	list:     "XA RECOVER",
}
