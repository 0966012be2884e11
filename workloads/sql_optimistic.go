package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/history"
)

// optimisticAttempts bounds the compare-and-set attempts of one critical
// section before it gives up (with no effect).
const optimisticAttempts = 100

// sqlOptimistic is pg-optimistic and mysql-optimistic: no lock. The
// register lives in the database with a version column; a critical section
// reads value and version, thinks, and writes with UPDATE ... SET value =
// read+1, version = version+1 WHERE version = the version read, retried
// from the read when another writer got there first (no row updated).
// Like redis-watch-inventory, it is judged by the resource checkers only.
type sqlOptimistic struct {
	s   *sqlSession
	cfg Config
	rng *rand.Rand
}

var (
	_ Lock      = (*sqlOptimistic)(nil)
	_ Sectioner = (*sqlOptimistic)(nil)
)

func newSQLOptimistic(d *sqlDialect) func(Config, *rand.Rand, func(string)) (Lock, error) {
	return func(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
		s, err := newSQLSession(context.Background(), d, cfg, events)
		if err != nil {
			return nil, err
		}
		return &sqlOptimistic{s: s, cfg: cfg, rng: rng}, nil
	}
}

// Acquire grants at once: there is no lock.
func (l *sqlOptimistic) Acquire(context.Context, string) (Grant, error) {
	return Grant{Owner: newOwner(l.cfg.Process, l.rng)}, nil
}

// Release does nothing: there is no lock to give back.
func (l *sqlOptimistic) Release(context.Context, string, Grant) (*history.Value, error) {
	return &history.Value{Extra: &history.Extra{Detail: "no lock to release"}}, nil
}

// Close ends the session.
func (l *sqlOptimistic) Close() error { return l.s.Close() }

// CriticalSection increments the register with an optimistic
// compare-and-set on its version. An error before the UPDATE was sent had
// no effect (fail); an UPDATE whose answer was lost is ambiguous (info).
func (l *sqlOptimistic) CriticalSection(ctx context.Context, key string, token int64, check func() error) (*history.Value, error) {
	d := l.s.d
	conflicts := 0
	for attempt := 0; attempt < optimisticAttempts; attempt++ {
		val := &history.Value{Token: token}
		if check != nil {
			if err := check(); err != nil {
				return val, Definite(err)
			}
		}
		if err := l.s.ensure(ctx); err != nil {
			return val, Definite(err)
		}
		cctx, cancel := l.s.opCtx(ctx, 0)
		if _, err := l.s.conn.ExecContext(cctx, d.rebind(fmt.Sprintf(d.insertIfAbsent, "lockcheck_registers")), key); err != nil {
			cancel()
			return val, Definite(l.s.fail(fmt.Errorf("critical section on %s: %w", key, err)))
		}
		var read, version int64
		err := l.s.conn.QueryRowContext(cctx, d.rebind("SELECT value, version FROM lockcheck_registers WHERE name = ?"), key).Scan(&read, &version)
		cancel()
		if err != nil {
			return val, Definite(l.s.fail(fmt.Errorf("read register %s: %w", key, err)))
		}
		val.Read, val.Wrote = history.Int64(read), history.Int64(read+1)
		if err := think(ctx, ms(l.cfg.ThinkMS)); err != nil {
			return val, err
		}
		wctx, wcancel := l.s.opCtx(ctx, 0)
		res, err := l.s.conn.ExecContext(wctx, d.rebind("UPDATE lockcheck_registers SET value = ?, version = version + 1 WHERE name = ? AND version = ?"),
			read+1, key, version)
		wcancel()
		if err != nil {
			return val, l.s.fail(fmt.Errorf("write register %s: %w", key, err))
		}
		if n, _ := res.RowsAffected(); n == 1 {
			if conflicts > 0 {
				val.Mut().Detail = fmt.Sprintf("written after %s", plural(conflicts, "version conflict"))
			}
			return val, nil
		}
		conflicts++
	}
	return &history.Value{Token: token}, Definite(fmt.Errorf("%d compare-and-set attempts on %s lost to other writers", conflicts, key))
}
