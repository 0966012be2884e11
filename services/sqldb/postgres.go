package sqldb

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockcheck/lockcheck/clusters"
)

// PostgresUser is the database role the cluster creates; it owns every
// database object and needs no password (trust on 127.0.0.1).
const PostgresUser = "lockcheck"

// PostgresDB is the database workers connect to.
const PostgresDB = "postgres"

// postgresGlob is where Debian installs the server binaries, one directory
// per major version.
const postgresGlob = "/usr/lib/postgresql/*/bin"

// LookPostgres returns the directory holding initdb and postgres: the
// newest /usr/lib/postgresql/N/bin, else the directory of initdb in PATH,
// or an error naming the Debian package to install.
func LookPostgres() (string, error) {
	dirs, _ := filepath.Glob(postgresGlob)
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "postgres")) && isExec(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && isExec(filepath.Join(filepath.Dir(p), "postgres")) {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("%w: postgres and initdb not found in %s or PATH: install the Debian package postgresql-15 (scripts/deps.sh does)", clusters.ErrMissingBinary, postgresGlob)
}

func pgVersion(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// NewPostgres returns an unstarted PostgreSQL topology: one server "pg0"
// and a redis storage node.
func NewPostgres(cfg Config) *DB {
	return newSQLDB("postgres", "pg0", func(cfg Config) dbEngine { return &postgresEngine{dbServer: dbServer{cfg: cfg}} }, cfg)
}

// postgresEngine runs one PostgreSQL server.
type postgresEngine struct {
	dbServer

	// admin is the session-kill connection, kept open so a kill lands
	// within a millisecond or two, not after a new connection's handshake.
	mu    sync.Mutex
	admin *pgx.Conn
}

// PostgresURL returns the connection string of the cluster's database at
// addr (a proxy's or the server's), with application name app.
func PostgresURL(addr, app string) string {
	u := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&connect_timeout=2", PostgresUser, addr, PostgresDB)
	if app != "" {
		u += "&application_name=" + app
	}
	return u
}

// closeAdmin closes the session kill's connection.
func (e *postgresEngine) closeAdmin() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.admin == nil {
		return nil
	}
	err := e.admin.Close(context.Background())
	e.admin = nil
	return err
}

// url returns the connection string of the server at addr for app:
// PostgresURL, or with the login of a server someone else runs.
func (e *postgresEngine) url(addr, app string) string {
	if e.as == nil {
		return PostgresURL(addr, app)
	}
	u := url.URL{Scheme: "postgres", Host: addr, Path: "/" + e.as.Database, User: url.User(e.as.User),
		RawQuery: "connect_timeout=2&application_name=" + url.QueryEscape(app)}
	if e.as.Password != "" {
		u.User = url.UserPassword(e.as.User, e.as.Password)
	}
	return u.String()
}

func (e *postgresEngine) initialize(ctx context.Context, dir string, log *os.File) error {
	var err error
	if e.bin, err = LookPostgres(); err != nil {
		return err
	}
	if e.cred, err = serverUser("postgres"); err != nil {
		return err
	}
	if err := chownTree(dir, e.cred); err != nil {
		return fmt.Errorf("give the data dir to the postgres user: %w", err)
	}
	e.data = filepath.Join(dir, "data")
	return initFromTemplate(ctx, "postgres", filepath.Join(e.bin, "postgres"), e.data, e.cred, func(ctx context.Context) error {
		// --no-sync only skips flushing initdb's own files; the server
		// runs with fsync on.
		cmd := exec.CommandContext(ctx, filepath.Join(e.bin, "initdb"), "-D", e.data, "-U", PostgresUser,
			"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: e.cred}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("initdb %s (log %s): %w", e.data, log.Name(), err)
		}
		return nil
	})
}

// settings are the server's settings, passed as -c options.
func (e *postgresEngine) settings() []string {
	timeout := strconv.FormatInt(e.cfg.SessionTimeout.Milliseconds(), 10)
	conns := strconv.Itoa(3*e.cfg.Workers + 20)
	return []string{
		"listen_addresses=127.0.0.1",
		"unix_socket_directories=",
		"fsync=on",
		"synchronous_commit=on",
		"full_page_writes=on",
		"max_connections=" + conns,
		// register-in-db prepares the transaction that holds its lock.
		"max_prepared_transactions=" + conns,
		"shared_buffers=16MB",
		"logging_collector=off",
		"log_line_prefix=%m [%p] %a ",
		// A session that holds a lock and goes silent is ended within
		// the session timeout: in a transaction, idle, or behind a dead
		// TCP connection.
		"idle_in_transaction_session_timeout=" + timeout,
		"idle_session_timeout=" + timeout,
		"tcp_keepalives_idle=1",
		"tcp_keepalives_interval=1",
		"tcp_keepalives_count=2",
		"tcp_user_timeout=" + timeout,
	}
}

func (e *postgresEngine) start(ctx context.Context, port int, log *os.File) (*clusters.Proc, error) {
	argv := []string{filepath.Join(e.bin, "postgres"), "-D", e.data, "-p", strconv.Itoa(port)}
	for _, kv := range e.settings() {
		argv = append(argv, "-c", kv)
	}
	return startDBServer(ctx, "pg0", argv, e.data, log, e.cred, port, 30*time.Second, pgSelect1, "could not bind", "Address already in use")
}

// pgSelect1 connects to addr and runs SELECT 1.
func pgSelect1(ctx context.Context, addr string) error {
	conn, err := pgx.Connect(ctx, PostgresURL(addr, "lockcheck-setup"))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// stop asks for a fast shutdown (SIGINT to the postmaster: sessions are
// ended, a checkpoint written) and kills the process group after grace.
func (e *postgresEngine) stop(ctx context.Context, p *clusters.Proc, grace time.Duration) error {
	e.mu.Lock()
	if e.admin != nil {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_ = e.admin.Close(cctx)
		cancel()
		e.admin = nil
	}
	e.mu.Unlock()
	return stopDBServer(ctx, p, grace, func() error {
		if err := syscall.Kill(p.Pid(), syscall.SIGINT); err != nil && err != syscall.ESRCH {
			return err
		}
		return nil
	})
}

func (e *postgresEngine) killSessions(ctx context.Context, addr, name string) (ids []int64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.admin == nil || e.admin.IsClosed() {
		if e.admin, err = pgx.Connect(ctx, e.url(addr, "lockcheck-nemesis")); err != nil {
			return nil, fmt.Errorf("connect to pg0 to end sessions: %w", err)
		}
		// The session timeouts are for lock clients, not for this one.
		if _, err = e.admin.Exec(ctx, "SET idle_session_timeout = 0"); err != nil {
			return nil, fmt.Errorf("configure the session-kill connection: %w", err)
		}
	}
	conn := e.admin
	defer func() {
		if err != nil {
			_ = conn.Close(context.WithoutCancel(ctx))
			e.admin = nil
		}
	}()
	// OFFSET 0 keeps the filter inside the subquery, so only the named
	// sessions reach pg_terminate_backend.
	rows, err := conn.Query(ctx, `SELECT pid FROM (SELECT pid FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid() OFFSET 0) s WHERE pg_terminate_backend(pid)`, name)
	if err != nil {
		return nil, fmt.Errorf("pg_terminate_backend of %s: %w", name, err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("pg_terminate_backend of %s: %w", name, err)
	}
	out := make([]int64, len(pids))
	for i, p := range pids {
		out[i] = int64(p)
	}
	return out, nil
}

// logSays reports whether the log at path, from offset on, contains one of
// the phrases.
func logSays(path string, offset int64, phrases ...string) bool {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return false
	}
	for _, p := range phrases {
		if strings.Contains(string(b[offset:]), p) {
			return true
		}
	}
	return false
}

// login implements dbEngine: the role initdb made, trusted on 127.0.0.1.
func (e *postgresEngine) login() clusters.Login {
	return clusters.Login{User: PostgresUser, Database: PostgresDB}
}
