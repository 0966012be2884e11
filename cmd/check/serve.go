package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/report"
)

// cmdServe runs `check serve`: a web UI over the store (an index of the
// runs with their verdicts, and their reports and files, the stored
// matrices, and their trend at /trend) until SIGINT or SIGTERM.
func cmdServe(args []string, stdout, stderr io.Writer) (int, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve is cmdServe until ctx is done.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("serve", stderr)
	store := fs.String("store", "store", "store directory to serve")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (loopback only, unless --allow-remote)")
	remote := fs.Bool("allow-remote", false, "allow a non-loopback --addr: anyone who can reach it reads every stored run")
	if help, err := parseFlags(fs, args); help || err != nil {
		return exitError, err
	}
	if fs.NArg() > 0 {
		return exitError, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if st, err := os.Stat(*store); err != nil {
		return exitError, fmt.Errorf("store %s: %w (run a test first, or pass --store)", *store, err)
	} else if !st.IsDir() {
		return exitError, fmt.Errorf("store %s is not a directory", *store)
	}
	loop, err := loopback(*addr)
	if err != nil {
		return exitError, err
	}
	if !loop && !*remote {
		return exitError, fmt.Errorf("refusing to serve on %s, which is not a loopback address (pass --allow-remote to allow it)", *addr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return exitError, fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: withTrend(*store, report.NewServer(*store)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "serving %s at http://%s/ (Ctrl-C stops)\n", *store, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return exitError, fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return exitError, fmt.Errorf("stop serving: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitError, fmt.Errorf("serve: %w", err)
	}
	return exitValid, nil
}

// loopback reports whether addr (host:port) names a loopback host:
// "localhost" or a loopback IP. An empty host (all interfaces) is not.
func loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}
