package clusters

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
)

// natsReadyWait bounds the wait for NATS servers to serve JetStream after
// a start: a cluster must elect its JetStream meta leader first.
const natsReadyWait = 60 * time.Second

// natsBin is where Debian's nats-server package puts the server; /usr/sbin
// is not in every user's PATH.
const natsBin = "/usr/sbin/nats-server"

// LookNATS returns the path of nats-server, or an error naming the Debian
// package to install.
func LookNATS() (string, error) {
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	if _, err := os.Stat(natsBin); err == nil {
		return natsBin, nil
	}
	return "", fmt.Errorf("%w: nats-server not found in PATH or %s: install the Debian package nats-server (scripts/deps.sh does)", ErrMissingBinary, natsBin)
}

// NATSVersion returns the version `nats-server --version` prints
// ("2.9.10"), or "" when nats-server is missing.
func NATSVersion() string {
	bin, err := LookNATS()
	if err != nil {
		return ""
	}
	return natsVersionOf(bin)
}

// parseNATSVersion takes the version out of `nats-server --version`'s
// "nats-server: v2.9.10", "" when the line is not of that form.
func parseNATSVersion(out string) string {
	v, ok := strings.CutPrefix(strings.TrimSpace(out), "nats-server: v")
	if !ok || v == "" || strings.ContainsAny(v, " \n") {
		return ""
	}
	return v
}

// NATSConfig describes a local NATS JetStream cluster.
type NATSConfig struct {
	// Members is the number of servers, 3 by default; 1 is a single
	// JetStream server with no cluster block.
	Members int
	// Workers is the number of worker slots; each slot gets its own proxy
	// to each server's client port.
	Workers int
	// LogDir receives one log per server.
	LogDir string
	// Server is the nats-server binary to run (a version built from the
	// Go module, see NATSVersions); "" means the one installed.
	Server string
}

// natsNode is one nats-server.
type natsNode struct {
	*member
	route, monitor int // the cluster (route) port and the HTTP monitoring port
	conf           string
}

// NATS is a Cluster of local nats-server processes with JetStream enabled,
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
type NATS struct {
	cfg   NATSConfig
	bin   string
	nodes []*natsNode
	// ensemble gives Kill, Restart, PauseNode, ResumeNode, Partition, Heal,
	// Isolate and Rejoin.
	ensemble
}

// NewNATS returns an unstarted cluster.
func NewNATS(cfg NATSConfig) *NATS {
	cfg.Members, cfg.Workers = ensembleSize(cfg.Members, cfg.Workers)
	n := &NATS{cfg: cfg}
	n.init("NATS server", cfg.LogDir, true, func(from, to int) []string { return []string{natsRouteProxy(from, to)} })
	return n
}

func natsRouteProxy(from, to int) string { return fmt.Sprintf("nats%d-nats%d-route", from, to) }

// Setup starts the servers and the storage node and returns once every
// server reports itself healthy and, in a cluster, every server names the
// same JetStream meta leader. On error, whatever was started is stopped. A
// port taken by someone else between choosing it and the server binding it
// is retried with fresh ports.
func (n *NATS) Setup(ctx context.Context) error {
	return n.retrySetup(ctx, n.setupOnce, func() { n.nodes = nil })
}

func (n *NATS) setupOnce(ctx context.Context) (err error) {
	if n.bin = n.cfg.Server; n.bin == "" {
		if n.bin, err = LookNATS(); err != nil {
			return err
		}
	}
	return n.setUp(ctx, "nats-", n.Teardown, func() (err error) {
		for i := 1; i <= n.cfg.Members; i++ {
			s := &natsNode{}
			if s.member, err = n.add("nats", i, &s.route, &s.monitor); err != nil {
				return err
			}
			n.nodes = append(n.nodes, s)
		}
		if err := n.writeConfigs(); err != nil {
			return err
		}
		return n.launch(ctx, n.cfg.Workers, false, func(ctx context.Context, i int) error { return n.startNode(ctx, n.nodes[i]) },
			n.waitReady)
	})
}

// writeConfigs writes each server's configuration file. In a cluster a
// server's routes are its own proxies to its peers' route ports, so every
// link between two servers can be cut on its own.
func (n *NATS) writeConfigs() error {
	for _, s := range n.nodes {
		if err := os.MkdirAll(filepath.Join(s.dir, "jetstream"), 0o755); err != nil {
			return fmt.Errorf("create %s dir: %w", s.name, err)
		}
		var routes []string
		for _, peer := range n.nodes {
			if peer.id == s.id {
				continue
			}
			addr, err := n.proxies.Add(natsRouteProxy(s.id, peer.id), net.JoinHostPort("127.0.0.1", strconv.Itoa(peer.route)))
			if err != nil {
				return err
			}
			routes = append(routes, strconv.Quote("nats-route://"+addr))
		}
		s.conf = filepath.Join(s.dir, "nats.conf")
		if err := os.WriteFile(s.conf, []byte(natsConf(s, routes)), 0o644); err != nil {
			return fmt.Errorf("write %s config: %w", s.name, err)
		}
	}
	return nil
}

// natsConf is the configuration of server s, whose peers' routes are
// routes (quoted; none for a single server).
func natsConf(s *natsNode, routes []string) string {
	lines := []string{
		"server_name: " + s.name,
		"listen: " + strconv.Quote(s.clientAddr()),
		"http: " + strconv.Quote(net.JoinHostPort("127.0.0.1", strconv.Itoa(s.monitor))),
		"logtime: true",
		"jetstream {",
		"  store_dir: " + strconv.Quote(filepath.Join(s.dir, "jetstream")),
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
func (n *NATS) startNode(ctx context.Context, s *natsNode) error {
	return startMember(ctx, s.member, []string{n.bin, "-c", s.conf}, nil)
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
func (n *NATS) metaLeader(ctx context.Context, s *natsNode) (string, error) {
	l, _, err := n.metaView(ctx, s)
	return l, err
}

// metaView returns the JetStream meta leader server s names and, when s is
// that leader, how many of the other servers it counts as current
// replicas of the meta group.
func (n *NATS) metaView(ctx context.Context, s *natsNode) (leader string, current int, err error) {
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
func (n *NATS) node(m *member) *natsNode {
	for _, s := range n.nodes {
		if s.member == m {
			return s
		}
	}
	return nil
}

// waitReady waits until every server in ms answers /healthz with ok and,
// in a cluster, names a JetStream meta leader, which, when it is in ms,
// counts every other server a current replica.
func (n *NATS) waitReady(ctx context.Context, ms []*member) error {
	return n.waitServing(ctx, "NATS", ms, natsReadyWait, "address already in use", "not serving JetStream", func(m *member) bool {
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
		return err == nil && leader != "" && (leader != s.name || current == len(n.nodes)-1)
	})
}

// Leader returns the JetStream meta leader a majority of the running
// servers name (the only server of a single-server topology). A server cut
// off from its peers may still name an old leader; the majority wins.
func (n *NATS) Leader(ctx context.Context) (string, error) {
	if len(n.nodes) == 1 {
		return n.nodes[0].name, nil
	}
	votes := make(map[string]int)
	for _, s := range n.nodes {
		if s.running() == nil {
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
	return "", errors.New("no JetStream meta leader that a majority of NATS servers agree on")
}

// Teardown stops the proxies, every server and the storage node, and
// removes the data directory. It is idempotent.
func (n *NATS) Teardown(ctx context.Context) error {
	return n.teardown(ctx, "nats-", func() {}, func() {})
}
