package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/clustertest"
)

// TestSQLObserver takes and lets go of locks on a real PostgreSQL and
// MariaDB server through a client session of its own, and checks what the
// observer reports: a lock the session let go is deleted, a lock whose
// session the server ended is session-ended, each naming the session, placed
// between when the lock was taken and when the release was heard;
// nothing for a lock of another key; and probes with their lag.
func TestSQLObserver(t *testing.T) {
	for _, s := range sqlServers {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			c := startSQL(t, s.need, s.new, 1)
			lock, unlock := "SELECT pg_advisory_lock($1)", "SELECT pg_advisory_unlock($1)"
			arg := func(key string) any { return sqlLockID(key) }
			id := "SELECT pg_backend_pid()"
			if s.name == "mariadb" {
				lock, unlock = "SELECT GET_LOCK(?, 0)", "SELECT RELEASE_LOCK(?)"
				arg = func(key string) any { return "lockcheck:" + key }
				id = "SELECT CONNECTION_ID()"
			}
			got, reads, now := clustertest.WatchReleases(t, c, "k0", "k1")
			probes := 0
			db, conn := sqlConn(t, s.driver, s.dsn(c.Addr(), clusters.SessionName(3)))
			var backend int64
			if err := conn.QueryRowContext(ctx, id).Scan(&backend); err != nil {
				t.Fatal(err)
			}
			take := func(key string) {
				t.Helper()
				if _, err := conn.ExecContext(ctx, lock, arg(key)); err != nil {
					t.Fatal(err)
				}
			}
			// A lock of another key is not reported.
			take("other")
			seen := now()
			take("k0")
			clustertest.WaitRead(t, reads, "k0")
			if _, err := conn.ExecContext(ctx, unlock, arg("k0")); err != nil {
				t.Fatal(err)
			}
			o := clustertest.NextRelease(t, got, "k0", &probes)
			if r := o.V.Ext().Release; r.How != history.ReleaseDeleted || o.V.Backend != backend || r.At < seen || r.At > o.At ||
				len(o.V.Ext().Nodes) != 1 || o.V.Ext().Nodes[0] != s.node {
				t.Fatalf("a release observed as %+v %+v (session %d, taken at %v)", *o.V, *r, backend, seen)
			}
			seen = now()
			take("k1")
			clustertest.WaitRead(t, reads, "k1")
			if ids, err := c.KillSessions(ctx, clusters.SessionName(3)); err != nil || len(ids) != 1 || ids[0] != backend {
				t.Fatalf("KillSessions: %v, %v", ids, err)
			}
			o = clustertest.NextRelease(t, got, "k1", &probes)
			if r := o.V.Ext().Release; r.How != history.ReleaseSessionEnded || o.V.Backend != backend || r.At < seen || r.At > o.At ||
				r.Lease == "" || o.V.Ext().Detail == "" {
				t.Fatalf("an ended session's lock observed as %+v %+v (session %d, taken at %v)", *o.V, *r, backend, seen)
			}
			conn.Close()
			// A session its client closes lets go of its lock.
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			take("k0")
			clustertest.WaitRead(t, reads, "k0")
			conn.Raw(func(any) error { return driver.ErrBadConn }) // close it for good, not back to the pool
			conn.Close()
			o = clustertest.NextRelease(t, got, "k0", &probes)
			if r := o.V.Ext().Release; r.How != history.ReleaseDeleted || !strings.HasSuffix(o.V.Ext().Detail, "closed by its client") {
				t.Fatalf("a closed session's lock observed as %+v %+v", *o.V, *r)
			}
			// Probes keep coming, and nothing else: the ended session's
			// other lock was not a lock key's.
			deadline := time.After(30 * time.Second)
			for probes < 3 {
				var o clustertest.Observation
				select {
				case o = <-got:
				case <-deadline:
					t.Fatalf("%d probes observed in 30 s", probes)
				}
				if !o.V.Ext().Release.Probe {
					t.Fatalf("observed %q %+v after the session ended", o.Key, *o.V.Ext().Release)
				}
				if o.V.Ext().Release.Lag <= 0 || o.V.Ext().Release.Lag > 5*time.Second {
					t.Fatalf("probe lag %v", o.V.Ext().Release.Lag)
				}
				t.Logf("probe lag %v", o.V.Ext().Release.Lag)
				probes++
			}
		})
	}
}

// TestMariaDBRowLockObserver: mysql-for-update's row locks, which MariaDB
// lists only in SHOW ENGINE INNODB STATUS: a committed row lock is
// deleted, naming its session; and a server whose status stops listing
// row locks (innodb_status_output_locks off, as after a restart) is set
// to list them again before any holder is taken for gone.
func TestMariaDBRowLockObserver(t *testing.T) {
	needMariaDB(t)
	ctx := context.Background()
	c := NewMariaDB(Config{Workers: 1, LogDir: t.TempDir()})
	if err := c.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Teardown(ctx)
	db, err := sql.Open("mysql", MariaDBDSN(c.Addr(), clusters.SessionName(2)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE lockcheck_for_update (name varchar(191) PRIMARY KEY) ENGINE=InnoDB",
		"INSERT INTO lockcheck_for_update (name) VALUES ('k0'), ('k1')"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	got, reads, now := clustertest.WatchReleases(t, c, "k0", "k1")
	probes := 0
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var session int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&session); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	take := func(key string) {
		t.Helper()
		exec("BEGIN")
		exec("SELECT name FROM lockcheck_for_update WHERE name = ? FOR UPDATE", key)
		clustertest.WaitRead(t, reads, key)
	}
	take("k0")
	committed := now()
	exec("COMMIT")
	o := clustertest.NextRelease(t, got, "k0", &probes)
	if r := o.V.Ext().Release; r.How != history.ReleaseDeleted || o.V.Backend != session || r.At > o.At {
		t.Fatalf("a committed row lock observed as %+v %+v (session %d, committed at %v)", *o.V, *r, session, committed)
	}
	take("k1")
	if _, err := db.ExecContext(ctx, "SET GLOBAL innodb_status_output_locks = OFF"); err != nil {
		t.Fatal(err)
	}
	off := now()
	// Two probes sent after the setting went off: samples after it ran,
	// and none may have taken k1's holder for gone.
	for seen := 0; seen < 2; {
		select {
		case o := <-got:
			r := o.V.Ext().Release
			if !r.Probe {
				t.Fatalf("%q %+v %+v observed while its holder held it", o.Key, *o.V, *r)
			}
			if r.At > off {
				seen++
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no probes in 15 s")
		}
	}
	rolledBack := now()
	exec("ROLLBACK")
	o = clustertest.NextRelease(t, got, "k1", &probes)
	if r := o.V.Ext().Release; r.How != history.ReleaseDeleted || o.V.Backend != session || o.At < rolledBack {
		t.Fatalf("a rolled back row lock observed as %+v %+v at %v (rolled back at %v)", *o.V, *r, o.At, rolledBack)
	}
}
