package sqldb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// dbEngine is one database server process of an DB topology.
type dbEngine interface {
	// initialize creates the data directory under dir; log receives the
	// tool's output.
	initialize(ctx context.Context, dir string, log *os.File) error
	// start runs the server on port and returns once a client can run
	// SELECT 1; a port already taken is errPortInUse.
	start(ctx context.Context, port int, log *os.File) (*clusters.Proc, error)
	// stop shuts the server down cleanly, killing it after grace.
	stop(ctx context.Context, p *clusters.Proc, grace time.Duration) error
	// killSessions ends the sessions named name (see SessionKiller).
	killSessions(ctx context.Context, addr, name string) ([]int64, error)
	// login is what a worker logs in with.
	login() clusters.Login
}

// besideStopper is a dbEngine that starts a server of its own beside the
// lock node in initialize (PgBouncer's PostgreSQL); stopBeside stops it
// when the lock node never started.
type besideStopper interface {
	stopBeside(ctx context.Context, grace time.Duration) error
}

// dbServer is what every dbEngine keeps: the topology's config, the
// server's binary (postgres: its directory), its data directory and the
// user it runs as (nil: the controller's).
type dbServer struct {
	cfg  Config
	bin  string
	data string
	cred *syscall.Credential
	// as is the login of a server someone else runs, which the session
	// kill logs in with; nil for lockcheck's own server.
	as *clusters.Login
}

// Config describes a database lock service: one server and a redis
// storage node.
type Config struct {
	// Workers is the number of worker slots; each slot gets its own proxy
	// to the server.
	Workers int
	// LogDir receives the server's log and the proxies' log.
	LogDir string
	// SessionTimeout is how long the server waits on a silent session
	// before it ends it and releases its locks: an idle transaction, an
	// idle session, an unanswered TCP keepalive.
	SessionTimeout time.Duration
}

// DB is a Cluster of one database server (PostgreSQL or MariaDB, a
// local process in its own process group, its data in a temporary
// directory made by TempDir, so a later run sweeps it after a SIGKILL) and a redis-server storage node. Every worker slot reaches the
// server through its own Toxiproxy proxy.
type DB struct {
	cfg     Config
	kind    string // "postgres", "mariadb": the temp dir prefix
	node    string // the node's name, e.g. "pg0"
	engine  dbEngine
	storage clusters.StorageNode
	// server is the server's process and its log, which every start
	// appends to.
	server clusters.ServerProc
	clusters.Local
	port int // under mu
	// Faults kills the server (its proxies stopped, SIGKILL to its process
	// group and its children) and restarts it on its old port (it recovers
	// from its write-ahead log), pauses and resumes it with its children
	// (SIGSTOP, SIGCONT), cuts and heals a worker slot's link to it.
	clusters.Faults
}

var (
	_ clusters.Cluster       = (*DB)(nil)
	_ clusters.Topology      = (*DB)(nil)
	_ clusters.Killer        = (*DB)(nil)
	_ clusters.Partitioner   = (*DB)(nil)
	_ clusters.Pauser        = (*DB)(nil)
	_ clusters.SessionKiller = (*DB)(nil)
)

// newSQLDB returns an unstarted topology of the server engine makes
// (from the config with its defaults), called node.
func newSQLDB(kind, node string, engine func(Config) dbEngine, cfg Config) *DB {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 2 * time.Second
	}
	c := &DB{cfg: cfg, kind: kind, node: node, engine: engine(cfg), Local: clusters.Local{NodeSet: clusters.NodeSet{Kind: "lock node"}}}
	c.Faults = clusters.FaultsOf(&c.NodeSet)
	return c
}

// newSQLTopology is a Service's New for a database topology: newTopology
// with the test's worker slots, log directory and session timeout.
func newSQLTopology(newTopology func(Config) *DB) func(clusters.TopologyConfig) clusters.Topology {
	return func(cfg clusters.TopologyConfig) clusters.Topology {
		return newTopology(Config{Workers: cfg.Workers, LogDir: cfg.LogDir, SessionTimeout: sessionTimeout(cfg.Lease)})
	}
}

