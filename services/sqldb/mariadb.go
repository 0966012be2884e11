package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lockcheck/lockcheck/clusters"
)

// wholeSeconds rounds d to whole seconds, at least one: MariaDB's
// timeouts are set in seconds.
func wholeSeconds(d time.Duration) time.Duration {
	return max(time.Second, d.Round(time.Second))
}

// MariaDBDatabase is the database the cluster creates for the workers.
const MariaDBDatabase = "lockcheck"

// LookMariaDB returns the path of mariadbd (in PATH or /usr/sbin), checking
// that mariadb-install-db is there too, or an error naming the Debian
// package to install.
func LookMariaDB() (string, error) {
	bin, err := exec.LookPath("mariadbd")
	if err != nil && isExec("/usr/sbin/mariadbd") {
		bin, err = "/usr/sbin/mariadbd", nil
	}
	if err == nil {
		if _, err = lookInstallDB(); err == nil {
			return bin, nil
		}
	}
	return "", fmt.Errorf("%w: mariadbd or mariadb-install-db not found: install the Debian package mariadb-server (scripts/deps.sh does)", clusters.ErrMissingBinary)
}

func lookInstallDB() (string, error) {
	if p, err := exec.LookPath("mariadb-install-db"); err == nil {
		return p, nil
	}
	if isExec("/usr/bin/mariadb-install-db") {
		return "/usr/bin/mariadb-install-db", nil
	}
	return "", clusters.ErrMissingBinary
}

// NewMariaDB returns an unstarted MariaDB topology: one server "maria0"
// and a redis storage node.
func NewMariaDB(cfg Config) *DB {
	return newSQLDB("mariadb", "maria0", func(cfg Config) dbEngine { return &mariadbEngine{dbServer: dbServer{cfg: cfg}} }, cfg)
}

// mariadbEngine runs one mariadbd.
type mariadbEngine struct {
	dbServer
	dir string

	mu    sync.Mutex
	admin *sql.DB // the session-kill connection pool (one connection)
}

// closeAdmin closes the session kill's connection.
func (e *mariadbEngine) closeAdmin() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.admin == nil {
		return nil
	}
	err := e.admin.Close()
	e.admin = nil
	return err
}

// dsn returns the data source name of the server at addr for app:
// MariaDBDSN, or with the login of a server someone else runs.
func (e *mariadbEngine) dsn(addr, app string) string {
	if e.as == nil {
		return MariaDBDSN(addr, app)
	}
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = e.as.User, e.as.Password, "tcp", addr, e.as.Database
	c.Timeout = 2 * time.Second
	c.ConnectionAttributes = "program_name:" + app
	return c.FormatDSN()
}

// MariaDBDSN returns the data source name of the cluster's database at
// addr, with the connection attribute program_name set to app.
func MariaDBDSN(addr, app string) string {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = "root", "tcp", addr, MariaDBDatabase
	c.Timeout = 2 * time.Second
	if app != "" {
		c.ConnectionAttributes = "program_name:" + app
	}
	return c.FormatDSN()
}

func (e *mariadbEngine) initialize(ctx context.Context, dir string, log *os.File) error {
	var err error
	if e.bin, err = LookMariaDB(); err != nil {
		return err
	}
	installDB, err := lookInstallDB()
	if err != nil {
		return err
	}
	if e.cred, err = serverUser("mysql"); err != nil {
		return err
	}
	e.dir, e.data = dir, filepath.Join(dir, "data")
	if err := chownTree(dir, e.cred); err != nil {
		return fmt.Errorf("give the data dir to the mysql user: %w", err)
	}
	return initFromTemplate(ctx, "mariadb", e.bin, e.data, e.cred, func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, installDB, "--no-defaults", "--datadir="+e.data,
			"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
			"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M")
		cmd.Stdout, cmd.Stderr = log, log
		// Its server's scratch files go into the run's directory, which
		// the mysql user can write (the system's TMPDIR may be root's).
		cmd.Env = append(os.Environ(), "TMPDIR="+e.dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: e.cred}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("mariadb-install-db %s (log %s): %w", e.data, log.Name(), err)
		}
		return nil
	})
}

