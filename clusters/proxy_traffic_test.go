package clusters

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestProxyTrafficCounts checks that a proxy counts what clients send
// through it, that a server's own address is not a proxy, and that a
// closed proxy is forgotten.
func TestProxyTrafficCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	ps := NewProxies(nil)
	addr, err := ps.Add("w0-n0", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := Traffic(addr); !ok || n != 0 {
		t.Fatalf("fresh proxy: %d bytes, proxied %v; want 0, true", n, ok)
	}
	if _, ok := Traffic(ln.Addr().String()); ok {
		t.Error("the server's own address counts as a proxy")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, _ := Traffic(addr)
		if n == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy counted %d bytes, want 6", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ps.Close()
	if _, ok := Traffic(addr); ok {
		t.Error("a closed proxy still counts as one")
	}
}
