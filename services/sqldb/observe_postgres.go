package sqldb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

var _ sqlObservable = (*postgresEngine)(nil)

// The observer's probe lock: PostgreSQL's two-int advisory key space, which
// no design's bigint key shares (the schema's own lock is (0, 0)).
const pgProbeA, pgProbeB = 0x6c6b, 1

// pgSampler samples a PostgreSQL server on a connection of its own. In one
// round trip (one snapshot of pg_stat_activity) it reads the client
// sessions, the granted advisory locks (pg-advisory's session locks and
// pg-advisory-xact's transaction locks: locktype advisory, the key's bigint
// as classid and objid with objsubid 1), and, once the table exists, which
// session's transaction has locked each row of lockcheck_for_update
// (pg-for-update: a row locked FOR UPDATE carries the locking
// transaction's id as its xmax, the session in that transaction has it as
// its backend_xid), and the rows of lockcheck_rows (the unique-row
// designs' locks, with their owners). A lock held by a prepared transaction (register-in-db)
// has no session: it is held by session 0. The count of the sessions the
// server ended is pg_stat_database's sessions_killed, sessions_fatal (a
// timeout) and sessions_abandoned (the client vanished), summed.
type pgSampler struct {
	conn   *pgx.Conn
	addr   string
	keys   []string
	ids    map[int64]string // advisory lock id -> key
	tables bool             // lockcheck_for_update and lockcheck_rows exist
}

func (e *postgresEngine) sampler(ctx context.Context, addr string, keys []string) (sqlSampler, error) {
	conn, err := pgx.Connect(ctx, PostgresURL(addr, "lockcheck-observer"))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	// The session timeouts are for lock clients, not for this one.
	if _, err := conn.Exec(ctx, "SET idle_session_timeout = 0"); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("configure: %w", err)
	}
	s := &pgSampler{conn: conn, addr: addr, keys: keys, ids: make(map[int64]string, len(keys))}
	for _, k := range keys {
		s.ids[sqlLockID(k)] = k
	}
	return s, nil
}

func (s *pgSampler) sample(ctx context.Context) (sqlSnapshot, error) {
	sn := sqlSnapshot{live: map[int64]time.Time{}, held: map[string]sqlSession{}}
	b := &pgx.Batch{}
	b.Queue(`SELECT pid, backend_start FROM pg_stat_activity WHERE backend_type = 'client backend'`).Query(func(rows pgx.Rows) error {
		var pid int32
		var st time.Time
		_, err := pgx.ForEachRow(rows, []any{&pid, &st}, func() error {
			sn.live[int64(pid)] = st
			return nil
		})
		return err
	})
	b.Queue(`SELECT coalesce(l.pid, 0), coalesce(a.backend_start, 'epoch'), coalesce(a.application_name, ''),
		l.classid::bigint, l.objid::bigint, l.objsubid::int
		FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted`).Query(func(rows pgx.Rows) error {
		var pid int32
		var st time.Time
		var app string
		var hi, lo int64
		var sub int32
		_, err := pgx.ForEachRow(rows, []any{&pid, &st, &app, &hi, &lo, &sub}, func() error {
			ss := heldBy(int64(pid), st, app)
			switch {
			case sub == 1:
				if k, ok := s.ids[hi<<32|lo]; ok {
					sn.held[k] = ss
				}
			case sub == 2 && hi == pgProbeA && lo == pgProbeB:
				sn.held[probeKey] = ss
			}
			return nil
		})
		return err
	})
	b.Queue(`SELECT coalesce(sum(sessions_killed + sessions_fatal + sessions_abandoned), 0)::bigint FROM pg_stat_database`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&sn.ended)
	})
	if s.tables {
		sn.rows = map[string]lockRow{}
		b.Queue(`SELECT f.name, a.pid, a.backend_start, coalesce(a.application_name, '')
			FROM lockcheck_for_update f JOIN pg_stat_activity a ON a.backend_xid = f.xmax
			WHERE f.name = ANY($1)`, s.keys).Query(func(rows pgx.Rows) error {
			var name, app string
			var pid int32
			var st time.Time
			_, err := pgx.ForEachRow(rows, []any{&name, &pid, &st, &app}, func() error {
				sn.held[name] = heldBy(int64(pid), st, app)
				return nil
			})
			return err
		})
		b.Queue(`SELECT name, id, owner FROM lockcheck_rows WHERE name = ANY($1)`, s.keys).Query(func(rows pgx.Rows) error {
			var name, owner string
			var id int64
			_, err := pgx.ForEachRow(rows, []any{&name, &id, &owner}, func() error {
				sn.rows[name] = lockRow{id: id, owner: owner}
				return nil
			})
			return err
		})
	} else {
		b.Queue(`SELECT to_regclass('lockcheck_for_update') IS NOT NULL AND to_regclass('lockcheck_rows') IS NOT NULL`).QueryRow(func(row pgx.Row) error {
			return row.Scan(&s.tables)
		})
	}
	if err := s.conn.SendBatch(ctx, b).Close(); err != nil {
		return sqlSnapshot{}, fmt.Errorf("sample pg_locks: %w", err)
	}
	return sn, nil
}

// heldBy is the session pid (started at st, named app) as a lock holder;
// pid 0 is a prepared transaction's.
func heldBy(pid int64, st time.Time, app string) sqlSession {
	if pid == 0 {
		return sqlSession{}
	}
	return sqlSession{id: pid, start: st, app: app}
}

func (s *pgSampler) probe(ctx context.Context) (func(), error) {
	conn, err := pgx.Connect(ctx, PostgresURL(s.addr, "lockcheck-observer-probe"))
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1::int, $2::int)", pgProbeA, pgProbeB); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), sqlSampleTimeout)
		defer cancel()
		conn.Close(ctx)
	}, nil
}

func (s *pgSampler) close() {
	ctx, cancel := context.WithTimeout(context.Background(), sqlSampleTimeout)
	defer cancel()
	s.conn.Close(ctx)
}
