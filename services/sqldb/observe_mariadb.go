package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

var _ sqlObservable = (*mariadbEngine)(nil)

// mariaProbeLock is the observer's probe lock: a GET_LOCK name no design
// takes (theirs are "lockcheck:" and the key).
const mariaProbeLock = "lockcheck-observer:probe"

// mariaSampler samples a MariaDB server on a connection of its own: in one
// statement, the ids of the live sessions (information_schema.PROCESSLIST)
// and IS_USED_LOCK of each lock key's GET_LOCK name (mysql-get-lock's
// "lockcheck:" and the key) and of the probe's, and the count of the
// sessions the server ended: Com_kill (KILL statements) and Aborted_clients
// (a timeout, a client that vanished). Once the table of mysql-for-update
// has a row of a run's key, it also reads that design's row locks from SHOW ENGINE INNODB
// STATUS, with the server's innodb_status_output_locks on (the only
// listing of a row lock that no other transaction waits for: INNODB_LOCKS
// has it only while one does). Once lockcheck_rows has a row of a run's
// key (a unique-row design's lock), it reads those rows too.
type mariaSampler struct {
	db    *sql.DB
	addr  string
	query string
	keys  []string
	apps  map[int64]string // a session's program_name, once looked up
	// rows is whether lockcheck_for_update has a row of a run's key,
	// which mysql-for-update inserts before it first locks it, and with
	// it the row locks to read; until it does, the server is asked every
	// mariaTableEvery, after lookedAt. Every MariaDB design's schema has
	// the table, and reading the status text each sample cost
	// mysql-get-lock a tenth of its grants.
	rows     bool
	lookedAt time.Time
	// lockRows is whether lockcheck_rows has had a row of a run's key;
	// until it has, it is asked every mariaTableEvery, after rowsAt.
	lockRows bool
	rowsAt   time.Time
}

// mariaTableEvery is how often a sampler asks whether the table of
// mysql-for-update has a row of the run's keys until it does.
const mariaTableEvery = 250 * time.Millisecond

// mariaNoSuchTable is MariaDB's error number for a table that does not
// exist (ER_NO_SUCH_TABLE).
const mariaNoSuchTable = 1146

// keysIn returns the condition that a table's name column is one of the
// run's keys, and the keys as its arguments.
func (s *mariaSampler) keysIn() (string, []any) {
	args := make([]any, len(s.keys))
	for i, k := range s.keys {
		args[i] = k
	}
	return "name IN (?" + strings.Repeat(", ?", len(s.keys)-1) + ")", args
}

// noSuchTable reports whether err is MariaDB's answer about a table that
// does not exist (yet: a design's worker makes its schema).
func noSuchTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == mariaNoSuchTable
}

func (e *mariadbEngine) sampler(ctx context.Context, addr string, keys []string) (sqlSampler, error) {
	db, err := sql.Open("mysql", MariaDBDSN(addr, "lockcheck-observer")+"&wait_timeout=86400")
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	q := []string{"(SELECT GROUP_CONCAT(ID) FROM information_schema.PROCESSLIST)",
		"(SELECT coalesce(SUM(VARIABLE_VALUE), 0) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('COM_KILL', 'ABORTED_CLIENTS'))",
		"@@GLOBAL.innodb_status_output_locks",
		"IS_USED_LOCK('" + mariaProbeLock + "')"}
	for _, k := range keys {
		q = append(q, "IS_USED_LOCK('lockcheck:"+strings.ReplaceAll(k, "'", "''")+"')")
	}
	return &mariaSampler{db: db, addr: addr, keys: keys, query: "SELECT " + strings.Join(q, ", "), apps: map[int64]string{}}, nil
}

func (s *mariaSampler) sample(ctx context.Context) (sqlSnapshot, error) {
	var live sql.NullString
	held := make([]sql.NullInt64, len(s.keys)+1)
	var ended int64
	var listsLocks bool
	dest := []any{&live, &ended, &listsLocks}
	for i := range held {
		dest = append(dest, &held[i])
	}
	if err := s.db.QueryRowContext(ctx, s.query).Scan(dest...); err != nil {
		return sqlSnapshot{}, fmt.Errorf("sample IS_USED_LOCK: %w", err)
	}
	sn := sqlSnapshot{live: map[int64]time.Time{}, held: map[string]sqlSession{}, ended: ended}
	for _, f := range strings.Split(live.String, ",") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			sn.live[id] = time.Time{}
		}
	}
	for i, h := range held {
		if !h.Valid {
			continue
		}
		key := probeKey
		if i > 0 {
			key = s.keys[i-1]
		}
		sn.held[key] = sqlSession{id: h.Int64, app: s.app(ctx, h.Int64)}
	}
	if err := s.rowLocks(ctx, sn.held, listsLocks); err != nil {
		return sqlSnapshot{}, err
	}
	rows, err := s.lockRowsOf(ctx)
	if err != nil {
		return sqlSnapshot{}, err
	}
	sn.rows = rows
	return sn, nil
}

