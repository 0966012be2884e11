package sqldb

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockcheck/lockcheck/clusters"
)

func needPgBouncer(t testing.TB) {
	t.Helper()
	needPostgres(t)
	if _, err := LookPgBouncer(); err != nil {
		t.Skip(err)
	}
}

// TestPgBouncerPoolModes starts PostgreSQL behind PgBouncer in each pool
// mode and takes one session advisory lock from two clients through a
// worker's proxy, one after the other: in transaction mode the second
// client's statement runs on the server session the first one's left
// (PgBouncer reuses its last idle server session), which holds the lock
// and grants it again; in session mode each client keeps a server session
// of its own, and the second is refused. Teardown leaves neither server
// running.
func TestPgBouncerPoolModes(t *testing.T) {
	needPgBouncer(t)
	for _, c := range []struct {
		mode       string
		secondGets bool
	}{
		{"transaction", true},
		{"session", false},
	} {
		t.Run(c.mode, func(t *testing.T) {
			ctx := context.Background()
			top := NewPgBouncer(Config{Workers: 2, LogDir: t.TempDir()}, c.mode)
			if err := top.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			defer top.Teardown(ctx)
			if !top.Login().Pooled {
				t.Error("the login does not say the address is a pooler")
			}
			dial := func(app string) *pgx.Conn {
				conn, err := pgx.Connect(ctx, PostgresURL(top.LockAddrs(0)[0], app)+"&default_query_exec_mode=exec")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close(context.WithoutCancel(ctx)) })
				return conn
			}
			lock := func(conn *pgx.Conn) (bool, int64) {
				var ok bool
				var backend int64
				if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(7), pg_backend_pid()").Scan(&ok, &backend); err != nil {
					t.Fatal(err)
				}
				return ok, backend
			}
			first, second := dial(clusters.SessionName(1)), dial(clusters.SessionName(2))
			ok1, b1 := lock(first)
			ok2, b2 := lock(second)
			if !ok1 {
				t.Fatal("the first client was refused a free lock")
			}
			if ok2 != c.secondGets || (b1 == b2) != c.secondGets {
				t.Errorf("second client: granted %v on server session %d (the first's: %d), want granted %v", ok2, b2, b1, c.secondGets)
			}
			pgbouncer, pg := top.server.Pid(), top.engine.(*pgbouncerEngine).pgProc.Pid()
			if err := top.Teardown(ctx); err != nil {
				t.Fatal(err)
			}
			for name, pid := range map[string]int{"pgbouncer": pgbouncer, "postgres": pg} {
				if waitGone(pid, 10*time.Second) != nil {
					t.Errorf("%s (pid %d) still runs after Teardown", name, pid)
				}
			}
		})
	}
}

// waitGone waits until no process pid exists, at most timeout.
func waitGone(pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return syscall.EBUSY
}
