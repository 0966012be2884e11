package workloads

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/history"
)

// sessionLockSQL is how a dialect takes and gives back a lock that belongs
// to the database session (a PostgreSQL session advisory lock, a MariaDB
// GET_LOCK named lock). Both queries return a boolean-ish value and the
// server's id of the session that ran them (history.Value.Backend): behind
// a pooler that is not always the session the client opened.
type sessionLockSQL struct {
	try     string // returns true when the lock was taken
	release string // returns true when the session held it and let go
	arg     func(key string) any
}

// sqlSessionLock is a lock that lives as long as its database session:
// pg-advisory (pg_try_advisory_lock / pg_advisory_unlock) and
// mysql-get-lock (GET_LOCK(name, 0) / RELEASE_LOCK). Acquire retries the
// try until the acquire timeout; the fencing token is taken from the token
// sequence right after the grant. When the server ends the session, it
// releases the lock at once, while the client goes on: the next statement
// finds the session gone and opens a new one (a session event).
type sqlSessionLock struct {
	s   *sqlSession
	sql sessionLockSQL
	cfg Config
	rng *rand.Rand
}

var _ Lock = (*sqlSessionLock)(nil)

func newSQLSessionLock(d *sqlDialect, q sessionLockSQL) func(Config, *rand.Rand, func(string)) (Lock, error) {
	return func(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
		s, err := newSQLSession(context.Background(), d, cfg, events)
		if err != nil {
			return nil, err
		}
		return &sqlSessionLock{s: s, sql: q, cfg: cfg, rng: rng}, nil
	}
}

// Acquire tries the lock until it is granted or the acquire timeout passes.
func (l *sqlSessionLock) Acquire(ctx context.Context, key string) (Grant, error) {
	return retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		if err := l.s.ensure(ctx); err != nil {
			return Grant{}, false, err
		}
		cctx, cancel := l.s.opCtx(ctx, 0)
		defer cancel()
		var ok sql.NullBool
		var backend int64
		if err := l.s.conn.QueryRowContext(cctx, l.s.d.rebind(l.sql.try), l.sql.arg(key)).Scan(&ok, &backend); err != nil {
			return Grant{}, false, l.s.fail(fmt.Errorf("acquire %s: %w", key, err))
		}
		if !ok.Bool {
			return Grant{}, false, nil
		}
		g := Grant{Owner: newOwner(l.cfg.Process, l.rng), Detail: fmt.Sprintf("session %d", l.s.id), Backend: backend}
		tok, err := l.s.token(ctx, l.s.conn)
		if err != nil {
			// The lock is held but the grant cannot be reported: its
			// outcome is unknown, and the worker is retired (its session
			// ends and the lock with it).
			return Grant{}, false, undefinite(l.s.fail(err))
		}
		g.Token = tok
		return g, true, nil
	})
}

// Release gives the lock back. A session that the server ended no longer
// holds it: the release then runs on a new session and reports
// Released=false (the lock had already been lost).
func (l *sqlSessionLock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	if err := l.s.ensure(ctx); err != nil {
		return nil, err
	}
	released, backend, err := l.releaseOnce(ctx, key)
	if err != nil && l.s.conn == nil {
		// The session was gone: its locks went with it. Say so from a
		// new session, which holds nothing.
		if err := l.s.ensure(ctx); err != nil {
			return nil, err
		}
		released, backend, err = l.releaseOnce(ctx, key)
	}
	if err != nil {
		return nil, err
	}
	return &history.Value{Released: history.Bool(released), Backend: backend}, nil
}

// releaseOnce runs the release statement and returns whether the session
// that ran it held the lock and let go, and that session's server id.
func (l *sqlSessionLock) releaseOnce(ctx context.Context, key string) (bool, int64, error) {
	cctx, cancel := l.s.opCtx(ctx, 0)
	defer cancel()
	var ok sql.NullBool
	var backend int64
	if err := l.s.conn.QueryRowContext(cctx, l.s.d.rebind(l.sql.release), l.sql.arg(key)).Scan(&ok, &backend); err != nil {
		return false, 0, l.s.fail(fmt.Errorf("release %s: %w", key, err))
	}
	return ok.Bool, backend, nil
}

// Close ends the session (and so releases whatever it holds).
func (l *sqlSessionLock) Close() error { return l.s.Close() }
