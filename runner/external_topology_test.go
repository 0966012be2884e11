package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/servicetest"
	"github.com/lockcheck/lockcheck/services/sqldb"
)

// writeTopology writes a topology file into a temporary directory and
// returns its path.
func writeTopology(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "topo.yml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestResolveTopologyFile: what a topology file is refused for before anything
// starts, against the design's service, each with one line naming it.
func TestResolveTopologyFile(t *testing.T) {
	t.Setenv("PGUSER", "")
	t.Setenv("TOPO_USER", "alice")
	one := "servers: [{name: s0, addr: '127.0.0.1:1'}]\n"
	for _, tt := range []struct {
		name, lock, nemesis, file, want string
	}{
		{"redis ok", "redis-set-px", "pause", one, ""},
		{"ensemble ok", "etcd-mutex", "none", "servers: [{name: a, addr: 'h:1'}, {name: b, addr: 'h:2'}, {name: c, addr: 'h:3'}]\n", ""},
		{"redlock count", "redlock", "none", one, "uses 5 lock servers, and 1 lock server was given"},
		{"redis cluster", "redis-cluster", "kill", "servers: [{name: a, addr: 'h:1', announce: '10.0.0.1:6379'}, {name: b, addr: 'h:2'}]\ncommands: {kill: k, start: s}\n", ""},
		{"sentinel no master", "redis-sentinel", "none", "servers: [{name: a, addr: 'h:1'}, {name: s, role: sentinel, addr: 'h:2'}]\n", "no master_name"},
		{"sentinel none", "redis-sentinel", "none", "master_name: m\n" + one, "no server with role sentinel"},
		{"other service", "redis-set-px", "none", "service: postgres\n" + one, "its servers run postgres, and lock redis-set-px runs on redis"},
		{"unknown role", "redis-set-px", "none", one[:len(one)-2] + ", {name: x, addr: 'h:2', role: backend}]\n", `role "backend": service redis knows roles lock`},
		{"login for redis", "redis-set-px", "none", one + "login: {user_env: TOPO_USER}\n", "service redis has no login"},
		{"login unset", "pg-advisory", "none", one, "environment variable PGUSER, which is not set"},
		{"login named", "pg-advisory", "none", one + "login: {user_env: TOPO_USER}\n", ""},
		{"kill lacks", "redis-set-px", "kill", one, "kill nemesis: no kill command and no start or restart command"},
		{"kill given", "redis-set-px", "kill", one + "commands: {kill: 'docker kill {name}', restart: 'docker restart {name}'}\n", ""},
		{"pause-leader lacks", "redis-set-px", "pause-leader", one + "commands: {stop: 'docker pause {name}'}\n", "no continue command"},
		{"clock refused", "redis-set-px", "clock", one, "the servers only through the control commands"},
		{"pgbouncer backend", "pg-advisory", "session-kill", "service: pgbouncer-transaction\nlogin: {user_env: TOPO_USER}\n" +
			"servers: [{name: b, addr: 'h:6432'}, {name: pg, addr: 'h:5432', role: backend}]\n", ""},
		{"bad file", "redis-set-px", "none", "servers: []\n", "no servers"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			test := quick(t, tt.lock, tt.nemesis, false)
			test.Cluster, test.Topology = ClusterExternal, writeTopology(t, tt.file)
			if strings.HasPrefix(tt.file, "service: pgbouncer") {
				test.Service = "pgbouncer-transaction"
			}
			test.Defaults()
			p, err := Resolve(test)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.name == "login named" && (p.login.User != "alice" || p.login.Database != "alice") {
				t.Fatalf("login %+v, want alice's, her database her name as libpq's", p.login)
			}
		})
	}
}

