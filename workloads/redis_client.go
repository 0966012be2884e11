package workloads

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

// newRedisClient returns a client with short timeouts and no hidden retries,
// so a partition gives a prompt error instead of a hang or a silent retry.
func newRedisClient(addr string, timeout time.Duration) *redis.Client {
	return redis.NewClient(strictOptions([]string{addr}, timeout).Simple())
}

// strictOptions are the options every Redis client of lockcheck's starts
// from (a single node's, a failover client's, a cluster client's): RESP2,
// no CLIENT SETINFO, no retries, timeout for dialing, reading, writing and
// waiting for one of a pool of two connections.
func strictOptions(addrs []string, timeout time.Duration) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:           addrs,
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     timeout,
		ReadTimeout:     timeout,
		WriteTimeout:    timeout,
		PoolSize:        2,
		PoolTimeout:     timeout,
	}
}

// newLockClient returns the client of a single-master lock design: to the
// one lock node, or (when the config names Sentinels) to whichever master
// the Sentinels name.
func newLockClient(cfg Config, design string) (*redis.Client, error) {
	if len(cfg.DiscoveryAddrs) > 0 {
		return newFailoverClient(cfg), nil
	}
	if len(cfg.LockAddrs) < 1 {
		return nil, fmt.Errorf("%s needs one lock node address", design)
	}
	return newRedisClient(cfg.LockAddrs[0], cfg.OpTimeout()), nil
}

// plainDel deletes key unconditionally, as DEL does, and returns the owner
// value it deleted. It is DEL made observable: one script that reads the value
// and deletes the key atomically, so the history can show whose key a release
// removed. What it deletes is exactly what DEL deletes.
var plainDel = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
return v`)

// releaseByDel runs plainDel and reports whether the deleted key was ours.
func releaseByDel(ctx context.Context, c redis.Scripter, key string, g Grant) (*history.Value, error) {
	v, err := plainDel.Run(ctx, c, []string{key}).Text()
	if errors.Is(err, redis.Nil) {
		return &history.Value{Released: history.Bool(false)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release %s by DEL: %w", key, err)
	}
	return &history.Value{Released: history.Bool(v == g.Owner), Extra: &history.Extra{DeletedOwner: v}}, nil
}

// newFailoverClient returns go-redis's failover client: it asks the
// Sentinels for the master on every new connection and drops its
// connections to a master the Sentinels replaced. Timeouts and retries are
// those of newRedisClient. Every address it dials (a Sentinel, or the
// master a Sentinel names) goes through cfg.AddrMap to this worker's own
// proxy; an address missing from the map is refused rather than dialed
// around the proxies.
func newFailoverClient(cfg Config) *redis.Client {
	timeout := cfg.OpTimeout()
	o := strictOptions(cfg.DiscoveryAddrs, timeout)
	o.MasterName = cfg.MasterName
	o.Dialer = mappedDialer(cfg.AddrMap, timeout)
	c := redis.NewFailoverClient(o.Failover())
	c.AddHook(dialFailed{})
	return c
}

// mappedDialer dials the proxy m names for an address; an address that is
// itself one of the proxies is dialed as is. The connection reports the
// address asked for as its remote address, so the failover client can tell
// which master a connection goes to.
func mappedDialer(m map[string]string, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	own := make(map[string]bool, len(m))
	for _, to := range m {
		own[to] = true
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		to, ok := m[addr]
		if !ok && !own[addr] {
			return nil, &net.OpError{Op: "dial", Net: network,
				Err: fmt.Errorf("%s is not in the worker's address map: dialing it would bypass the proxies", addr)}
		}
		if !ok {
			to = addr
		}
		d := net.Dialer{Timeout: timeout}
		c, err := d.DialContext(ctx, network, to)
		if err != nil {
			return nil, err
		}
		return announcedConn{Conn: c, remote: textAddr(addr)}, nil
	}
}

// announcedConn is a connection to a proxy that names the address it
// stands for as its remote address.
type announcedConn struct {
	net.Conn
	remote net.Addr
}

func (c announcedConn) RemoteAddr() net.Addr { return c.remote }

// textAddr is a TCP address given as host:port.
type textAddr string

func (a textAddr) Network() string { return "tcp" }
func (a textAddr) String() string  { return string(a) }

// dialFailed is a go-redis hook that marks every failed dial as one, also
// when the failover client failed before dialing because no Sentinel
// answered: no command was sent, so the operation certainly had no effect
// (Classify maps it to fail).
type dialFailed struct{}

func (dialFailed) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		var op *net.OpError
		if err != nil && !(errors.As(err, &op) && op.Op == "dial") {
			err = &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return c, err
	}
}

func (dialFailed) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (dialFailed) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
