package cachedir

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoBuildCached: a binary already kept is returned as it is, with no
// go command (PATH is empty) and no progress; without it and without go,
// the error is ErrNoGo.
func TestGoBuildCached(t *testing.T) {
	t.Setenv("PATH", "")
	g := GoBuild{Dir: t.TempDir(), Binary: "srv", What: "example.com/srv@v1", Steps: [][]string{{"build", "-o", "{out}", "."}}}
	if _, err := g.Build(context.Background(), io.Discard); !errors.Is(err, ErrNoGo) {
		t.Fatalf("nothing kept and no go: got %v, want ErrNoGo", err)
	}
	if err := os.WriteFile(g.Path(), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	got, err := g.Build(context.Background(), &progress)
	if err != nil || got != g.Path() || progress.Len() != 0 {
		t.Fatalf("kept: got %q, %v, progress %q; want %s at once", got, err, progress.String(), g.Path())
	}
}

// TestGoBuildFails: a step that fails names the step and the last line of
// its log, and leaves no binary behind.
func TestGoBuildFails(t *testing.T) {
	g := GoBuild{Dir: t.TempDir(), Binary: "x", What: "nothing", Steps: [][]string{{"build", "-o", "{out}", "./no/such/package"}}}
	_, err := g.Build(context.Background(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "go build") || !strings.Contains(err.Error(), "build.log") {
		t.Fatalf("got %v, want an error naming go build and its log", err)
	}
	if _, serr := os.Stat(g.Path()); serr == nil {
		t.Error("a failed build left a binary")
	}
}

// TestLockFileWaits: a second taker waits for the first, and gives up when
// its context ends.
func TestLockFileWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); err == nil {
		t.Fatal("a second Lock took a held lock")
	}
	unlock()
	unlock2, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}
