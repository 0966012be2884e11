package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer that a server goroutine writes while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestServeBadInput(t *testing.T) {
	store := t.TempDir()
	file := filepath.Join(store, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"remote addr", []string{"--store", store, "--addr", "0.0.0.0:8080"}, "refusing to serve on 0.0.0.0:8080, which is not a loopback address (pass --allow-remote to allow it)"},
		{"all interfaces", []string{"--store", store, "--addr", ":8080"}, "not a loopback address"},
		{"remote name", []string{"--store", store, "--addr", "example.org:80"}, "not a loopback address"},
		{"bad addr", []string{"--store", store, "--addr", "127.0.0.1"}, `--addr "127.0.0.1": address 127.0.0.1: missing port`},
		{"missing store", []string{"--store", filepath.Join(store, "nope")}, "no such file or directory (run a test first, or pass --store)"},
		{"store is a file", []string{"--store", file}, "is not a directory"},
		{"bad flag", []string{"--adr", "x"}, "flag provided but not defined: -adr"},
		{"argument", []string{"--store", store, "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code, err := cmdServe(tt.args, &out, &errb)
			if code != exitError || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d, error %v; want exit 3 and %q", code, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q on bad input", out.String())
			}
		})
	}
}

func TestServeLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.2:1": true, "[::1]:8080": true, "localhost:0": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:80": false, "10.0.0.1:80": false, "example.org:80": false,
	} {
		got, err := loopback(addr)
		if err != nil || got != want {
			t.Errorf("loopback(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
}

func TestServeRunsUntilCancelled(t *testing.T) {
	store := t.TempDir()
	dir := filepath.Join(store, "redis-set-px-pause", "20260101T100000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"test.json":    `{"name":"redis-set-px-pause","lock":"redis-set-px","nemesis":"pause","seed":7,"time":20000000000}`,
		"results.json": `{"valid":false,"anomalies":[]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := serve(ctx, []string{"--store", store, "--addr", "127.0.0.1:0"}, &out, &errb)
		done <- result{code, err}
	}()
	urlRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/) `)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no URL printed: %q %q", out.String(), errb.String())
	}
	for path, want := range map[string]string{
		"": `<span class="v invalid">invalid</span>`,
		"runs/redis-set-px-pause/20260101T100000/results.json": `"valid":false`,
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET /%s: %s, body lacks %q", path, resp.Status, want)
		}
	}
	cancel()
	select {
	case r := <-done:
		if r.code != exitValid || r.err != nil {
			t.Errorf("after cancel: exit %d, %v; want 0", r.code, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}
