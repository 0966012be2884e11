package redis

import (
	"fmt"
	"sync"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/lockcheck/lockcheck/clusters"
)

// busSenderToxic is the Toxiproxy toxic type that drops the Redis clusters.Cluster
// bus messages of chosen sender nodes on one node's bus proxy.
//
// A cluster node talks to a peer over two TCP links: its own outbound link
// to the peer's announced bus port (its pings, the peer's pongs) and the
// peer's outbound link to its bus port. Every node dials a peer at the one
// address the peer announces, so a peer's bus proxy carries the outbound
// links of all the other nodes: cutting that proxy would cut the peer off
// from everyone. To cut node J off, J's own bus proxy is cut (a timeout
// toxic: nothing reaches J) and, on every other node's bus proxy, this
// toxic drops the links J opened: it reads the sender's node id from the
// first message of each link (the cluster bus header carries it at bytes
// 40..80) and drops everything a cut sender writes on it. Nothing J sends
// arrives, so no pong answers it either. When a dropping link sends again
// after the heal, the toxic closes it (the bytes dropped broke the
// message framing) and the node reconnects.
const busSenderToxic = "cluster_bus_sender"

// busHeaderLen is how much of a link's first message the toxic reads: the
// cluster bus header up to and including the sender's 40-byte node id.
const busHeaderLen = 80

func init() { toxics.Register(busSenderToxic, new(busSenderFilter)) }

// busSenderFilter is the toxic's attributes: Gate names the busGate that
// says which senders are cut, and clusters.Node is the index of the node whose bus
// proxy it is on (a cut between a pair of nodes drops a sender's links to
// one node only). The toxic is added once, when the proxy is made, so it
// sees every link from its first byte; a cut changes the gate, not the
// toxic, so no link is interrupted and no attribute is written while links
// read it.
type busSenderFilter struct {
	Gate string `json:"gate"`
	Node int    `json:"node"`
}

// busGate is the set of node ids whose bus links are dropped, shared by the
// bus proxies of one cluster, and the pairs of a node and a sender whose
// links to that node are dropped: pairs holds, under busPairKey, the
// faults that cut them (see clusters.HeldCuts).
type busGate struct {
	mu    sync.Mutex
	cut   map[string]bool
	pairs clusters.HeldCuts
}

// busPairKey names the links sender id opened to node index node.
func busPairKey(node int, id string) string { return fmt.Sprintf("%d<%s", node, id) }

// hold cuts the named pairs' links on behalf of fault.
func (g *busGate) hold(fault string, keys []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pairs.Hold(fault, keys)
}

// drop lets go of fault's cuts of the named pairs (of all of them when
// keys is nil).
func (g *busGate) drop(fault string, keys []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pairs.Drop(fault, keys)
}

// set cuts (on) or restores the links of node id.
func (g *busGate) set(id string, on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if on {
		g.cut[id] = true
	} else {
		delete(g.cut, id)
	}
}

// cuts reports whether the links sender id opens to node index node are
// dropped.
func (g *busGate) cuts(node int, id string) bool {
	if g == nil || id == "" {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cut[id] || len(g.pairs[busPairKey(node, id)]) > 0
}

// busGates maps a gate's name to the gate. Toxiproxy builds a toxic from
// its JSON attributes, so a toxic can only name its gate; a cluster adds its
// gate at Setup and removes it at Teardown.
var busGates sync.Map

// newBusGate registers an empty gate under name.
func newBusGate(name string) *busGate {
	g := &busGate{cut: make(map[string]bool), pairs: make(clusters.HeldCuts)}
	busGates.Store(name, g)
	return g
}

func lookBusGate(name string) *busGate {
	g, _ := busGates.Load(name)
	gate, _ := g.(*busGate)
	return gate
}

// busLink is the toxic's per-link state; it outlives attribute updates.
type busLink struct {
	head    []byte
	sender  string
	known   bool
	dropped bool
}

// NewState returns a fresh link state.
func (t *busSenderFilter) NewState() interface{} { return new(busLink) }

// Pipe forwards a link's data unless its sender is cut.
func (t *busSenderFilter) Pipe(stub *toxics.ToxicStub) {
	st, _ := stub.State.(*busLink)
	if st == nil {
		st = new(busLink)
	}
	gate := lookBusGate(t.Gate)
	clusters.EachChunk(stub, func(c *stream.StreamChunk) (*stream.StreamChunk, bool) {
		if !st.known {
			st.head = append(st.head, c.Data...)
			if len(st.head) < busHeaderLen {
				return nil, false
			}
			st.known = true
			if string(st.head[:4]) == "RCmb" {
				st.sender = string(st.head[40:busHeaderLen])
			}
			c.Data, st.head = st.head, nil
		}
		if gate.cuts(t.Node, st.sender) {
			st.dropped = true
			return nil, false
		}
		return c, st.dropped
	})
}