// sessionTimeout is the server's silent-session bound for a test's lease:
// twice the lease, at least one second, so a pause of three leases (the
// default fault) outlasts it.
func sessionTimeout(lease time.Duration) time.Duration {
	return max(2*lease, time.Second)
}

// Setup initialises the data directory, starts the server and the storage
// node and the proxies, and returns once the server runs SELECT 1. On error,
// whatever was started is stopped and the data directory removed.
func (c *DB) Setup(ctx context.Context) (err error) {
	if err := clusters.LookStorage(); err != nil {
		return err
	}
	// The run's directory is this process's, with its owner record, so
	// the sweep of a later run removes it (server data and all) after a
	// SIGKILL; the server gets a directory of its own inside it, which
	// initialize gives to the server's user when lockcheck runs as root.
	return c.SetUp(ctx, c.kind+"-", c.Teardown, func() (err error) {
		serverDir := filepath.Join(c.DataDir, c.node)
		if err := os.Mkdir(serverDir, 0o700); err != nil {
			return fmt.Errorf("create %s dir: %w", c.node, err)
		}
		// Run as root, the server runs as its own user, who must pass through
		// (not list) the run's directory to reach its own.
		if os.Geteuid() == 0 {
			if err := os.Chmod(c.DataDir, 0o711); err != nil {
				return fmt.Errorf("open data dir to the server's user: %w", err)
			}
		}
		if err := os.MkdirAll(c.cfg.LogDir, 0o755); err != nil {
			return fmt.Errorf("create log dir: %w", err)
		}
		log, err := os.OpenFile(filepath.Join(c.cfg.LogDir, c.node+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open %s log: %w", c.node, err)
		}
		c.server.Started(nil, log)
		if err := c.engine.initialize(ctx, serverDir, log); err != nil {
			return err
		}
		if err := c.startServer(ctx, true); err != nil {
			return err
		}
		// Open the session-kill connection now, so that a kill lands within
		// a query's round trip, not after a connection's handshake. A server
		// that has just answered SELECT 1 on a loaded machine can still miss a
		// 2 s connect timeout, so this tries again for a while.
		if err := clusters.Poll(ctx, 30*time.Second, func() error {
			_, err := c.engine.killSessions(ctx, c.Addr(), "lockcheck-none")
			return err
		}, "the session-kill connection to "+c.node); err != nil {
			return fmt.Errorf("connect to %s for session kills: %w", c.node, err)
		}
		if c.storage, err = clusters.StartStorage(ctx, c.DataDir, c.cfg.LogDir); err != nil {
			return err
		}
		if err := c.OpenProxies(c.cfg.LogDir); err != nil {
			return err
		}
		restart := func(ctx context.Context) error { return c.startServer(ctx, false) }
		return c.NodeSet.Link(c.Proxies, c.cfg.Workers, []clusters.SetNode{{Name: c.node, Addr: c.Addr(),
			Server: clusters.LocalServer{Name: c.node, Proc: &c.server, Start: restart, Tree: true}}})
	})
}

// startServer starts the server, on a fresh free port when fresh (retried
// when the port is taken meanwhile), else on its old port.
func (c *DB) startServer(ctx context.Context, fresh bool) error {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		c.Mu.Lock()
		if fresh {
			p, err := clusters.FreePort()
			if err != nil {
				c.Mu.Unlock()
				return err
			}
			c.port = p
		}
		port := c.port
		c.Mu.Unlock()
		log := c.server.LogFile()
		proc, err := c.engine.start(ctx, port, log)
		if err == nil {
			c.server.Started(proc, log)
			return nil
		}
		lastErr = fmt.Errorf("start %s on 127.0.0.1:%d (log %s): %w", c.node, port, log.Name(), err)
		if !fresh || !errors.Is(err, clusters.ErrPortInUse) {
			return lastErr
		}
	}
	return lastErr
}

// Addr returns the server's own address (not a proxy's).
func (c *DB) Addr() string {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return "127.0.0.1:" + strconv.Itoa(c.port)
}

var _ clusters.LoginNeeder = (*DB)(nil)

// Login implements LoginNeeder: the database's user and database.
func (c *DB) Login() clusters.Login { return c.engine.login() }

