package workloads

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// The SQL lock designs (pg-*, mysql-*) share this code; a sqlDialect holds
// what differs between PostgreSQL and MariaDB.

// sqlSession is one database session of a worker: a single pinned
// connection, so that session-level locks (advisory locks, GET_LOCK) and
// open transactions belong to it. When the server ends the session (the
// session-kill nemesis, a session timeout, a restart) the next operation
// opens a new one and reports both as a session event: the client goes on,
// as real clients do.
type sqlSession struct {
	d      *sqlDialect
	cfg    Config
	name   string // the application name the nemesis finds the session by
	db     *sql.DB
	conn   *sql.Conn
	id     int64 // the server's id of the session (backend pid, connection id)
	events func(string)
}

// sessionName is the application name of cfg's connections.
func sessionName(cfg Config) string {
	if cfg.SessionName != "" {
		return cfg.SessionName
	}
	return fmt.Sprintf("lockcheck-p%d", cfg.Process)
}

// newSQLSession opens the worker's session and makes sure the schema the
// designs use exists.
func newSQLSession(ctx context.Context, d *sqlDialect, cfg Config, events func(string)) (*sqlSession, error) {
	if len(cfg.LockAddrs) == 0 {
		return nil, errors.New("no database address")
	}
	if cfg.User == "" || cfg.Database == "" {
		return nil, errors.New("no database login: the open request names no user or database")
	}
	name := sessionName(cfg)
	db, err := sql.Open(d.driver, d.dsn(cfg, name))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", d.name, err)
	}
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	if events == nil {
		events = func(string) {}
	}
	s := &sqlSession{d: d, cfg: cfg, name: name, db: db, events: events}
	if err := s.ensure(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.schema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// opCtx bounds one statement by the op timeout plus extra.
func (s *sqlSession) opCtx(ctx context.Context, extra time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.OpTimeout()+extra)
}

// ensure opens a session when there is none.
func (s *sqlSession) ensure(ctx context.Context) error {
	if s.conn != nil {
		return nil
	}
	cctx, cancel := s.opCtx(ctx, time.Second)
	defer cancel()
	conn, err := s.db.Conn(cctx)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", s.d.name, err)
	}
	var id int64
	if err := conn.QueryRowContext(cctx, s.d.sessionID).Scan(&id); err != nil {
		conn.Raw(func(any) error { return errBadSession })
		conn.Close()
		return s.d.classify(fmt.Errorf("connect to %s: %w", s.d.name, err))
	}
	old := s.id
	s.conn, s.id = conn, id
	if old != 0 {
		s.events(fmt.Sprintf("database session %d ended; reconnected as session %d", old, id))
	}
	return nil
}

// errBadSession makes database/sql drop a connection instead of pooling it.
var errBadSession = driver.ErrBadConn

// fail records that an operation on the session failed with err: when the
// session may be gone (not a plain statement error), it is dropped, and the
// next operation opens a new one. It returns err classified.
func (s *sqlSession) fail(err error) error {
	if err == nil {
		return nil
	}
	if !s.d.statementError(err) && s.conn != nil {
		// Raw with an error marks the driver connection bad, so Close
		// discards it rather than returning it to the pool.
		_ = s.conn.Raw(func(any) error { return errBadSession })
		_ = s.conn.Close()
		s.conn = nil
	}
	return s.d.classify(err)
}

// schema creates the tables and the token sequence the designs use, once
// per database; concurrent workers serialise on a lock of the dialect.
func (s *sqlSession) schema(ctx context.Context) error {
	cctx, cancel := s.opCtx(ctx, 10*time.Second)
	defer cancel()
	tx, err := s.conn.BeginTx(cctx, nil)
	if err != nil {
		return s.fail(fmt.Errorf("create schema: %w", err))
	}
	defer tx.Rollback()
	for _, q := range s.d.schema {
		if _, err := tx.ExecContext(cctx, q); err != nil {
			return s.fail(fmt.Errorf("create schema (%s): %w", q, err))
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail(fmt.Errorf("create schema: %w", err))
	}
	return nil
}

// token takes the next fencing token from the database's sequence. Run it
// right after the grant: a sequence is not transactional, so a token taken
// by a holder whose transaction later rolls back is never handed out
// again, and tokens grow in grant order.
func (s *sqlSession) token(ctx context.Context, q querier) (int64, error) {
	cctx, cancel := s.opCtx(ctx, 0)
	defer cancel()
	var tok int64
	if err := q.QueryRowContext(cctx, s.d.nextToken).Scan(&tok); err != nil {
		return 0, fmt.Errorf("take a fencing token: %w", err)
	}
	return tok, nil
}

// querier is a session or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Close closes the session.
func (s *sqlSession) Close() error {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	return s.db.Close()
}

// lockID maps a lock key to a 63-bit number for locks keyed by integers
// (PostgreSQL advisory locks).
func lockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int64(h.Sum64() >> 1)
}

// heldTx is a lock held by an open transaction (FOR UPDATE, a transaction
// advisory lock): COMMIT releases it.
type heldTx struct {
	owner string
	// gid names the transaction when it is two-phase (register-in-db):
	// the critical section prepares it, the release commits it.
	gid string
	// prepared is set once the critical section prepared it.
	prepared bool
}

// asDefinite reports whether err is marked definite.
func asDefinite(err error, d *definiteError) bool { return errors.As(err, d) }
