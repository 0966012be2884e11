package clusters

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DialingProcess returns which of n local processes (pid(i) its pid, 0
// for one not running) owns the other end of c, a connection accepted on
// loopback, or -1: the socket's inode, from /proc/net/tcp, among each
// process's open files.
func DialingProcess(c net.Conn, n int, pid func(i int) int) int {
	ra, ok1 := c.RemoteAddr().(*net.TCPAddr)
	la, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return -1
	}
	inode := socketInode(ra.Port, la.Port)
	if inode == "" {
		return -1
	}
	want := "socket:[" + inode + "]"
	for i := 0; i < n; i++ {
		p := pid(i)
		if p == 0 {
			continue
		}
		fdDir := fmt.Sprintf("/proc/%d/fd", p)
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && l == want {
				return i
			}
		}
	}
	return -1
}

// PeerFronts stands at the addresses a topology's servers announce to one
// another, one listener per server, where every server dials a peer at the
// same address (Sentinel: the master address it hands out, a sentinel's
// announced address), so that no per-pair proxy can be named in the
// config. Each listener finds which server dialed (dialingProcess) and
// forwards the connection to its server's target, unless that pair of
// servers is cut: then it closes it, and a cut closes the pair's open
// connections, so a pair cut both ways looks like a link that refuses.
// A connection from a process that is no server (the harness) is always
// forwarded.
type PeerFronts struct {
	names []string              // the servers, by index
	pid   func() map[string]int // running servers' pids by name

	mu   sync.Mutex
	held HeldCuts                     // pairKey -> faults that cut it
	live map[string]map[net.Conn]bool // pairKey -> open front-side connections
	lns  []net.Listener
	wg   sync.WaitGroup
}

// NewPeerFronts returns fronts for the named servers, whose pids pid
// reports.
func NewPeerFronts(names []string, pid func() map[string]int) *PeerFronts {
	return &PeerFronts{names: names, pid: pid, held: make(HeldCuts), live: make(map[string]map[net.Conn]bool)}
}

// pairKey names the link between servers a and b, either way.
func pairKey(a, b string) string { return min(a, b) + "|" + max(a, b) }

// Add starts the front of server name, which forwards to target() (read
// at each connection), and returns its address.
func (p *PeerFronts) Add(name string, target func() string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen for %s's peers: %w", name, err)
	}
	p.mu.Lock()
	p.lns = append(p.lns, ln)
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c, name, target())
		}
	}()
	return ln.Addr().String(), nil
}

// forward splices c, accepted by name's front, to addr, unless the server
// that dialed is cut off from name.
func (p *PeerFronts) forward(c net.Conn, name, addr string) {
	pids := p.pid()
	from := DialingProcess(c, len(p.names), func(i int) int { return pids[p.names[i]] })
	key := ""
	if from >= 0 && p.names[from] != name {
		key = pairKey(p.names[from], name)
	}
	p.mu.Lock()
	if key != "" && len(p.held[key]) > 0 {
		p.mu.Unlock()
		c.Close() // the pair is cut: the dialer sees its connection end
		return
	}
	if key != "" {
		if p.live[key] == nil {
			p.live[key] = make(map[net.Conn]bool)
		}
		p.live[key][c] = true
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.live[key], c)
		p.mu.Unlock()
	}()
	up, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		c.Close()
		return
	}
	Splice(c, up)
}

// Cut cuts the pairs on behalf of fault, closing their open connections.
func (p *PeerFronts) Cut(fault string, pairs [][2]string) {
	keys := make([]string, len(pairs))
	for i, pr := range pairs {
		keys[i] = pairKey(pr[0], pr[1])
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range p.held.Hold(fault, keys) {
		for c := range p.live[k] {
			c.Close()
		}
	}
}

// Heal lets go of fault's cuts of the pairs (of all of them when pairs is
// nil).
func (p *PeerFronts) Heal(fault string, pairs [][2]string) {
	var keys []string // nil: every pair fault cut
	if pairs != nil {
		keys = make([]string, len(pairs))
		for i, pr := range pairs {
			keys[i] = pairKey(pr[0], pr[1])
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held.Drop(fault, keys)
}

// Close stops every front and waits for their accept loops; open
// connections end with their servers.
func (p *PeerFronts) Close() {
	p.mu.Lock()
	for _, ln := range p.lns {
		ln.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Splice copies both ways between a and b until either side ends, then
// closes both.
func Splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		buf := make([]byte, 32*1024)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	a.Close()
	b.Close()
	<-done
}

// socketInode returns the inode of the IPv4 loopback socket whose local port
// is local and whose remote port is remote, from /proc/net/tcp, or "".
func socketInode(local, remote int) string {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	l := fmt.Sprintf("0100007F:%04X", local)
	r := fmt.Sprintf("0100007F:%04X", remote)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == l && f[2] == r {
			return f[9]
		}
	}
	return ""
}
