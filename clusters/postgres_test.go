package clusters

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func needPostgres(t testing.TB) {
	t.Helper()
	if _, err := LookPostgres(); err != nil {
		t.Skip(err)
	}
}

// TestPostgresSetupTeardown starts a server, connects through a worker's
// proxy, ends a named session, kills and restarts the server, and checks
// that Teardown leaves no process of it running.
func TestPostgresSetupTeardown(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	c := NewPostgres(SQLDBConfig{Workers: 2, LogDir: t.TempDir()})
	if err := c.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Teardown(ctx)
	pids := c.Pids()
	conn, err := pgx.Connect(ctx, PostgresURL(c.LockAddrs(1)[0], SessionName(7)))
	if err != nil {
		t.Fatal(err)
	}
	var fsync string
	if err := conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil || fsync != "on" {
		t.Fatalf("fsync %q, %v", fsync, err)
	}
	ended, err := c.KillSessions(ctx, SessionName(7))
	if err != nil || len(ended) != 1 {
		t.Fatalf("KillSessions: %v, %v", ended, err)
	}
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(new(int)); err == nil {
		t.Fatal("a terminated session still answers")
	}
	if err := c.Kill(ctx, "pg0"); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(ctx, "pg0"); err != nil {
		t.Fatal(err)
	}
	if err := pgSelect1(ctx, c.LockAddrs(0)[0]); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	pids = c.Pids()
	for _, k := range children(pids["pg0"]) {
		pids["pg0 child "+strconv.Itoa(k)] = k
	}
	if len(pids) < 4 {
		t.Fatalf("want the postmaster, its children and the storage node, got %v", pids)
	}
	if err := c.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids)
}

// TestPostgresFailedSetup makes setup fail after the server and the
// storage node have started (the proxy log cannot be created) and checks
// that nothing is left running and the data dir is gone.
func TestPostgresFailedSetup(t *testing.T) {
	needPostgres(t)
	logDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(logDir, "toxiproxy.log"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewPostgres(SQLDBConfig{Workers: 1, LogDir: logDir})
	if err := c.Setup(context.Background()); err == nil {
		c.Teardown(context.Background())
		t.Fatal("setup succeeded")
	}
	if c.proc == nil || c.storage == nil {
		t.Fatal("setup failed before the server started: the test no longer tests cleanup")
	}
	assertGone(t, map[string]int{"pg0": c.proc.Pid(), "storage": c.storage.proc.Pid()})
	if _, err := os.Stat(c.tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir %s left behind: %v", c.tmp, err)
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