func (e *mariadbEngine) start(ctx context.Context, port int, log *os.File) (*clusters.Proc, error) {
	secs := strconv.Itoa(int(wholeSeconds(e.cfg.SessionTimeout) / time.Second))
	argv := []string{e.bin, "--no-defaults", "--datadir=" + e.data,
		"--bind-address=127.0.0.1", "--port=" + strconv.Itoa(port),
		"--socket=" + filepath.Join(e.dir, "mysqld.sock"), "--pid-file=" + filepath.Join(e.dir, "mysqld.pid"),
		"--tmpdir=" + e.dir,
		"--skip-name-resolve", "--skip-log-bin",
		// Durability: the redo log is flushed at every commit.
		"--innodb-flush-log-at-trx-commit=1", "--innodb-doublewrite=1",
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
		"--max-connections=" + strconv.Itoa(3*e.cfg.Workers+20),
		// The session-kill nemesis finds sessions by program_name.
		"--performance-schema=ON", "--performance-schema-session-connect-attrs-size=512",
		// A silent session is ended within the session timeout.
		"--wait-timeout=" + secs, "--interactive-timeout=" + secs, "--idle-transaction-timeout=" + secs,
		"--net-read-timeout=" + secs, "--net-write-timeout=" + secs,
	}
	return startDBServer(ctx, "maria0", argv, e.dir, log, e.cred, port, 60*time.Second, mariadbReady,
		"Address already in use", "Can't start server: Bind")
}

// mariadbReady connects to addr, runs SELECT 1 and creates the workers'
// database if it is missing.
func mariadbReady(ctx context.Context, addr string) error {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.Timeout = "root", "tcp", addr, time.Second
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+MariaDBDatabase)
	return err
}

// stop asks for a clean shutdown (SIGTERM) and kills the process group
// after grace.
func (e *mariadbEngine) stop(ctx context.Context, p *clusters.Proc, grace time.Duration) error {
	e.mu.Lock()
	if e.admin != nil {
		_ = e.admin.Close()
		e.admin = nil
	}
	e.mu.Unlock()
	return stopDBServer(ctx, p, grace, func() error { return p.Signal(syscall.SIGTERM) })
}

func (e *mariadbEngine) killSessions(ctx context.Context, addr, name string) ([]int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.admin == nil {
		db, err := sql.Open("mysql", e.dsn(addr, "lockcheck-nemesis")+"&wait_timeout=86400")
		if err != nil {
			return nil, fmt.Errorf("connect to %s to end sessions: %w", addr, err)
		}
		db.SetMaxOpenConns(1)
		// The sessions are found by their program_name, which only the
		// performance schema keeps (a server someone else runs may have
		// it off, MariaDB's default).
		var on int
		if err := db.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
			db.Close()
			return nil, fmt.Errorf("connect to %s to end sessions: %w", addr, err)
		}
		if on != 1 {
			db.Close()
			return nil, fmt.Errorf("end the sessions of %s on %s: the server runs with performance_schema off, and only it names a session's program (start the server with performance_schema=ON)", name, addr)
		}
		e.admin = db
	}
	rows, err := e.admin.QueryContext(ctx, `SELECT DISTINCT PROCESSLIST_ID FROM performance_schema.session_connect_attrs
		WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE = ? AND PROCESSLIST_ID <> CONNECTION_ID()`, name)
	if err != nil {
		return nil, fmt.Errorf("find the sessions of %s: %w", name, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find the sessions of %s: %w", name, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	var ended []int64
	for _, id := range ids {
		if _, err := e.admin.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(id, 10)); err == nil {
			ended = append(ended, id)
		}
	}
	return ended, nil
}

// login implements dbEngine: root with no password (the server listens on
// 127.0.0.1 only) and the database the cluster creates.
func (e *mariadbEngine) login() clusters.Login {
	return clusters.Login{User: "root", Database: MariaDBDatabase}
}
