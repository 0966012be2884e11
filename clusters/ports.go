package clusters

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A server's port is chosen before the server binds it, seconds later for
// a JVM. A port the kernel picks (listen on port 0) comes from its
// ephemeral range, the range every outgoing connection on the machine
// takes its local port from, so in between one of them could take it: a
// ZooKeeper member then failed to bind its election port for ten seconds
// and exited in the middle of a run, with several runs at a time. FreePort
// therefore picks below the ephemeral range, where no outgoing connection
// goes, and claims the port for the rest of the process with an abstract
// Unix socket named after it, so that two lockcheck processes starting
// clusters at once never pick the same port, and a node killed and
// restarted finds its port still its own. The claim leaves nothing on
// disk and ends with the process.

// Where FreePort looks: from portFloor up to the start of the kernel's
// ephemeral range (ip_local_port_range), at most claimTries ports.
const (
	portFloor  = 20000
	claimTries = 200
	// maxClaims bounds the claims a process holds (one descriptor each);
	// past it the oldest is let go (its server has long bound its port).
	maxClaims = 2048
)

var claims struct {
	sync.Mutex
	held []net.Listener
}

// FreePort returns a free TCP port on 127.0.0.1 for a server to bind:
// below the kernel's ephemeral range and claimed by this process (see
// above), or, where that range leaves no room below it, one the kernel
// picks.
func FreePort() (int, error) {
	if hi := ephemeralLow(); hi > portFloor+claimTries {
		if p, ok := freePortIn(portFloor, hi, rand.IntN); ok {
			return p, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortIn tries up to claimTries ports of [lo, hi), in the order pick
// gives, and returns the first that no lockcheck process has claimed and
// nothing listens on, claimed.
func freePortIn(lo, hi int, pick func(int) int) (int, bool) {
	for range claimTries {
		p := lo + pick(hi-lo)
		claim, err := net.Listen("unix", portClaim(p))
		if err != nil {
			continue // another lockcheck process's, or ours already
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			claim.Close() // something else listens there
			continue
		}
		l.Close()
		keepClaim(claim)
		return p, true
	}
	return 0, false
}

// portClaim is the abstract Unix socket name that claims port p.
func portClaim(p int) string {
	return "@lockcheck-port-" + strconv.Itoa(p)
}

// keepClaim holds claim until the process ends, or until maxClaims newer
// ones are held.
func keepClaim(claim net.Listener) {
	claims.Lock()
	defer claims.Unlock()
	if len(claims.held) >= maxClaims {
		claims.held[0].Close()
		claims.held = claims.held[1:]
	}
	claims.held = append(claims.held, claim)
}

// ephemeralLow returns the first port of the kernel's ephemeral range, or
// 0 when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return n
}

// ErrPortInUse is wrapped by errors about a server that could not bind the
// free port chosen for it (someone took it in between); set-ups retry
// with another.
var ErrPortInUse = errors.New("port in use")
