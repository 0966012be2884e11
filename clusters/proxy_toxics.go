package clusters

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Toxic is one Toxiproxy toxic a fault puts on a link, or ToxicRefuse.
type Toxic struct {
	// Type is the toxic's Toxiproxy type (ToxicLatency, ToxicTimeout,
	// ToxicResetPeer, ToxicLimitData, ToxicSlicer, ...), or ToxicRefuse.
	Type string
	// Stream is the direction it acts on: Upstream (client to server: the
	// requests) or Downstream (server to client: the replies).
	Stream string
	// Toxicity is the share of the link's connections it acts on; 0 is 1
	// (every connection).
	Toxicity float32
	// Attributes are its attributes by Toxiproxy's names (latency and
	// jitter in ms, timeout in ms, bytes, average_size, ...).
	Attributes map[string]int64
}

// The toxic types lockcheck's link faults use (Toxiproxy v2.12's names),
// and ToxicRefuse, which is lockcheck's own: no toxic but a closed
// listener.
const (
	// ToxicLatency delays every chunk by latency +/- jitter ms.
	ToxicLatency = "latency"
	// ToxicTimeout drops every chunk, and closes the connection after
	// timeout ms (never with 0): no reset, the peer has to notice.
	ToxicTimeout = "timeout"
	// ToxicResetPeer drops the first chunk it sees and closes the
	// connection after timeout ms; a connection opened while it is on the
	// link closes with a TCP RST (linger 0).
	ToxicResetPeer = "reset_peer"
	// ToxicLimitData passes bytes bytes in all and then closes the
	// connection: a reply cut off.
	ToxicLimitData = "limit_data"
	// ToxicSlicer cuts every chunk into pieces of average_size bytes.
	ToxicSlicer = "slicer"
	// ToxicRefuse closes the link's listener and its open connections, so
	// that a dial is refused; while it is on, a connection the proxy
	// accepts anyway (a killed node's restart starts every proxy to it
	// again) is reset at its first request.
	ToxicRefuse = "refuse"
)

// The directions of a link (Toxic.Stream).
const (
	// Upstream carries the requests, client to server.
	Upstream = "upstream"
	// Downstream carries the replies, server to client.
	Downstream = "downstream"
)

// toxicName names the i-th toxic owner puts on a link.
func toxicName(owner string, i int, t Toxic) string {
	return fmt.Sprintf("%s:%d:%s_%s", owner, i, t.Type, t.Stream)
}

// AddToxics puts ts on the proxy named name on behalf of owner (a fault),
// which RemoveToxics takes off again; a toxic owner already put there is
// left as it is.
func (ps *Proxies) AddToxics(name, owner string, ts []Toxic) error {
	p, err := ps.Proxy(name)
	if err != nil {
		return err
	}
	for i, t := range ts {
		if t.Type == ToxicRefuse {
			// The marker goes on first: a connection accepted from now on
			// is reset.
			t = Toxic{Type: ToxicResetPeer, Stream: Upstream}
			if err := addToxic(p, toxicName(owner, i, Toxic{Type: ToxicRefuse, Stream: Upstream}), t); err != nil {
				return fmt.Errorf("refuse proxy %s: %w", name, err)
			}
			p.Stop()
			continue
		}
		if err := addToxic(p, toxicName(owner, i, t), t); err != nil {
			return fmt.Errorf("put a %s toxic (%s) on proxy %s: %w", t.Type, t.Stream, name, err)
		}
	}
	return nil
}

// addToxic adds t to p under name, unless a toxic of that name is there.
func addToxic(p *toxiproxy.Proxy, name string, t Toxic) error {
	tox, attrs := t.Toxicity, t.Attributes
	if tox == 0 {
		tox = 1
	}
	if attrs == nil {
		attrs = map[string]int64{}
	}
	body, err := json.Marshal(struct {
		Name       string           `json:"name"`
		Type       string           `json:"type"`
		Stream     string           `json:"stream"`
		Toxicity   float32          `json:"toxicity"`
		Attributes map[string]int64 `json:"attributes"`
	}{name, t.Type, t.Stream, tox, attrs})
	if err != nil {
		return err
	}
	if _, err := p.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil && !errors.Is(err, toxiproxy.ErrToxicAlreadyExists) {
		return err
	}
	return nil
}

// RemoveToxics takes every toxic owner put on the proxy named name off it
// and, when owner refused it, starts it again unless its server refuses a
// dial (a node killed meanwhile, whose restart starts its proxies). A
// proxy that carries none of owner's toxics is left as it is.
func (ps *Proxies) RemoveToxics(ctx context.Context, name, owner string) error {
	p, err := ps.Proxy(name)
	if err != nil {
		return err
	}
	refused := false
	var errs []error
	for _, t := range p.Toxics.GetToxicArray() {
		w, ok := t.(*toxics.ToxicWrapper)
		if !ok || !strings.HasPrefix(w.Name, owner+":") {
			continue
		}
		refused = refused || strings.HasSuffix(w.Name, ":"+ToxicRefuse+"_"+Upstream)
		if err := p.Toxics.RemoveToxic(ctx, w.Name); err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
			errs = append(errs, fmt.Errorf("take toxic %s off proxy %s: %w", w.Name, name, err))
		}
	}
	if refused && serves(p.Upstream) {
		errs = append(errs, ps.Enable(name))
	}
	return errors.Join(errs...)
}

// serves reports whether a server accepts connections at addr.
func serves(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
