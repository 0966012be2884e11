package workloads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/history"
)

// sqlUniqueRow is the seed articles' lock row: pg-unique-row and
// mysql-unique-row. A lock is a row of lockcheck_rows under the key's
// unique name, with the owner, the holder (the client's session name, for
// reentrancy), expires_at = now + lease and a reentrant count. Acquire
// tries, until the acquire timeout: re-enter a row this client holds
// (count + 1); else delete the key's row if it has expired; else INSERT
// the row, which the unique key refuses while someone holds it. Release
// deletes the row if it is still ours (or decrements its count). Expiry
// is judged by the database's clock (now()) by default, by the client's
// own clock in the -client-clock variants, so a clock-client nemesis can
// make a client delete a live row. The fencing token is the row's id,
// taken from the token sequence at insert. Nothing renews the row: a
// holder that works longer than the lease loses it (M1).
type sqlUniqueRow struct {
	s           *sqlSession
	cfg         Config
	rng         *rand.Rand
	clientClock *Clock // nil: the database's clock
}

var _ Lock = (*sqlUniqueRow)(nil)

func newSQLUniqueRow(d *sqlDialect, clientClock bool) func(Config, *rand.Rand, func(string)) (Lock, error) {
	return func(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
		s, err := newSQLSession(context.Background(), d, cfg, events)
		if err != nil {
			return nil, err
		}
		l := &sqlUniqueRow{s: s, cfg: cfg, rng: rng}
		if clientClock {
			l.clientClock = NewClock(cfg.ClockFile)
		}
		return l, nil
	}
}

// clock returns the SQL for "now" and "now + lease" with their arguments:
// the database's clock, or the client's as parameters.
func (l *sqlUniqueRow) clock() (now string, nowArg []any, expires string, expArg []any) {
	d := l.s.d
	if l.clientClock == nil {
		return d.now, nil, d.expiresIn, []any{l.cfg.LeaseMS}
	}
	t := l.clientClock.Now().UTC()
	return "?", []any{t}, "?", []any{t.Add(l.cfg.Lease())}
}

// Acquire tries to take the row until the acquire timeout.
func (l *sqlUniqueRow) Acquire(ctx context.Context, key string) (Grant, error) {
	return retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		if err := l.s.ensure(ctx); err != nil {
			return Grant{}, false, err
		}
		cctx, cancel := l.s.opCtx(ctx, 0)
		defer cancel()
		d, c := l.s.d, l.s.conn
		owner := newOwner(l.cfg.Process, l.rng)
		now, nowArg, expires, expArg := l.clock()
		// Re-enter a row this client still holds.
		args := append(append([]any{owner}, expArg...), key, l.s.name)
		res, err := c.ExecContext(cctx, d.rebind("UPDATE lockcheck_rows SET count = count + 1, owner = ?, expires_at = "+expires+
			" WHERE name = ? AND holder = ?"), args...)
		if err != nil {
			return Grant{}, false, l.s.fail(fmt.Errorf("re-enter %s: %w", key, err))
		}
		if n, _ := res.RowsAffected(); n == 1 {
			var tok, count int64
			if err := c.QueryRowContext(cctx, d.rebind("SELECT id, count FROM lockcheck_rows WHERE name = ? AND owner = ?"), key, owner).Scan(&tok, &count); err != nil {
				return Grant{}, false, undefinite(l.s.fail(fmt.Errorf("re-enter %s: %w", key, err)))
			}
			return Grant{Owner: owner, Token: tok, Detail: fmt.Sprintf("re-entered: count %d", count)}, true, nil
		}
		// Delete the key's row if it has expired.
		res, err = c.ExecContext(cctx, d.rebind("DELETE FROM lockcheck_rows WHERE name = ? AND expires_at < "+now), append([]any{key}, nowArg...)...)
		if err != nil {
			return Grant{}, false, l.s.fail(fmt.Errorf("delete the expired row of %s: %w", key, err))
		}
		took := ""
		if n, _ := res.RowsAffected(); n > 0 {
			took = ", after deleting an expired row"
		}
		// Insert the row; the unique key refuses it while it is held.
		var tok int64
		args = append([]any{key, owner, l.s.name}, expArg...)
		err = c.QueryRowContext(cctx, d.rebind(fmt.Sprintf(d.insertRow, expires)), args...).Scan(&tok)
		if errors.Is(err, sql.ErrNoRows) {
			return Grant{}, false, nil
		}
		if err != nil {
			return Grant{}, false, l.s.fail(fmt.Errorf("insert the row of %s: %w", key, err))
		}
		return Grant{Owner: owner, Token: tok, Detail: fmt.Sprintf("row id %d%s", tok, took)}, true, nil
	})
}

// Release deletes the row if it is still ours with count 1, or decrements
// its count. Released=false means the row was no longer ours: it had
// expired and someone else took it (or deleted it).
func (l *sqlUniqueRow) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	if err := l.s.ensure(ctx); err != nil {
		return nil, err
	}
	cctx, cancel := l.s.opCtx(ctx, 0)
	defer cancel()
	d, c := l.s.d, l.s.conn
	res, err := c.ExecContext(cctx, d.rebind("DELETE FROM lockcheck_rows WHERE name = ? AND owner = ? AND count <= 1"), key, g.Owner)
	if err != nil {
		return nil, l.s.fail(fmt.Errorf("release %s: %w", key, err))
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return &history.Value{Released: history.Bool(true)}, nil
	}
	res, err = c.ExecContext(cctx, d.rebind("UPDATE lockcheck_rows SET count = count - 1 WHERE name = ? AND owner = ?"), key, g.Owner)
	if err != nil {
		return nil, l.s.fail(fmt.Errorf("release %s: %w", key, err))
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return &history.Value{Released: history.Bool(true), Extra: &history.Extra{Detail: "reentrant count decremented"}}, nil
	}
	return &history.Value{Released: history.Bool(false)}, nil
}

// Close ends the session.
func (l *sqlUniqueRow) Close() error { return l.s.Close() }
