package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/lockcheck/lockcheck/clusters"
)

func needPostgres(t testing.TB) {
	t.Helper()
	if _, err := LookPostgres(); err != nil {
		t.Skip(err)
	}
}

func needMariaDB(t testing.TB) {
	t.Helper()
	if _, err := LookMariaDB(); err != nil {
		t.Skip(err)
	}
}

// startSQL starts a database topology for workers after need says its
// server is here, and tears it down when the test ends.
func startSQL(t *testing.T, need func(testing.TB), newDB func(Config) *DB, workers int) *DB {
	t.Helper()
	need(t)
	c := newDB(Config{Workers: workers, LogDir: t.TempDir()})
	if err := c.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Teardown(context.Background()) })
	return c
}

// sqlConn is a client of dsn and one session of it, closed when the test
// ends.
func sqlConn(t *testing.T, driver, dsn string) (*sql.DB, *sql.Conn) {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return db, conn
}

// sqlServers are the database topologies under test, with how a client
// connects to them.
var sqlServers = []struct {
	name, node, driver string
	need               func(testing.TB)
	new                func(Config) *DB
	dsn                func(addr, app string) string
}{
	{"postgres", "pg0", "pgx", needPostgres, NewPostgres, PostgresURL},
	{"mariadb", "maria0", "mysql", needMariaDB, NewMariaDB, MariaDBDSN},
}

// TestSQLDBSetupTeardown starts each database, connects through a
// worker's proxy, ends a named session, kills and restarts the server, and
// checks that Teardown leaves no process of it running.
func TestSQLDBSetupTeardown(t *testing.T) {
	for _, s := range sqlServers {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			c := startSQL(t, s.need, s.new, 2)
			db, conn := sqlConn(t, s.driver, s.dsn(c.LockAddrs(1)[0], clusters.SessionName(7)))
			if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(new(int)); err != nil {
				t.Fatal(err)
			}
			ended, err := c.KillSessions(ctx, clusters.SessionName(7))
			if err != nil || len(ended) != 1 {
				t.Fatalf("KillSessions: %v, %v", ended, err)
			}
			if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(new(int)); err == nil {
				t.Fatal("a terminated session still answers")
			}
			conn.Close()
			if err := c.Kill(ctx, s.node); err != nil {
				t.Fatal(err)
			}
			if err := c.Restart(ctx, s.node); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRowContext(ctx, "SELECT 1").Scan(new(int)); err != nil {
				t.Fatalf("after restart: %v", err)
			}
			pids := c.Pids()
			for _, k := range clusters.Children(pids[s.node]) {
				pids[s.node+" child "+strconv.Itoa(k)] = k
			}
			if err := c.Teardown(ctx); err != nil {
				t.Fatal(err)
			}
			assertGone(t, pids)
			if _, err := os.Stat(c.DataDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("data dir %s left behind: %v", c.DataDir, err)
			}
		})
	}
}

// TestSQLDBFailedSetup makes setup fail after the server and the storage
// node have started (the proxy log cannot be created) and checks that
// nothing is left running and the data dir is gone.
func TestSQLDBFailedSetup(t *testing.T) {
	for _, s := range sqlServers {
		t.Run(s.name, func(t *testing.T) {
			s.need(t)
			logDir := t.TempDir()
			if err := os.Mkdir(filepath.Join(logDir, "toxiproxy.log"), 0o755); err != nil {
				t.Fatal(err)
			}
			c := s.new(Config{Workers: 1, LogDir: logDir})
			if err := c.Setup(context.Background()); err == nil {
				c.Teardown(context.Background())
				t.Fatal("setup succeeded")
			}
			if c.server.Current() == nil || c.storage == nil {
				t.Fatal("setup failed before the server started: the test no longer tests cleanup")
			}
			storage, ok := c.storage.(interface{ Current() *clusters.Proc })
			if !ok || storage.Current() == nil {
				t.Fatalf("the storage node %T has no process to look for", c.storage)
			}
			assertGone(t, map[string]int{s.node: c.server.Current().Pid(), "storage": storage.Current().Pid()})
			if _, err := os.Stat(c.DataDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("data dir %s left behind: %v", c.DataDir, err)
			}
		})
	}
}

// assertGone fails unless none of the named processes, nor any process of
// their groups, is left.
func assertGone(t *testing.T, pgids map[string]int) {
	t.Helper()
	for name, pid := range pgids {
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(-pid, 0) == nil || syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				out, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				t.Fatalf("%s (process group %d) still running: %s", name, pid, strings.ReplaceAll(string(out), "\x00", " "))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
