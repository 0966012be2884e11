package clusters

import (
	"net"
	"strconv"
	"testing"
)

// TestProxyListensOnClaimedPort: a proxy listens on a port FreePort
// claimed, below the kernel's ephemeral range, so that when it is stopped
// and started again (a node restarted, a member isolated) no outgoing
// connection can have taken its port in between; and it starts again on
// that same port.
func TestProxyListensOnClaimedPort(t *testing.T) {
	hi := ephemeralLow()
	if hi <= portFloor+claimTries {
		t.Skipf("the ephemeral range starts at %d: FreePort lets the kernel pick", hi)
	}
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	ps := NewProxies(nil)
	defer ps.Close()
	addr, err := ps.Add("w0-n0", up.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, ps1, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(ps1)
	if port < portFloor || port >= hi {
		t.Fatalf("proxy on port %d: want it in [%d, %d), below the ephemeral range", port, portFloor, hi)
	}
	if c, err := net.Listen("unix", portClaim(port)); err == nil {
		c.Close()
		t.Fatalf("the proxy's port %d is not claimed: another lockcheck process could take it", port)
	}
	if err := ps.Disable("w0-n0"); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("a disabled proxy accepts connections")
	}
	if err := ps.Enable("w0-n0"); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("the proxy did not start again on %s: %v", addr, err)
	}
	c.Close()
}
