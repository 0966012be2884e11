package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

var (
	_ clusters.Wiper     = (*Redis)(nil)
	_ clusters.KeyReader = (*Redis)(nil)
	_ clusters.Wiper     = (*Sentinel)(nil)
	_ clusters.KeyReader = (*Sentinel)(nil)
)

// redisDataFiles are what a redis-server keeps its keys in under its dir:
// the append-only file (Redis 7 writes a directory of parts, older ones a
// single file) and the RDB snapshot.
var redisDataFiles = []string{"appendonlydir", "appendonly.aof", "dump.rdb"}

// RestartEmpty SIGKILLs a lock node, deletes its append-only file and
// snapshot, and starts it again with no keys; its config and clock file
// stay.
func (r *Redis) RestartEmpty(ctx context.Context, node string) error {
	return r.NodeSet.RestartEmpty(ctx, node, func(i int) error { return clusters.RemoveData(r.lock[i].Dir, redisDataFiles...) })
}

// RestartEmpty SIGKILLs a redis node of the Sentinel topology, deletes its
// append-only file and snapshot, and starts it again (see Restart): the
// master, restarted before the sentinels judge it down, comes back an
// empty master, and its replicas resync from it and empty themselves (the
// Redis replication docs' "master with persistence turned off").
func (s *Sentinel) RestartEmpty(ctx context.Context, node string) error {
	_ = s.LagReplication(ctx, node, 0)
	return s.NodeSet.RestartEmpty(ctx, node, func(j int) error { return clusters.RemoveData(s.redis[j].Dir, redisDataFiles...) })
}

// NodeKeys returns the keys a redis node holds, with their values.
func (s *Sentinel) NodeKeys(ctx context.Context, node string) (map[string]string, error) {
	j, err := s.NodeSet.Index(node)
	if err != nil {
		return nil, err
	}
	return redisKeys(ctx, s.redis[j].Addr())
}

// NodeKeys returns the keys a lock node holds, with their values (KEYS *
// and GET on its real address).
func (r *Redis) NodeKeys(ctx context.Context, node string) (map[string]string, error) {
	i, err := r.NodeSet.Index(node)
	if err != nil {
		return nil, err
	}
	return redisKeys(ctx, r.lock[i].Addr())
}

// redisKeys reads every key of the redis-server at addr and its value (a
// key that is no string, or gone between KEYS and GET, has value "").
func redisKeys(ctx context.Context, addr string) (map[string]string, error) {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("read keys of %s: %w", addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	rd := bufio.NewReader(c)
	keys, err := respCall(c, rd, "KEYS", "*")
	if err != nil {
		return nil, fmt.Errorf("read keys of %s: %w", addr, err)
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v, err := respCall(c, rd, "GET", k)
		if err != nil && !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			return nil, fmt.Errorf("read key %s of %s: %w", k, addr, err)
		}
		out[k] = ""
		if len(v) == 1 {
			out[k] = v[0]
		}
	}
	return out, nil
}

// respCall sends one command and reads its reply as strings: a bulk or
// simple string as one, an array as its elements, a nil reply as none; an
// error reply is the error.
func respCall(c net.Conn, rd *bufio.Reader, args ...string) ([]string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return nil, err
	}
	line, err := respLine(rd)
	if err != nil {
		return nil, err
	}
	switch line[0] {
	case '-':
		return nil, errors.New(line[1:])
	case '+', ':':
		return []string{line[1:]}, nil
	case '$':
		s, ok, err := respBulk(rd, line)
		if err != nil || !ok {
			return nil, err
		}
		return []string{s}, nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return nil, fmt.Errorf("bad array header %q", line)
		}
		out := make([]string, 0, max(n, 0))
		for j := 0; j < n; j++ {
			el, err := respLine(rd)
			if err != nil {
				return nil, err
			}
			if el[0] != '$' {
				return nil, fmt.Errorf("array element %q: want a bulk string", el)
			}
			s, ok, err := respBulk(rd, el)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

// respLine reads one reply line without its CRLF.
func respLine(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply line")
	}
	return line, nil
}

// respBulk reads the body of a bulk string whose header is header ("$5");
// ok is false for the nil bulk string ("$-1").
func respBulk(rd *bufio.Reader, header string) (string, bool, error) {
	n, err := strconv.Atoi(header[1:])
	if err != nil {
		return "", false, fmt.Errorf("bad bulk header %q", header)
	}
	if n < 0 {
		return "", false, nil
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(rd, buf); err != nil {
		return "", false, err
	}
	return string(buf[:n]), true, nil
}
