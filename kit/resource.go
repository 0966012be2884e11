package kit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fenced resource, as docs/worker-protocol.md states its contract: the
// register of lock key k is the storage key resource:k, and the highest
// token the resource has seen for it is resource:k:max-token. A fenced
// read or write compares its token with that highest one and refuses a
// lower token, atomically (one Lua script); a token it takes raises the
// highest. Fencing the read as well as the write is what makes a
// read-modify-write safe.
const (
	fencedRead = `local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}`
	fencedWrite = `local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
redis.call('SET', KEYS[1], ARGV[2])
return {1, t}`
)

// errRejected is the critical section's error when the fenced resource
// refused the token: certain, the write did not happen.
var errRejected = errors.New("stale fencing token rejected by the resource")

// unfenced, set by a test only, leaves the fencing check out of the
// resource (a worker that claims fencing and keeps none).
var unfenced = false

// csValue is a critical section's reply value.
type csValue struct {
	Token    int64  `json:"token"`
	Read     *int64 `json:"read,omitempty"`
	Wrote    *int64 `json:"wrote,omitempty"`
	Rejected string `json:"rejected,omitempty"`
	MaxToken int64  `json:"max_token,omitempty"`
}

// resource is the protected resource on the storage node.
type resource struct {
	conn   *resp
	think  time.Duration
	fenced bool
}

func newResource(cfg Config) *resource {
	return &resource{conn: &resp{addr: cfg.StorageAddr, timeout: max(cfg.OpTimeout(), time.Second)},
		think: time.Duration(cfg.ThinkMS) * time.Millisecond, fenced: cfg.Fencing && !unfenced}
}

func (r *resource) close() { r.conn.close() }

// criticalSection reads the register, thinks, and writes read+1; fenced,
// both accesses carry token. check, when set, is asked before each
// access. The error is Definite when nothing was written.
func (r *resource) criticalSection(ctx context.Context, key string, token int64, check func() error) (*csValue, error) {
	keys := []string{"resource:" + key, "resource:" + key + ":max-token"}
	v := &csValue{Token: token}
	if check != nil {
		if err := check(); err != nil {
			return v, err
		}
	}
	var read int64
	if r.fenced {
		ok, n, err := r.conn.fenced(fencedRead, keys, token)
		if err != nil {
			return v, Definite(fmt.Errorf("fenced read of %s: %w", keys[0], err))
		}
		if !ok {
			v.Rejected, v.MaxToken = "read", n
			return v, errRejected
		}
		read = n
	} else {
		s, err := r.conn.do("GET", keys[0])
		if err != nil {
			return v, Definite(fmt.Errorf("read %s: %w", keys[0], err))
		}
		if s != nil {
			if read, err = strconv.ParseInt(s.(string), 10, 64); err != nil {
				return v, Definite(fmt.Errorf("read %s: %w", keys[0], err))
			}
		}
	}
	next := read + 1
	v.Read, v.Wrote = &read, &next
	select {
	case <-ctx.Done():
		return v, Definite(ctx.Err())
	case <-time.After(r.think):
	}
	if check != nil {
		if err := check(); err != nil {
			return v, err
		}
	}
	if r.fenced {
		ok, n, err := r.conn.fenced(fencedWrite, keys, token, next)
		if err != nil {
			return v, fmt.Errorf("fenced write of %s: %w", keys[0], err)
		}
		if !ok {
			v.Rejected, v.MaxToken = "write", n
			return v, errRejected
		}
		return v, nil
	}
	if _, err := r.conn.do("SET", keys[0], strconv.FormatInt(next, 10)); err != nil {
		return v, fmt.Errorf("write %s: %w", keys[0], err)
	}
	return v, nil
}

// resp is one connection to a Redis server, one command at a time, made
// again after an error.
type resp struct {
	addr    string
	timeout time.Duration
	mu      sync.Mutex
	c       net.Conn
	r       *bufio.Reader
}

func (p *resp) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil {
		p.c.Close()
		p.c = nil
	}
}

// fenced runs a fencing script and returns its {ok, number}.
func (p *resp) fenced(script string, keys []string, args ...int64) (bool, int64, error) {
	argv := []string{"EVAL", script, strconv.Itoa(len(keys))}
	argv = append(argv, keys...)
	for _, a := range args {
		argv = append(argv, strconv.FormatInt(a, 10))
	}
	v, err := p.do(argv...)
	if err != nil {
		return false, 0, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return false, 0, fmt.Errorf("fencing script replied %v", v)
	}
	okv, _ := a[0].(int64)
	n, _ := a[1].(int64)
	return okv == 1, n, nil
}

// do sends one command and reads its reply: a string, an int64, a []any,
// or nil. An error reply is an error; a connection error closes the
// connection.
func (p *resp) do(args ...string) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		c, err := net.DialTimeout("tcp", p.addr, p.timeout)
		if err != nil {
			return nil, err
		}
		p.c, p.r = c, bufio.NewReader(c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_ = p.c.SetDeadline(time.Now().Add(p.timeout))
	if _, err := p.c.Write([]byte(b.String())); err != nil {
		p.c.Close()
		p.c = nil
		return nil, err
	}
	v, err := p.read()
	var rerr respError
	if err != nil && !errors.As(err, &rerr) {
		p.c.Close()
		p.c = nil
	}
	return v, err
}

// respError is an error reply.
type respError string

func (e respError) Error() string { return "redis: " + string(e) }

func (p *resp) read() (any, error) {
	line, err := p.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, respError(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(p.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = p.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply %q", line)
}
