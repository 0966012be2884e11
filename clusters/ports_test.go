package clusters

import (
	"net"
	"strconv"
	"testing"
)

// listenPort binds 127.0.0.1:p, or fails the test.
func listenPort(t *testing.T, p int) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestFreePortBelowEphemeralRange: FreePort's ports lie below the kernel's
// ephemeral range (where no outgoing connection can take them before the
// server binds), are told once, and stay claimed by this process.
func TestFreePortBelowEphemeralRange(t *testing.T) {
	hi := ephemeralLow()
	if hi <= portFloor+claimTries {
		t.Skipf("the ephemeral range starts at %d: FreePort lets the kernel pick", hi)
	}
	seen := map[int]bool{}
	for range 50 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < portFloor || p >= hi {
			t.Fatalf("port %d: want it in [%d, %d)", p, portFloor, hi)
		}
		if seen[p] {
			t.Fatalf("port %d told twice", p)
		}
		seen[p] = true
		if c, err := net.Listen("unix", portClaim(p)); err == nil {
			c.Close()
			t.Fatalf("port %d is not claimed: another process could take it", p)
		}
		listenPort(t, p).Close() // and it is free to bind
	}
}

// TestFreePortInSkipsTakenPorts: a port another lockcheck process claimed
// and a port something listens on are passed over; with none left, no
// port.
func TestFreePortInSkipsTakenPorts(t *testing.T) {
	// Three free, unclaimed ports in a row.
	lo := 0
	for base := portFloor + 5000; base < portFloor+6000 && lo == 0; base += 7 {
		ok := true
		for p := base; p < base+3 && ok; p++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			c, cerr := net.Listen("unix", portClaim(p))
			ok = err == nil && cerr == nil
			if err == nil {
				l.Close()
			}
			if cerr == nil {
				c.Close()
			}
		}
		if ok {
			lo = base
		}
	}
	if lo == 0 {
		t.Skip("no three free ports in a row")
	}
	other, err := net.Listen("unix", portClaim(lo)) // another lockcheck process's
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	busy := listenPort(t, lo+1) // another program's server
	defer busy.Close()
	next := 0
	inOrder := func(n int) int { p := next % n; next++; return p }
	if p, ok := freePortIn(lo, lo+3, inOrder); !ok || p != lo+2 {
		t.Fatalf("got %d %v, want %d: the claimed %d and the bound %d passed over", p, ok, lo+2, lo, lo+1)
	}
	next = 0
	if p, ok := freePortIn(lo, lo+3, inOrder); ok {
		t.Fatalf("got %d: every port is taken (%d now ours), want none", p, lo+2)
	}
}