// lockRowsOf returns the rows of lockcheck_rows of the run's keys (the
// unique-row designs' locks), once that table has had one: nil before.
func (s *mariaSampler) lockRowsOf(ctx context.Context) (map[string]lockRow, error) {
	if len(s.keys) == 0 || (!s.lockRows && time.Since(s.rowsAt) < mariaTableEvery) {
		return nil, nil
	}
	s.rowsAt = time.Now()
	in, args := s.keysIn()
	rs, err := s.db.QueryContext(ctx, "SELECT name, id, owner FROM lockcheck_rows WHERE "+in, args...)
	if noSuchTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sample lockcheck_rows: %w", err)
	}
	defer rs.Close()
	rows := map[string]lockRow{}
	for rs.Next() {
		var name, owner string
		var id int64
		if err := rs.Scan(&name, &id, &owner); err != nil {
			return nil, fmt.Errorf("sample lockcheck_rows: %w", err)
		}
		rows[name] = lockRow{id: id, owner: owner}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("sample lockcheck_rows: %w", err)
	}
	if len(rows) == 0 && !s.lockRows {
		return nil, nil
	}
	s.lockRows = true
	return rows, nil
}

// rowLocks adds to held the sessions that hold the run's keys' rows of
// lockcheck_for_update (mysql-for-update's row locks), once that table
// exists; listsLocks is whether the server's status lists row locks
// (innodb_status_output_locks) as the sample began.
func (s *mariaSampler) rowLocks(ctx context.Context, held map[string]sqlSession, listsLocks bool) error {
	if !s.rows {
		if len(s.keys) == 0 || time.Since(s.lookedAt) < mariaTableEvery {
			return nil
		}
		s.lookedAt = time.Now()
		var n int
		in, args := s.keysIn()
		err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM lockcheck_for_update WHERE "+in, args...).Scan(&n)
		if noSuchTable(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sample: look for lockcheck_for_update's rows: %w", err)
		}
		if n == 0 {
			return nil
		}
		s.rows = true
	}
	// Set whenever it is off: a server that restarted (the pool
	// reconnects by itself) has it off again, and would list no row
	// lock, as if every holder had let go. The server is the run's own.
	if !listsLocks {
		if _, err := s.db.ExecContext(ctx, "SET GLOBAL innodb_status_output_locks = ON"); err != nil {
			return fmt.Errorf("sample: list row locks: %w", err)
		}
	}
	var typ, name, status string
	if err := s.db.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return fmt.Errorf("sample SHOW ENGINE INNODB STATUS: %w", err)
	}
	// The setting may have gone off while the status was written (someone
	// else set it): then the status lists no row lock, and every holder
	// would look gone. Such a sample is dropped; the next sets it again.
	var still bool
	if err := s.db.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_status_output_locks").Scan(&still); err != nil {
		return fmt.Errorf("sample: read innodb_status_output_locks: %w", err)
	}
	if !still {
		return errors.New("sample: innodb_status_output_locks went off during the sample: its row locks are not listed")
	}
	rows := innodbRowHolders(status)
	for _, k := range s.keys {
		if id, ok := rows[k]; ok {
			if _, taken := held[k]; !taken {
				held[k] = sqlSession{id: id, app: s.app(ctx, id)}
			}
		}
	}
	return nil
}

// app returns session id's program_name, looked up once.
func (s *mariaSampler) app(ctx context.Context, id int64) string {
	if a, ok := s.apps[id]; ok {
		return a
	}
	var a string
	_ = s.db.QueryRowContext(ctx, `SELECT ATTR_VALUE FROM performance_schema.session_connect_attrs
		WHERE PROCESSLIST_ID = ? AND ATTR_NAME = 'program_name'`, id).Scan(&a)
	s.apps[id] = a
	return a
}

func (s *mariaSampler) probe(ctx context.Context) (func(), error) {
	db, err := sql.Open("mysql", MariaDBDSN(s.addr, "lockcheck-observer-probe"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	var ok sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", mariaProbeLock).Scan(&ok); err != nil || ok.Int64 != 1 {
		db.Close()
		return nil, fmt.Errorf("probe GET_LOCK: %v (%v)", err, ok)
	}
	return func() { db.Close() }, nil
}

func (s *mariaSampler) close() { s.db.Close() }