// Nodes lists the database server, then the storage node.
func (c *DB) Nodes() []clusters.Node {
	return append([]clusters.Node{{Name: c.node, Role: "lock", Addr: c.Addr()}}, clusters.StorageNodeOf(c.storage)...)
}

// LockAddrs returns worker slot's proxy to the server.
func (c *DB) LockAddrs(slot int) []string { return c.NodeSet.LockAddrs(slot) }

// StorageAddr returns the storage node's address.
func (c *DB) StorageAddr() string { return c.storage.Addr() }

// Pids returns the pids of the running server processes, by node name.
func (c *DB) Pids() map[string]int {
	pids := clusters.StoragePid(make(map[string]int), c.storage)
	if pid := c.server.Pid(); pid != 0 {
		pids[c.node] = pid
	}
	return pids
}

// KillSessions ends the sessions named name, through a direct connection
// to the server (not a worker's proxy).
func (c *DB) KillSessions(ctx context.Context, name string) ([]int64, error) {
	return c.engine.killSessions(ctx, c.Addr(), name)
}

// Teardown stops the proxies, the server and the storage node, and removes
// the data directory. It is idempotent.
func (c *DB) Teardown(ctx context.Context) error {
	if !c.MarkTornDown() {
		return nil
	}
	c.CloseProxies()
	var errs []error
	if p := c.server.Current(); p != nil {
		errs = append(errs, c.engine.stop(ctx, p, 5*time.Second))
	} else if b, ok := c.engine.(besideStopper); ok {
		// The server never started; what initialize started beside it
		// still runs.
		errs = append(errs, b.stopBeside(ctx, 5*time.Second))
	}
	c.server.CloseLog()
	errs = append(errs, clusters.StopStorage(ctx, c.storage))
	return errors.Join(append(errs, c.RemoveTemp(c.kind+"-"))...)
}

// serverUser is who a database server runs as: nil (the controller's own
// user) unless the controller runs as root, which both PostgreSQL and
// MariaDB refuse; then the system user name that their Debian packages
// create.
func serverUser(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("running as root, the server must run as the system user %q, which is missing (install its Debian package): %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// chownTree gives dir and everything under it to cred's user (nothing when
// cred is nil).
func chownTree(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
}

// startDBServer starts argv as the database server called name (as
// cred's user, in dir, its output appended to log) and waits at most
// timeout until ready answers at its address on port; a server that does
// not is killed with its children, and errPortInUse when its log says one
// of bindErrs since this start.
func startDBServer(ctx context.Context, name string, argv []string, dir string, log *os.File, cred *syscall.Credential,
	port int, timeout time.Duration, ready func(ctx context.Context, addr string) error, bindErrs ...string) (*clusters.Proc, error) {
	logStart, _ := log.Seek(0, 2)
	proc, err := clusters.StartProcAs(ctx, name, argv, nil, dir, log, cred)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	err = waitReady(ctx, proc, timeout, func(ctx context.Context) error { return ready(ctx, addr) })
	if err != nil {
		_ = clusters.KillTree(proc)
		if logSays(log.Name(), logStart, bindErrs...) {
			return nil, clusters.ErrPortInUse
		}
		return nil, err
	}
	return proc, nil
}

// stopDBServer continues p and its children (in case they are paused),
// asks p to shut down with term, and kills whatever is left (see
// killTree) after grace, or at once when term fails.
func stopDBServer(ctx context.Context, p *clusters.Proc, grace time.Duration, term func() error) error {
	if p.Exited() {
		return nil
	}
	_ = clusters.SignalTree(p, syscall.SIGCONT)
	if err := term(); err != nil {
		return clusters.KillTree(p)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.Done():
	case <-t.C:
	case <-ctx.Done():
	}
	// Whatever is left (a server that did not stop in time, and its
	// children) is killed.
	return clusters.KillTree(p)
}

// waitReady polls ready every 20 ms until it succeeds, the process exits,
// or timeout passes.
func waitReady(ctx context.Context, proc *clusters.Proc, timeout time.Duration, ready func(ctx context.Context) error) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		if proc.Exited() {
			return errors.New("server exited during start-up")
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		lastErr = ready(cctx)
		cancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("not ready within %s: %w", timeout, lastErr)
}
