package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/workloads"
)

// envRealAddrs names the variable that gives the bypassing worker the lock
// nodes' real addresses, comma-separated, in the design's order.
const envRealAddrs = "LOCKCHECK_TEST_REAL_LOCK_ADDRS"

// serveBypass is the built-in worker (check worker) with one mistake: it
// rewrites open's config with bypassOpen, so that it dials around its
// proxies. Every other request goes through unchanged.
func serveBypass(in io.Reader, out io.Writer) error {
	real := strings.Split(os.Getenv(envRealAddrs), ",")
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			if _, err := pw.Write(append(bypassOpen(sc.Bytes(), real), '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return workloads.Serve(context.Background(), pr, out)
}

// bypassOpen returns a copy of the request line; in an open request, the
// proxy addresses of lock_addrs are replaced by the lock servers' real
// addresses, real, and every addr_map entry by the announced address
// itself.
func bypassOpen(line []byte, real []string) []byte {
	line = append([]byte(nil), line...)
	var req workloads.Request
	if err := json.Unmarshal(line, &req); err != nil || req.F != workloads.FOpen || req.Config == nil {
		return line
	}
	for i := range req.Config.LockAddrs {
		if i < len(real) && real[i] != "" {
			req.Config.LockAddrs[i] = real[i]
		}
	}
	for announced := range req.Config.AddrMap {
		req.Config.AddrMap[announced] = announced
	}
	if req.Config.AddrMap != nil {
		for _, a := range req.Config.LockAddrs {
			req.Config.AddrMap[a] = a
		}
	}
	b, err := json.Marshal(req)
	if err != nil {
		return line
	}
	return b
}

// realLockAddrs gives the bypassing worker the lock nodes' real addresses.
func realLockAddrs(nodes []clusters.Node) []string {
	var addrs []string
	for _, n := range nodes {
		if n.Role == "lock" {
			addrs = append(addrs, n.Addr)
		}
	}
	return []string{envRealAddrs + "=" + strings.Join(addrs, ",")}
}

// TestProxyBypass checks the step that cuts the worker's links: the
// built-in worker, whose every lock command goes through the proxy
// addresses it was given, keeps the rule; the same worker rewritten to
// dial the lock servers' real addresses (a worker that ignores its proxies)
// breaks it, with DialsAround, and breaks nothing else: its commands under
// the cut succeed where an honest worker's time out.
func TestProxyBypass(t *testing.T) {
	tests := []struct {
		name, lock string
		bypass     bool
	}{
		{"honest", "redis-set-px", false},
		{"bypass", "redis-set-px", true},
		{"bypass-redlock", "redlock", true},
		// A cluster client that ignores addr_map dials the addresses the
		// cluster announces, around its proxies.
		{"bypass-cluster", "redis-cluster", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Worker: []string{os.Args[0]}, Env: []string{"LOCKCHECK_TEST_WORKER=1"}, Lock: tt.lock, Dir: t.TempDir()}
			if tt.bypass {
				o.Env, o.nodeEnv = []string{"LOCKCHECK_TEST_WORKER=bypass"}, realLockAddrs
			}
			start := time.Now()
			rep, err := Check(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("checked in %s", time.Since(start).Round(time.Millisecond))
			if !contains(rep.Checked, RuleProxies) {
				t.Fatalf("rule %q not checked: %v; broken %+v", RuleProxies, rep.Checked, rep.Broken)
			}
			if !tt.bypass {
				if !rep.Conforms() {
					t.Fatalf("broken rules: %+v", rep.Broken)
				}
				return
			}
			if len(rep.Broken) != 1 {
				t.Fatalf("broken %+v, want rule %q alone", rep.Broken, RuleProxies)
			}
			b := rep.Broken[0]
			if b.Rule != RuleProxies || !strings.HasPrefix(b.Detail, DialsAround) {
				t.Fatalf("broken %+v, want rule %q with %q", b, RuleProxies, DialsAround)
			}
			for _, op := range []string{"release k2", "acquire k3"} {
				if !strings.Contains(b.Detail, op) {
					t.Errorf("detail %q does not name %s, which replied ok under the cut", b.Detail, op)
				}
			}
		})
	}
}

// TestBypassOpen checks the test's own bypassing worker: open's lock_addrs
// become the real addresses and addr_map points every announced address at
// itself, while other requests pass unchanged.
func TestBypassOpen(t *testing.T) {
	cfg := workloads.Config{Protocol: workloads.ProtocolVersion, Lock: "redlock",
		LockAddrs: []string{"127.0.0.1:9001", "127.0.0.1:9002"}, AddrMap: map[string]string{"127.0.0.1:7003": "127.0.0.1:9003"}}
	open, _ := json.Marshal(workloads.Request{ID: 1, F: workloads.FOpen, Config: &cfg})
	var got workloads.Request
	if err := json.Unmarshal(bypassOpen(open, []string{"127.0.0.1:7001", "127.0.0.1:7002"}), &got); err != nil {
		t.Fatal(err)
	}
	if got.Config == nil || fmt.Sprint(got.Config.LockAddrs) != "[127.0.0.1:7001 127.0.0.1:7002]" ||
		got.Config.AddrMap["127.0.0.1:7003"] != "127.0.0.1:7003" || got.Config.Lock != "redlock" {
		t.Errorf("rewritten open %+v", got.Config)
	}
	acquire := `{"id":2,"f":"acquire","key":"k0"}`
	if s := string(bypassOpen([]byte(acquire), []string{"x"})); s != acquire {
		t.Errorf("acquire rewritten to %s", s)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
