package clusters

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
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
// (a timeout, a client that vanished). It does not see
// mysql-for-update's row locks: MariaDB lists an InnoDB row lock
// (INNODB_LOCKS) only while another transaction waits for it.
type mariaSampler struct {
	db    *sql.DB
	addr  string
	query string
	keys  []string
	apps  map[int64]string // a session's program_name, once looked up
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
	dest := []any{&live, &ended}
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
	return sn, nil
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
