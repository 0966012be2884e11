// Command postgres is a kit worker for a PostgreSQL session advisory lock
// written with pgx: pg_try_advisory_lock on a hash of the key, retried
// until the acquire timeout, pg_advisory_unlock to release, and a fencing
// token from a sequence taken at the grant. The lock lives as long as the
// session: the worker keeps one connection.
//
//	go build -o pg-worker ./kit/examples/postgres
//	check conformance --lock pg-advisory --worker-cmd ./pg-worker
package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockcheck/lockcheck/kit"
)

type lock struct {
	conn *pgx.Conn
	cfg  kit.Config
	rng  *rand.Rand
}

func keyID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("kit:" + key))
	return int64(h.Sum64())
}

func (l *lock) Acquire(ctx context.Context, key string) (kit.Grant, error) {
	for {
		var got bool
		if err := l.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", keyID(key)).Scan(&got); err != nil {
			return kit.Grant{}, err // a lost reply may have taken the lock: info
		}
		if got {
			var token int64
			if err := l.conn.QueryRow(ctx, "SELECT nextval('kit_token')").Scan(&token); err != nil {
				return kit.Grant{}, err
			}
			return kit.Grant{Owner: fmt.Sprintf("p%d-%016x", l.cfg.Process, l.rng.Uint64()), Token: token}, nil
		}
		select {
		case <-ctx.Done():
			return kit.Grant{}, kit.ErrNotAcquired
		case <-time.After(l.cfg.Retry()):
		}
	}
}

func (l *lock) Release(ctx context.Context, key string, _ kit.Grant) (bool, error) {
	var released bool
	err := l.conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", keyID(key)).Scan(&released)
	return released, err
}

func (l *lock) Close() error { return l.conn.Close(context.Background()) }

func main() {
	kit.Main(func(ctx context.Context, cfg kit.Config) (kit.Lock, error) {
		u := url.URL{Scheme: "postgres", Host: cfg.LockAddrs[0], Path: "/" + cfg.Database, User: url.UserPassword(cfg.User, cfg.Password),
			RawQuery: fmt.Sprintf("sslmode=disable&connect_timeout=%d&application_name=%s", max(1, cfg.OpTimeoutMS/1000), url.QueryEscape(cfg.SessionName))}
		if cfg.Password == "" {
			u.User = url.User(cfg.User)
		}
		if cfg.Pooled {
			u.RawQuery += "&default_query_exec_mode=exec"
		}
		conn, err := pgx.Connect(ctx, u.String())
		if err != nil {
			return nil, err
		}
		if _, err := conn.Exec(ctx, "CREATE SEQUENCE IF NOT EXISTS kit_token"); err != nil {
			conn.Close(ctx)
			return nil, err
		}
		return &lock{conn: conn, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Process)))}, nil
	})
}
