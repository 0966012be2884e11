// The external topology (--cluster external): lock servers the user runs
// and lockcheck does not start, reached through lockcheck's proxies.

package clusters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// ExternalConfig describes lock servers someone else runs: their
// addresses, and the worker slots that reach them.
type ExternalConfig struct {
	// Addrs are the lock servers' addresses, host:port, one per lock node.
	Addrs []string
	// Workers is the number of worker slots; each slot gets its own proxy
	// to each server.
	Workers int
	// LogDir receives the proxies' and the storage node's logs.
	LogDir string
}

// External is a Topology of lock servers lockcheck does not run: its
// workers reach them through a proxy per worker slot and server, so that
// the faults of the client's side apply (a slot's links cut, slowed,
// refused or made lossy; the workers paused, killed or their clocks
// moved), and the storage node of the protected resource is a local
// redis-server as in every run. It has no server to kill, restart, pause,
// wipe, starve or move the clock of: the nemeses that need one are refused
// (see Limits).
type External struct {
	cfg     ExternalConfig
	storage StorageNode
	Local
}

var (
	_ Topology        = (*External)(nil)
	_ Partitioner     = (*External)(nil)
	_ NodePartitioner = (*External)(nil)
	_ LinkToxicker    = (*External)(nil)
	_ Limited         = (*External)(nil)
)

// Limited is a cluster that can say why a fault it does not support
// (ErrUnsupported) does not apply to it.
type Limited interface {
	// Limits says which faults the cluster supports, and why no others.
	Limits() string
}

// NewExternal returns an unstarted external topology.
func NewExternal(cfg ExternalConfig) *External {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	return &External{cfg: cfg, Local: Local{NodeSet: NodeSet{Kind: "lock server"}}}
}

// externalDial bounds the check that each server answers.
const externalDial = 3 * time.Second

// Setup checks that every server accepts a connection, then starts the
// storage node and the proxies. On error, whatever was started is stopped.
func (e *External) Setup(ctx context.Context) error {
	if len(e.cfg.Addrs) == 0 {
		return errors.New("--cluster external: no lock server address (give them with --external HOST:PORT,...)")
	}
	for _, a := range e.cfg.Addrs {
		d := net.Dialer{Timeout: externalDial}
		c, err := d.DialContext(ctx, "tcp", a)
		if err != nil {
			return fmt.Errorf("--cluster external: lock server %s does not answer: %w", a, err)
		}
		c.Close()
	}
	if err := LookStorage(); err != nil {
		return err
	}
	return e.SetUp(ctx, "external-", e.Teardown, func() error {
		if err := os.MkdirAll(e.cfg.LogDir, 0o755); err != nil {
			return fmt.Errorf("create log dir: %w", err)
		}
		var err error
		if e.storage, err = StartStorage(ctx, e.DataDir, e.cfg.LogDir); err != nil {
			return err
		}
		if err := e.OpenProxies(e.cfg.LogDir); err != nil {
			return err
		}
		nodes := make([]SetNode, len(e.cfg.Addrs))
		for i, a := range e.cfg.Addrs {
			nodes[i] = SetNode{Name: "lock" + strconv.Itoa(i), Addr: a}
		}
		return e.NodeSet.Link(e.Proxies, e.cfg.Workers, nodes)
	})
}

// Teardown closes the proxies and stops the storage node; the lock
// servers are the user's, and are left running.
func (e *External) Teardown(ctx context.Context) error {
	if !e.MarkTornDown() {
		return nil
	}
	e.CloseProxies()
	return errors.Join(StopStorage(ctx, e.storage), e.RemoveTemp("external-"))
}

// Nodes lists the lock servers (their own addresses), then the storage
// node.
func (e *External) Nodes() []Node {
	var nodes []Node
	for i, a := range e.cfg.Addrs {
		nodes = append(nodes, Node{Name: "lock" + strconv.Itoa(i), Role: "lock", Addr: a})
	}
	return append(nodes, StorageNodeOf(e.storage)...)
}

// LockAddrs returns worker slot's proxy addresses, one per lock server.
func (e *External) LockAddrs(slot int) []string { return e.NodeSet.LockAddrs(slot) }

// StorageAddr returns the storage node's address.
func (e *External) StorageAddr() string { return e.storage.Addr() }

// Partition cuts every link of a worker slot to the lock servers.
func (e *External) Partition(ctx context.Context, slot int) error {
	return e.NodeSet.Partition(ctx, slot)
}

// Heal restores every link of a worker slot.
func (e *External) Heal(ctx context.Context, slot int) error { return e.NodeSet.Heal(ctx, slot) }

// PartitionNodes cuts worker slot's links to the named lock servers only.
func (e *External) PartitionNodes(ctx context.Context, slot int, nodes []string) error {
	return e.NodeSet.PartitionNodes(ctx, slot, nodes)
}

// SetLinkToxics sets fault's toxics on a worker slot's links.
func (e *External) SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error {
	return e.NodeSet.SetLinkToxics(ctx, slot, fault, ts)
}

// Limits says what --cluster external can fault.
func (e *External) Limits() string {
	return "--cluster external reaches servers lockcheck does not run, so it faults only the client's side: " +
		"the workers (pause, crash, their clocks) and their links (partition and the link faults such as latency, reply-loss, refuse)"
}