// TestRunExternalCommands points a run at a redis-server that only the
// topology file's commands stop and start: a kill bound to the first
// grant runs the kill command and, at its end, the start command; the
// history records both with their exit status and what lockcheck saw of
// their effect; the server is left running.
func TestRunExternalCommands(t *testing.T) {
	servicetest.Need(t, "redis-set-px")
	dir := t.TempDir()
	port, err := clusters.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	start := fmt.Sprintf("redis-server --bind {host} --port {port} --daemonize yes --pidfile %s/{name}.pid --dir %s --save '' --appendonly no", dir, dir)
	path := writeTopology(t, fmt.Sprintf("servers:\n- name: r0\n  addr: 127.0.0.1:%d\n  commands:\n    kill: kill -KILL $(cat %s/{name}.pid)\n    start: %s\n", port, dir, start))
	line := strings.NewReplacer("{host}", "127.0.0.1", "{port}", strconv.Itoa(port), "{name}", "r0").Replace(start)
	if out, err := exec.Command("/bin/sh", "-c", line).CombinedOutput(); err != nil {
		t.Fatalf("start the user's redis-server: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(dir, "r0.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	waitAccepts(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))

	test := quick(t, "redis-set-px", "kill@grant:900ms", false)
	test.Cluster, test.Topology = ClusterExternal, path
	out, err := Run(context.Background(), test, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out.Dir, "topology.yml")); err != nil {
		t.Errorf("the run directory keeps no copy of the topology file: %v", err)
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, op := range h {
		for _, c := range op.Value.Ext().Commands {
			if c.Exit != 0 || c.Node != "r0" {
				t.Errorf("op %v: command %+v", op, c)
			}
			words = append(words, op.F+":"+c.Word+":"+c.Effect)
		}
	}
	if len(words) != 2 || !strings.HasPrefix(words[0], "kill:kill:127.0.0.1:") || !strings.Contains(words[0], "stopped accepting connections") ||
		!strings.HasPrefix(words[1], "restart:start:") || !strings.Contains(words[1], "accepted connections") {
		t.Fatalf("commands recorded %q; want the kill command on the kill op, then the start command on the restart op", words)
	}
	waitAccepts(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// waitAccepts waits until addr accepts a connection.
func waitAccepts(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(patient)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunExternalDatabases points runs at a PostgreSQL and a MariaDB the
// test starts itself as a user would (their own tools, their own users
// with a login from the environment), outside lockcheck: a session kill
// makes a double holder of an advisory lock (pg-advisory, mysql-get-lock)
// and with no fault the run is valid; the servers are left running. The
// two databases are checked side by side.
func TestRunExternalDatabases(t *testing.T) {
	overlap := checker.NewOverlap(checker.Options{})
	for _, db := range []struct {
		lock  string
		start func(t *testing.T) string
		env   map[string]string
	}{
		{"pg-advisory", userPostgres, map[string]string{"PGUSER": "tester", "PGDATABASE": "postgres"}},
		{"mysql-get-lock", userMariaDB, map[string]string{"MARIADB_USER": "tester", "MARIADB_PASSWORD": "s3cret-pw", "MARIADB_DATABASE": "lc"}},
	} {
		t.Run(db.lock, func(t *testing.T) {
			t.Parallel()
			servicetest.Need(t, db.lock)
			addr := db.start(t)
			// Each database's login has variables of its own, so the two
			// subtests, run side by side, set disjoint ones (t.Setenv
			// refuses a parallel test).
			for k, v := range db.env {
				old, had := os.LookupEnv(k)
				os.Setenv(k, v)
				t.Cleanup(func() {
					if had {
						os.Setenv(k, old)
					} else {
						os.Unsetenv(k)
					}
				})
			}
			path := writeTopology(t, "servers: [{name: db0, addr: '"+addr+"'}]\n")
			for _, nem := range []string{"session-kill", "none"} {
				test := quick(t, db.lock, nem, false)
				test.Cluster, test.Topology = ClusterExternal, path
				want := checker.Valid
				if nem != "none" {
					want = checker.Invalid
					test.Time, test.Until = patient, untilAnomaly(overlap, "double-holder")
				}
				out, err := Run(context.Background(), test, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				if out.Result.Valid != want {
					t.Fatalf("%s: verdict %v with anomalies %v, want %v", nem, out.Result.Valid, kinds(out.Result, false), want)
				}
				if pw := db.env["MARIADB_PASSWORD"]; pw != "" {
					assertNotStored(t, out.Dir, pw)
				}
			}
			waitAccepts(t, addr)
		})
	}
}

// assertNotStored fails when any file of the run directory holds secret.
func assertNotStored(t *testing.T, dir, secret string) {
	t.Helper()
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), secret) {
			t.Errorf("%s holds the login's password", path)
		}
		return nil
	})
}

// asUser returns the credential of the system user name when the test
// runs as root (servers refuse root), nil otherwise.
func asUser(t *testing.T, name string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Skipf("no system user %s: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// ownedDir returns a temporary directory the server's user owns.
func ownedDir(t *testing.T, cred *syscall.Credential) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "user-db-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runAs runs argv as cred's user and fails the test with its output when
// it fails.
func runAs(t *testing.T, cred *syscall.Credential, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

// startAs starts a server as cred's user in its own process group and
// stops it (SIGKILL to the group) when the test ends.
func startAs(t *testing.T, cred *syscall.Credential, log string, argv ...string) {
	t.Helper()
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		f.Close()
	})
}

// userPostgres initdbs and starts a PostgreSQL server with a role tester
// (trust on 127.0.0.1) and returns its address.
func userPostgres(t *testing.T) string {
	bin, err := sqldb.LookPostgres()
	if err != nil {
		t.Skip(err)
	}
	cred := asUser(t, "postgres")
	dir := ownedDir(t, cred)
	data := filepath.Join(dir, "data")
	runAs(t, cred, filepath.Join(bin, "initdb"), "-D", data, "-U", "tester", "--auth=trust", "--no-sync")
	port, err := clusters.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	startAs(t, cred, filepath.Join(dir, "log"), filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitAccepts(t, addr)
	return addr
}

// userMariaDB installs and starts a MariaDB server with performance_schema
// on, and a user tester (password s3cret-pw) who may use database lc and
// read the performance schema; it returns its address.
func userMariaDB(t *testing.T) string {
	bin, err := sqldb.LookMariaDB()
	if err != nil {
		t.Skip(err)
	}
	cred := asUser(t, "mysql")
	dir := ownedDir(t, cred)
	data := filepath.Join(dir, "data")
	runAs(t, cred, "mariadb-install-db", "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve", "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M")
	port, err := clusters.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	startAs(t, cred, filepath.Join(dir, "log"), bin, "--no-defaults", "--datadir="+data, "--bind-address=127.0.0.1",
		"--port="+strconv.Itoa(port), "--socket="+sock, "--pid-file="+filepath.Join(dir, "pid"), "--tmpdir="+dir,
		"--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
		"--performance-schema=ON")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitAccepts(t, addr)
	deadline := time.Now().Add(patient)
	for {
		cmd := exec.Command("mariadb", "--no-defaults", "-S", sock, "-uroot", "-e",
			"CREATE USER tester@'%' IDENTIFIED BY 's3cret-pw'; CREATE DATABASE lc; GRANT ALL ON lc.* TO tester@'%'; GRANT SELECT ON performance_schema.* TO tester@'%';")
		out, err := cmd.CombinedOutput()
		if err == nil {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("create the user tester: %v: %s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
