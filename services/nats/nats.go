package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// natsReadyWait bounds the wait for NATS servers to serve JetStream after
// a start: a cluster must elect its JetStream meta leader first.
const natsReadyWait = 60 * time.Second

// natsBin is where Debian's nats-server package puts the server; /usr/sbin
// is not in every user's PATH.
const natsBin = "/usr/sbin/nats-server"

// Look returns the path of nats-server, or an error naming the Debian
// package to install.
func Look() (string, error) {
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	if _, err := os.Stat(natsBin); err == nil {
		return natsBin, nil
	}
	return "", fmt.Errorf("%w: nats-server not found in PATH or %s: install the Debian package nats-server (scripts/deps.sh does)", clusters.ErrMissingBinary, natsBin)
}

// Version returns the version `nats-server --version` prints
// ("2.9.10"), or "" when nats-server is missing.
func Version() string {
	bin, err := Look()
	if err != nil {
		return ""
	}
	return versionOf(bin)
}

// parseVersion takes the version out of `nats-server --version`'s
// "nats-server: v2.9.10", "" when the line is not of that form.
func parseVersion(out string) string {
	v, ok := strings.CutPrefix(strings.TrimSpace(out), "nats-server: v")
	if !ok || v == "" || strings.ContainsAny(v, " \n") {
		return ""
	}
	return v
}

// Config describes a local NATS JetStream cluster.
type Config struct {
	// Members is the number of servers, 3 by default; 1 is a single
	// JetStream server with no cluster block.
	Members int
	// Workers is the number of worker slots; each slot gets its own proxy
	// to each server's client port.
	Workers int
	// LogDir receives one log per server.
	LogDir string
	// Server is the nats-server binary to run (a version built from the
	// Go module, see Versions); "" means the one installed.
	Server string
}

// server is one nats-server.
type server struct {
	*clusters.Member
	route, monitor int // the cluster (route) port and the HTTP monitoring port
	conf           string
}

// Cluster is a cluster of local nats-server processes with JetStream enabled,
// plus a redis-server storage node for the protected resource. Each server
// keeps its JetStream store in its own directory under the run's temporary
// directory, so a killed server restarts with what it had written (and
// synced: nats-server syncs its files lazily, every two minutes by
// default). With more than one member the servers form one JetStream
// cluster: every worker-to-server link and every route between two servers
// goes through its own Toxiproxy proxy. A server's config names its peers'
// routes by its own proxies to them, and the cluster block sets
// no_advertise, so neither the servers (through route gossip) nor the
// clients (through the client URLs the servers would announce) learn a
// real address that bypasses the proxies.
type Cluster struct {
	cfg   Config
	bin   string
	nodes []*server
	// Ensemble gives Kill, Restart, PauseNode, ResumeNode, Partition, Heal,
	// Isolate and Rejoin.
	clusters.Ensemble
}

// Cluster offers the nemeses what every ensemble does.
var _ clusters.Replicated = (*Cluster)(nil)

// New returns an unstarted cluster.
func New(cfg Config) *Cluster {
	cfg.Members, cfg.Workers = clusters.EnsembleSize(cfg.Members, cfg.Workers)
	n := &Cluster{cfg: cfg}
	n.Init("NATS server", cfg.LogDir, true, func(from, to int) []string { return []string{natsRouteProxy(from, to)} })
	return n
}

func natsRouteProxy(from, to int) string { return fmt.Sprintf("nats%d-nats%d-route", from, to) }

// Setup starts the servers and the storage node and returns once every
// server reports itself healthy and, in a cluster, every server names the
// same JetStream meta leader. On error, whatever was started is stopped. A
// port taken by someone else between choosing it and the server binding it
// is retried with fresh ports.
func (n *Cluster) Setup(ctx context.Context) error {
	return n.RetrySetup(ctx, n.setupOnce, func() { n.nodes = nil })
}

func (n *Cluster) setupOnce(ctx context.Context) (err error) {
	if n.bin = n.cfg.Server; n.bin == "" {
		if n.bin, err = Look(); err != nil {
			return err
		}
	}
	return n.SetUp(ctx, "nats-", n.Teardown, func() (err error) {
		for i := 1; i <= n.cfg.Members; i++ {
			s := &server{}
			if s.Member, err = n.AddMember("nats", i, &s.route, &s.monitor); err != nil {
				return err
			}
			n.nodes = append(n.nodes, s)
		}
		if err := n.writeConfigs(); err != nil {
			return err
		}
		return n.Launch(ctx, n.cfg.Workers, false, func(ctx context.Context, i int) error { return n.startNode(ctx, n.nodes[i]) },
			n.waitReady)
	})
}

// writeConfigs writes each server's configuration file. In a cluster a
// server's routes are its own proxies to its peers' route ports, so every
// link between two servers can be cut on its own.
func (n *Cluster) writeConfigs() error {
	for _, s := range n.nodes {
		if err := os.MkdirAll(filepath.Join(s.Dir, "jetstream"), 0o755); err != nil {
			return fmt.Errorf("create %s dir: %w", s.Name, err)
		}
		var routes []string
		for _, peer := range n.nodes {
			if peer.ID == s.ID {
				continue
			}
			addr, err := n.Proxies.Add(natsRouteProxy(s.ID, peer.ID), net.JoinHostPort("127.0.0.1", strconv.Itoa(peer.route)))
			if err != nil {
				return err
			}
			routes = append(routes, strconv.Quote("nats-route://"+addr))
		}
		s.conf = filepath.Join(s.Dir, "nats.conf")
		if err := os.WriteFile(s.conf, []byte(natsConf(s, routes)), 0o644); err != nil {
			return fmt.Errorf("write %s config: %w", s.Name, err)
		}
	}
	return nil
}

