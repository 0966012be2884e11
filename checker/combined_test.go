package checker

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	_ "github.com/lockcheck/lockcheck/services/rediszk" // registers the combined lock
)

// TestRedisZKStory checks the double-holder story of a combined Redis +
// ZooKeeper lock (redis-zk) whose holder was paused: it says what became of
// each half, with times derived from the grant, the lease, the pause and
// the client's events, and what the stale holder's release found.
func TestRedisZKStory(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("testdata", "histories", "redis-zk-pause-double-holder", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	res := Default(Options{Lease: time.Second}).Check(context.Background(), h)
	a := find(t, res, "double-holder")
	assertTells(t, a.Explanation, []string{
		"its Redis key and its ZooKeeper session 0x1a expired while it was stopped",
		"Process 1 held both halves of the combined lock, and lost both before process 2 took them at 2.20 s",
		"its Redis key expired by 2.00 s, its PX lease of 1.00 s after the grant",
		"its ZooKeeper session 0x1a expired on the servers within about one session timeout (1.00 s) of the pause's start, by 2.00 s (its client was told at 4.01 s)",
		"Its release found: znode already gone, redis key already gone.",
	})
}

// TestCombinedHold checks that a grant counts as combined only when it
// names every half of a registered combined lock.
func TestCombinedHold(t *testing.T) {
	if !(hold{nodes: []string{"redis", "zookeeper"}}).combined() {
		t.Error("a redis-zk grant not counted as combined")
	}
	for _, nodes := range [][]string{{"lock0", "lock1"}, {"redis"}, nil} {
		if (hold{nodes: nodes}).combined() {
			t.Errorf("a grant on %v counted as combined", nodes)
		}
	}
}
