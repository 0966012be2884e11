package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// RedisBinary is the server binary that RedisServer runs.
const RedisBinary = "redis-server"

// RedisServer is one redis-server process on a free loopback port.
type RedisServer struct {
	Name    string
	Persist bool // append-only file with fsync always, so a restart keeps keys
	Dir     string
	LogPath string
	Port    int
	Extra   []string // extra config lines
	// Env is added to the server process's environment (e.g. LD_PRELOAD of
	// the clock shim).
	Env []string

	clusters.ServerProc
}

// NewRedisServer returns the unstarted server called name, its data in
// tmp/name and its log logDir/name.log.
func NewRedisServer(tmp, logDir, name string, persist bool) *RedisServer {
	return &RedisServer{Name: name, Persist: persist, Dir: filepath.Join(tmp, name), LogPath: filepath.Join(logDir, name+".log")}
}

// newRedisServers returns n unstarted servers prefix0, prefix1, ... (see
// newRedisServer), under the clock shim at shim unless shim is "".
func newRedisServers(tmp, logDir, prefix string, n int, persist bool, shim string) ([]*RedisServer, error) {
	var out []*RedisServer
	for j := 0; j < n; j++ {
		s := NewRedisServer(tmp, logDir, prefix+strconv.Itoa(j), persist)
		if err := shimNode(shim, s); err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// redisSetNodes returns servers as a clusters.NodeSet's nodes: peers(j), when not
// nil, names node j's peer proxies, and start(j), when not nil, starts it
// again (else Start does).
func redisSetNodes(servers []*RedisServer, peers func(j int) []string, start func(j int, s *RedisServer) func(context.Context) error) []clusters.SetNode {
	nodes := make([]clusters.SetNode, len(servers))
	for j, s := range servers {
		n := clusters.SetNode{Name: s.Name, Addr: s.Addr(), Server: clusters.LocalServer{Name: s.Name, Proc: &s.ServerProc, Start: s.Start}}
		if peers != nil {
			n.Peers = peers(j)
		}
		if start != nil {
			n.Server = clusters.LocalServer{Name: s.Name, Proc: &s.ServerProc, Start: start(j, s)}
		}
		nodes[j] = n
	}
	return nodes
}

// NodeList lists servers as lock nodes, then more, then the storage node
// (when not nil).
func NodeList(storage *RedisServer, servers []*RedisServer, more ...clusters.Node) []clusters.Node {
	var nodes []clusters.Node
	for _, s := range servers {
		nodes = append(nodes, clusters.Node{Name: s.Name, Role: "lock", Addr: s.Addr()})
	}
	nodes = append(nodes, more...)
	if storage != nil {
		nodes = append(nodes, clusters.Node{Name: storage.Name, Role: "storage", Addr: storage.Addr()})
	}
	return nodes
}

// RedisPids returns the pids of the running servers (storage may be
// nil), by node name.
func RedisPids(storage *RedisServer, servers []*RedisServer) map[string]int {
	pids := make(map[string]int)
	for _, s := range append(append([]*RedisServer(nil), servers...), storage) {
		if s != nil {
			if pid := s.Pid(); pid != 0 {
				pids[s.Name] = pid
			}
		}
	}
	return pids
}

// StopRedis stops every server (storage may be nil) and returns their
// errors.
func StopRedis(ctx context.Context, storage *RedisServer, servers []*RedisServer) []error {
	var errs []error
	for _, s := range append(append([]*RedisServer(nil), servers...), storage) {
		if s != nil {
			errs = append(errs, s.Stop(ctx))
		}
	}
	return errs
}

// Addr returns host:port of the server.
func (s *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// LookRedis returns the path of redis-server, or an error naming the Debian
// package to install.
func LookRedis() (string, error) {
	path, err := exec.LookPath(RedisBinary)
	if err != nil {
		return "", fmt.Errorf("%w: %s not found in PATH: install the Debian package redis-server (scripts/deps.sh does)", clusters.ErrMissingBinary, RedisBinary)
	}
	return path, nil
}

func (s *RedisServer) writeConfig() (string, error) {
	lines := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(s.Port),
		"protected-mode yes",
		"daemonize no",
		"dir " + s.Dir,
		"logfile \"\"",
		"save \"\"",
		"databases 1",
	}
	if s.Persist {
		lines = append(lines, "appendonly yes", "appendfsync always")
	} else {
		lines = append(lines, "appendonly no")
	}
	lines = append(lines, s.Extra...)
	path := filepath.Join(s.Dir, "redis.conf")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write %s config: %w", s.Name, err)
	}
	return path, nil
}

// Start launches the server and waits until it answers PING. When Port is 0
// a free port is chosen; a port taken between choosing and binding is retried
// with another port.
func (s *RedisServer) Start(ctx context.Context) error {
	bin, err := LookRedis()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s dir: %w", s.Name, err)
	}
	fixed := s.Port != 0
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if !fixed {
			if s.Port, err = clusters.FreePort(); err != nil {
				return err
			}
		}
		lastErr = s.startOnce(ctx, bin)
		if lastErr == nil || fixed || !errors.Is(lastErr, clusters.ErrPortInUse) {
			return lastErr
		}
	}
	return lastErr
}

func (s *RedisServer) startOnce(ctx context.Context, bin string) error {
	conf, err := s.writeConfig()
	if err != nil {
		return err
	}
	proc, err := s.StartLogged(ctx, s.Name, s.LogPath, []string{bin, conf}, s.Env, s.Dir)
	if err != nil {
		return err
	}
	if err := waitRedis(ctx, s.Addr(), proc, 10*time.Second); err != nil {
		_ = proc.Kill()
		s.CloseLog()
		if b, _ := os.ReadFile(s.LogPath); strings.Contains(string(b), "Address already in use") {
			return fmt.Errorf("start %s on %s: %w", s.Name, s.Addr(), clusters.ErrPortInUse)
		}
		return fmt.Errorf("start %s on %s (log %s): %w", s.Name, s.Addr(), s.LogPath, err)
	}
	return nil
}

// Kill crashes the server with SIGKILL.
func (s *RedisServer) Kill() error { return s.KillProc(false) }

// Running reports whether the server process is alive.
func (s *RedisServer) Running() bool { return s.RunningProc() != nil }

// Stop shuts the server down (SIGTERM, then SIGKILL after a grace period).
func (s *RedisServer) Stop(ctx context.Context) error { return s.StopProc(ctx, 5*time.Second) }

// waitRedis polls addr with PING until it answers PONG, the process exits,
// or the timeout passes.
func waitRedis(ctx context.Context, addr string, proc *clusters.Proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		if proc.Exited() {
			return errors.New("server exited during start-up")
		}
		if lastErr = Ping(addr); lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("no answer within %s: %w", timeout, lastErr)
}

// Ping sends a RESP PING to addr and expects +PONG.
func Ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(buf[:n]), "+PONG") {
		return fmt.Errorf("unexpected reply %q", buf[:n])
	}
	return nil
}