// natsConf is the configuration of server s, whose peers' routes are
// routes (quoted; none for a single server).
func natsConf(s *server, routes []string) string {
	lines := []string{
		"server_name: " + s.Name,
		"listen: " + strconv.Quote(s.ClientAddr()),
		"http: " + strconv.Quote(net.JoinHostPort("127.0.0.1", strconv.Itoa(s.monitor))),
		"logtime: true",
		"jetstream {",
		"  store_dir: " + strconv.Quote(filepath.Join(s.Dir, "jetstream")),
		"  max_memory_store: 64MB",
		"  max_file_store: 512MB",
		"}",
	}
	if len(routes) > 0 {
		lines = append(lines,
			"cluster {",
			"  name: lockcheck",
			"  listen: "+strconv.Quote(net.JoinHostPort("127.0.0.1", strconv.Itoa(s.route))),
			"  no_advertise: true",
			"  routes: ["+strings.Join(routes, ", ")+"]",
			"}")
	}
	return strings.Join(lines, "\n") + "\n"
}

// startNode starts one server in its own process group. A server started
// again finds its JetStream store and recovers from it.
func (n *Cluster) startNode(ctx context.Context, s *server) error {
	return clusters.StartMember(ctx, s.Member, []string{n.bin, "-c", s.conf}, nil)
}

// natsJSZ is what a server's /jsz monitoring endpoint says of its
// JetStream meta group (absent for a single server).
type natsJSZ struct {
	Meta *struct {
		Leader string `json:"leader"`
		// Replicas are the other members as the leader sees them (only
		// the leader lists them).
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
		} `json:"replicas"`
	} `json:"meta_cluster"`
}

// natsGet reads one monitoring endpoint of the server whose monitoring
// port is port; a status other than 200 is an error.
func natsGet(ctx context.Context, port int, path string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	return nil
}

// metaLeader returns the JetStream meta leader server s names, "" for a
// single server or a cluster with none.
func (n *Cluster) metaLeader(ctx context.Context, s *server) (string, error) {
	l, _, err := n.metaView(ctx, s)
	return l, err
}

// metaView returns the JetStream meta leader server s names and, when s is
// that leader, how many of the other servers it counts as current
// replicas of the meta group.
func (n *Cluster) metaView(ctx context.Context, s *server) (leader string, current int, err error) {
	var z natsJSZ
	if err := natsGet(ctx, s.monitor, "/jsz", &z); err != nil {
		return "", 0, err
	}
	if z.Meta == nil {
		return "", 0, nil
	}
	for _, r := range z.Meta.Replicas {
		if r.Current {
			current++
		}
	}
	return z.Meta.Leader, current, nil
}

// node returns the server of member m.
func (n *Cluster) node(m *clusters.Member) *server {
	for _, s := range n.nodes {
		if s.Member == m {
			return s
		}
	}
	return nil
}

// waitReady waits until every server in ms answers /healthz with ok and,
// in a cluster, names a JetStream meta leader, which, when it is in ms,
// counts every other server a current replica.
func (n *Cluster) waitReady(ctx context.Context, ms []*clusters.Member) error {
	return n.WaitServing(ctx, "NATS", ms, natsReadyWait, "address already in use", "not serving JetStream", func(m *clusters.Member) bool {
		s := n.node(m)
		var health struct {
			Status string `json:"status"`
		}
		if err := natsGet(ctx, s.monitor, "/healthz", &health); err != nil || health.Status != "ok" {
			return false
		}
		if len(n.nodes) == 1 {
			return true
		}
		// The leader must also count every other server a current
		// replica: a fault that cut it off before its followers had caught
		// up with the meta group could leave them unable to elect another
		// (seen under load: no new leader within 2 minutes).
		leader, current, err := n.metaView(ctx, s)
		return err == nil && leader != "" && (leader != s.Name || current == len(n.nodes)-1)
	})
}

// Leader returns the JetStream meta leader a majority of the running
// servers name (the only server of a single-server topology). A server cut
// off from its peers may still name an old leader; the majority wins.
func (n *Cluster) Leader(ctx context.Context) (string, error) {
	if len(n.nodes) == 1 {
		return n.nodes[0].Name, nil
	}
	votes := make(map[string]int)
	for _, s := range n.nodes {
		if !s.Running() {
			continue
		}
		if l, err := n.metaLeader(ctx, s); err == nil && l != "" {
			votes[l]++
		}
	}
	for name, v := range votes {
		if 2*v > len(n.nodes) {
			return name, nil
		}
	}
	return "", errors.New("no JetStream meta leader that a majority of Cluster servers agree on")
}

// Teardown stops the proxies, every server and the storage node, and
// removes the data directory. It is idempotent.
func (n *Cluster) Teardown(ctx context.Context) error {
	return n.TeardownWith(ctx, "nats-", func() {}, func() {})
}
