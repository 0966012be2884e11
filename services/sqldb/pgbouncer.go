package sqldb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockcheck/lockcheck/clusters"
)

// The two PgBouncer services: PostgreSQL behind PgBouncer in one pool
// mode each. The PostgreSQL designs run on either unchanged (--service);
// PgBouncer's documentation lists session advisory locks among the
// features transaction pooling breaks.
// pgbouncerPaths are where Debian's pgbouncer package puts the binary,
// tried after PATH.
var pgbouncerPaths = []string{"/usr/sbin/pgbouncer"}

// LookPgBouncer returns the path of the pgbouncer binary, or an error
// naming the Debian package to install.
func LookPgBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range pgbouncerPaths {
		if isExec(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: pgbouncer not found in PATH or /usr/sbin: install the Debian package pgbouncer (scripts/deps.sh does)", clusters.ErrMissingBinary)
}

// PgBouncerVersion returns the first line of `pgbouncer --version`
// ("PgBouncer 1.18.0"), or "" when it cannot be run.
func PgBouncerVersion() string {
	bin, err := LookPgBouncer()
	if err != nil {
		return ""
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// NewPgBouncer returns an unstarted topology of one PostgreSQL server
// behind PgBouncer in pool mode mode ("transaction" or "session"): the lock
// node "pgb0" is PgBouncer, which the workers' proxies reach and the
// faults strike; PostgreSQL runs beside it, reached only by PgBouncer (and
// by the session-kill connection).
func NewPgBouncer(cfg Config, mode string) *DB {
	return newSQLDB("pgbouncer", "pgb0", func(cfg Config) dbEngine {
		return &pgbouncerEngine{pg: postgresEngine{dbServer: dbServer{cfg: cfg}}, mode: mode}
	}, cfg)
}

// pgbouncerEngine is PgBouncer in front of a PostgreSQL server of its own,
// which it starts in initialize and stops after PgBouncer.
type pgbouncerEngine struct {
	pg   postgresEngine
	mode string
	bin  string // the pgbouncer binary
	dir  string // holds the config, the user list and PostgreSQL's data
	// pgProc is the PostgreSQL server on pgPort, its output in pgLog.
	pgProc *clusters.Proc
	pgPort int
	pgLog  *os.File
}

func (e *pgbouncerEngine) pgAddr() string { return "127.0.0.1:" + strconv.Itoa(e.pgPort) }

// initialize makes PostgreSQL's data directory and starts it on a free
// port, its log beside PgBouncer's as pg0.log.
func (e *pgbouncerEngine) initialize(ctx context.Context, dir string, log *os.File) error {
	var err error
	if e.bin, err = LookPgBouncer(); err != nil {
		return err
	}
	e.dir = dir
	if err := e.pg.initialize(ctx, dir, log); err != nil {
		return err
	}
	if e.pgLog, err = os.OpenFile(filepath.Join(e.pg.cfg.LogDir, "pg0.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return fmt.Errorf("open pg0 log: %w", err)
	}
	for attempt := 0; attempt < 5; attempt++ {
		if e.pgPort, err = clusters.FreePort(); err != nil {
			return err
		}
		e.pgProc, err = e.pg.start(ctx, e.pgPort, e.pgLog)
		if !errors.Is(err, clusters.ErrPortInUse) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("start pg0 behind PgBouncer (log %s): %w", e.pgLog.Name(), err)
	}
	return nil
}

// config is PgBouncer's configuration for listening on port.
func (e *pgbouncerEngine) config(port int) string {
	workers := e.pg.cfg.Workers
	return fmt.Sprintf(`[databases]
%s = host=127.0.0.1 port=%d dbname=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
max_client_conn = %d
default_pool_size = %d
max_db_connections = %d
server_login_retry = 1
pidfile =
logfile =
`, PostgresDB, e.pgPort, PostgresDB, port, filepath.Join(e.dir, "userlist.txt"), e.mode,
		3*workers+20, 3*workers+10, 3*workers+10)
}

// start writes PgBouncer's config for port and runs it in the foreground
// (its log is its stderr), as PostgreSQL's user when lockcheck runs as
// root: PgBouncer refuses to run as root.
func (e *pgbouncerEngine) start(ctx context.Context, port int, log *os.File) (*clusters.Proc, error) {
	ini := filepath.Join(e.dir, "pgbouncer.ini")
	users := filepath.Join(e.dir, "userlist.txt")
	if err := os.WriteFile(users, []byte(strconv.Quote(PostgresUser)+` ""`+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write PgBouncer's user list: %w", err)
	}
	if err := os.WriteFile(ini, []byte(e.config(port)), 0o600); err != nil {
		return nil, fmt.Errorf("write PgBouncer's config: %w", err)
	}
	if cred := e.pg.cred; cred != nil {
		for _, f := range []string{ini, users} {
			if err := os.Chown(f, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("give %s to the postgres user: %w", f, err)
			}
		}
	}
	return startDBServer(ctx, "pgb0", []string{e.bin, ini}, e.dir, log, e.pg.cred, port, 30*time.Second,
		pgbouncerSelect1, "Address already in use")
}

// pgbouncerSelect1 runs SELECT 1 through PgBouncer at addr, in the simple
// protocol: in transaction mode a prepared statement may not outlive its
// transaction's server session.
func pgbouncerSelect1(ctx context.Context, addr string) error {
	conn, err := pgx.Connect(ctx, PostgresURL(addr, "lockcheck-setup")+"&default_query_exec_mode=simple_protocol")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// stop ends PgBouncer (SIGTERM: an immediate shutdown), then PostgreSQL.
func (e *pgbouncerEngine) stop(ctx context.Context, p *clusters.Proc, grace time.Duration) error {
	err := stopDBServer(ctx, p, grace, func() error {
		if err := syscall.Kill(p.Pid(), syscall.SIGTERM); err != nil && err != syscall.ESRCH {
			return err
		}
		return nil
	})
	return errors.Join(err, e.stopBeside(ctx, grace))
}

var _ besideStopper = (*pgbouncerEngine)(nil)

// stopBeside stops PostgreSQL (a fast shutdown) and closes its log.
func (e *pgbouncerEngine) stopBeside(ctx context.Context, grace time.Duration) error {
	var err error
	if e.pgProc != nil {
		err = e.pg.stop(ctx, e.pgProc, grace)
		e.pgProc = nil
	}
	if e.pgLog != nil {
		_ = e.pgLog.Close()
		e.pgLog = nil
	}
	return err
}

// killSessions ends the PostgreSQL sessions named name, on the server
// itself: behind a pooler they are PgBouncer's server sessions, which
// carry the application name of the client that last used them.
func (e *pgbouncerEngine) killSessions(ctx context.Context, _, name string) ([]int64, error) {
	return e.pg.killSessions(ctx, e.pgAddr(), name)
}

// login implements dbEngine: PostgreSQL's login, through a pooler.
func (e *pgbouncerEngine) login() clusters.Login {
	l := e.pg.login()
	l.Pooled = true
	return l
}
