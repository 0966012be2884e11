package clusters

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// countToxicType is the Toxiproxy toxic every proxy carries on its upstream
// stream: it passes every chunk through unchanged and counts its bytes, so
// the run can tell a worker whose commands crossed its proxies from one that
// dialled around them (Traffic).
const countToxicType = "lockcheck_count"

// counters holds each live proxy's upstream byte count, by its listen
// address; Proxies.Add adds one and Proxies.Close removes its own.
var counters sync.Map // string -> *atomic.Int64

// countToxic implements the counting toxic.
type countToxic struct {
	// Counter is the listen address whose count the toxic adds to.
	Counter string `json:"counter"`
}

// Pipe passes chunks through, counting their bytes.
func (t *countToxic) Pipe(stub *toxics.ToxicStub) {
	var n *atomic.Int64
	if v, ok := counters.Load(t.Counter); ok {
		n = v.(*atomic.Int64)
	}
	EachChunk(stub, func(c *stream.StreamChunk) (*stream.StreamChunk, bool) {
		if n != nil {
			n.Add(int64(len(c.Data)))
		}
		return c, false
	})
}

// EachChunk is the loop of a toxic's Pipe: f gets every chunk of the link
// and returns the chunk to forward (nil for none) and whether to close the
// link instead; the link closes, too, when its input ends.
func EachChunk(stub *toxics.ToxicStub, f func(c *stream.StreamChunk) (fwd *stream.StreamChunk, closeLink bool)) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			fwd, closeLink := f(c)
			if closeLink {
				stub.Close()
				return
			}
			if fwd != nil {
				stub.Output <- fwd
			}
		}
	}
}

func init() { toxics.Register(countToxicType, new(countToxic)) }

// addCounter starts counting the client-to-server bytes of proxy p, which
// listens on listen.
func (ps *Proxies) addCounter(name, listen string) error {
	counters.Store(listen, new(atomic.Int64))
	p, err := ps.Proxy(name)
	if err != nil {
		return err
	}
	body := fmt.Sprintf(`{"name":"count","type":%q,"stream":"upstream","toxicity":1,"attributes":{"counter":%q}}`, countToxicType, listen)
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		counters.Delete(listen)
		return fmt.Errorf("count the traffic of proxy %s: %w", name, err)
	}
	return nil
}

// Traffic returns how many bytes clients have sent through the proxy
// listening on addr, and whether addr is a live proxy of this process at
// all (false for a server's own address, or a proxy already closed).
func Traffic(addr string) (bytes int64, proxied bool) {
	v, ok := counters.Load(addr)
	if !ok {
		return 0, false
	}
	return v.(*atomic.Int64).Load(), true
}
