package clusters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxies is an in-process Toxiproxy server holding one proxy per link. Each
// proxy listens on a free 127.0.0.1 port and forwards to one node.
type Proxies struct {
	server *toxiproxy.ApiServer
	mu     sync.Mutex
	byName map[string]*toxiproxy.Proxy
	cut    map[string]bool
	log    *closableLog
}

// closableLog drops writes once closed: Toxiproxy's goroutines may still log
// while the proxies shut down. It also drops every write after one fails
// (a full disk): the proxy log is best-effort, and an error returned to
// zerolog would be printed to stderr once per event.
type closableLog struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
	failed bool
}

func (l *closableLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.failed {
		return len(b), nil
	}
	if _, err := l.w.Write(b); err != nil {
		l.failed = true
	}
	return len(b), nil
}

func (l *closableLog) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// NewProxies returns an empty proxy set that logs to log (nil: discard).
// Close stops writing to log.
func NewProxies(log io.Writer) *Proxies {
	if log == nil {
		log = io.Discard
	}
	cl := &closableLog{w: log}
	logger := zerolog.New(cl).With().Timestamp().Logger().Level(zerolog.WarnLevel)
	return &Proxies{
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), logger),
		byName: make(map[string]*toxiproxy.Proxy),
		cut:    make(map[string]bool),
		log:    cl,
	}
}

// proxyListenTries bounds the ports Add tries for one proxy: a port
// FreePort claimed can still be bound by a process that is not lockcheck
// in between.
const proxyListenTries = 3

// Add starts a proxy named name in front of upstream and returns the address
// clients should dial. It listens on a port FreePort claimed, below the
// kernel's ephemeral range: a proxy stopped and started again (Disable,
// Enable: a restarted node, an isolated member) must find its port free,
// and a port of that range could meanwhile be any outgoing connection's
// local port (seen: "restart proxy ...: bind: address already in use",
// with two runs at a time).
func (ps *Proxies) Add(name, upstream string) (string, error) {
	var p *toxiproxy.Proxy
	var err error
	for range proxyListenTries {
		port, perr := FreePort()
		if perr != nil {
			return "", fmt.Errorf("start proxy %s -> %s: %w", name, upstream, perr)
		}
		p = toxiproxy.NewProxy(ps.server, name, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), upstream)
		if err = ps.server.Collection.Add(p, true); err == nil {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("start proxy %s -> %s: %w", name, upstream, err)
	}
	ps.mu.Lock()
	ps.byName[name] = p
	ps.mu.Unlock()
	if err := ps.addCounter(name, p.Listen); err != nil {
		return "", err
	}
	return p.Listen, nil
}

// Proxy returns the Toxiproxy proxy called name.
func (ps *Proxies) Proxy(name string) (*toxiproxy.Proxy, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.byName[name]
	if !ok {
		return nil, fmt.Errorf("no proxy named %q", name)
	}
	return p, nil
}

// ListenAddr returns where the proxy called name listens.
func (ps *Proxies) ListenAddr(name string) (string, error) {
	p, err := ps.Proxy(name)
	if err != nil {
		return "", err
	}
	return p.Listen, nil
}

// Names returns the names of the proxies whose names start with prefix.
func (ps *Proxies) Names(prefix string) []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var names []string
	for n := range ps.byName {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	return names
}

// Cut makes the proxy drop everything in both directions: a timeout toxic
// with timeout 0 on the upstream and downstream streams. Connections stay
// open and hang, as behind a network partition.
func (ps *Proxies) Cut(name string) error {
	p, err := ps.Proxy(name)
	if err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.cut[name] {
		return nil
	}
	for _, stream := range []string{"upstream", "downstream"} {
		body := fmt.Sprintf(`{"name":"partition_%s","type":"timeout","stream":%q,"toxicity":1,"attributes":{"timeout":0}}`, stream, stream)
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("cut proxy %s (%s): %w", name, stream, err)
		}
	}
	ps.cut[name] = true
	return nil
}

// Restore removes the toxics Cut added. Restoring an intact proxy is a no-op.
func (ps *Proxies) Restore(ctx context.Context, name string) error {
	p, err := ps.Proxy(name)
	if err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.cut[name] {
		return nil
	}
	for _, stream := range []string{"upstream", "downstream"} {
		if err := p.Toxics.RemoveToxic(ctx, "partition_"+stream); err != nil {
			return fmt.Errorf("restore proxy %s (%s): %w", name, stream, err)
		}
	}
	ps.cut[name] = false
	return nil
}

// Disable stops the proxy: it closes its connections and refuses new ones.
func (ps *Proxies) Disable(name string) error {
	p, err := ps.Proxy(name)
	if err != nil {
		return err
	}
	p.Stop()
	return nil
}

// Enable starts a stopped proxy again on the same address.
func (ps *Proxies) Enable(name string) error {
	p, err := ps.Proxy(name)
	if err != nil {
		return err
	}
	if err := p.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
		return fmt.Errorf("restart proxy %s on %s: %w", name, p.Listen, err)
	}
	return nil
}

// CutAll cuts every named proxy (see Cut) and joins the errors.
func (ps *Proxies) CutAll(names []string) error { return each(names, ps.Cut) }

// RestoreAll restores every named proxy (see Restore) and joins the errors.
func (ps *Proxies) RestoreAll(ctx context.Context, names []string) error {
	return each(names, func(n string) error { return ps.Restore(ctx, n) })
}

// DisableAll stops every named proxy (see Disable) and joins the errors.
func (ps *Proxies) DisableAll(names []string) error { return each(names, ps.Disable) }

// EnableAll starts every named proxy again (see Enable) and joins the errors.
func (ps *Proxies) EnableAll(names []string) error { return each(names, ps.Enable) }

// each applies f to every name, going on after an error, and joins the
// errors: a fault or its undo reaches every link it can.
func each(names []string, f func(string) error) error {
	var errs []error
	for _, n := range names {
		errs = append(errs, f(n))
	}
	return errors.Join(errs...)
}

// Close stops every proxy and stops logging.
func (ps *Proxies) Close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.byName {
		p.Stop()
		counters.Delete(p.Listen)
	}
	ps.log.close()
}

// LinkNames returns name(0), ..., name(n-1): the names of one worker slot's
// proxies to each of n nodes, or of each of n worker slots' proxies to one
// node, as a topology's Partition, Heal, Kill and Restart address them.
func LinkNames(n int, name func(i int) string) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = name(i)
	}
	return names
}

// OpenProxies makes logDir when missing, opens its toxiproxy.log (the
// proxies' own log) and returns a Proxies that writes to it. Every service
// keeps its proxies this way; the caller closes the log after the proxies.
func OpenProxies(logDir string) (*Proxies, *os.File, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create log dir: %w", err)
	}
	lg, err := os.Create(filepath.Join(logDir, "toxiproxy.log"))
	if err != nil {
		return nil, nil, fmt.Errorf("create proxy log: %w", err)
	}
	return NewProxies(lg), lg, nil
}
