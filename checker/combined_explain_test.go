package checker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
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

// TestCombinedHalves is a table test of what the story says of each half.
func TestCombinedHalves(t *testing.T) {
	const s = time.Second
	e := hold{key: "k0", proc: 1, start: 1 * s, end: 5 * s, nodes: []string{halfRedis, halfZooKeeper}}
	pause := history.Fault{F: history.FPause, Start: 1 * s, End: 4 * s, Targets: []int{1}}
	short := history.Fault{F: history.FPause, Start: 1 * s, End: 1500 * time.Millisecond, Targets: []int{1}}
	cut := history.Fault{F: history.FPartition, Start: 1100 * time.Millisecond, End: 4 * s, Targets: []int{1}}
	kill := history.Fault{F: history.FKill, Start: 1200 * time.Millisecond, End: 4 * s, Nodes: []string{"lock0"}, Detail: "SIGKILL redis node lock0"}
	expired := []*history.Op{{Time: 4500 * time.Millisecond, Process: 1, Type: history.Info, F: history.FEvent,
		Value: &history.Value{Extra: &history.Extra{Detail: "session 0x1a expired: lock lost"}}}}
	cases := []struct {
		name      string
		taken     time.Duration
		lease     time.Duration
		faults    []history.Fault
		events    []*history.Op
		redis, zk string
	}{
		{"pause outlasting both", 2500 * time.Millisecond, s, []history.Fault{pause}, nil,
			"its Redis key expired by 2.00 s", "of the pause's start, by 2.00 s"},
		{"partition, the client told", 2500 * time.Millisecond, s, []history.Fault{cut}, expired,
			"its Redis key expired by 2.00 s", "of the partition's start, by 2.10 s (its client was told at 4.50 s)"},
		{"successor granted before the estimate: capped", 2 * s, s, []history.Fault{cut}, nil,
			"its Redis key expired by 2.00 s", "of the partition's start, by 2.00 s"},
		{"a pause shorter than the session timeout", 2500 * time.Millisecond, s, []history.Fault{short}, nil,
			"its Redis key expired by 2.00 s", ""},
		{"key gone before its lease ran out", 1500 * time.Millisecond, s, []history.Fault{kill}, expired,
			"its Redis key was gone by 1.50 s, before its PX lease of 1.00 s ran out at 2.00 s: lost, not expired (kill of node lock0",
			"its ZooKeeper session expired (its client was told at 4.50 s)"},
		{"no lease known", 2500 * time.Millisecond, 0, []history.Fault{pause}, nil,
			"its Redis key was gone by 2.50 s", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hv := combinedHalves(e, c.taken, c.lease, c.faults, c.events, "")
			if !strings.Contains(hv.redis, c.redis) {
				t.Errorf("redis half %q, want one containing %q", hv.redis, c.redis)
			}
			if (c.zk == "") != (hv.zk == "") || !strings.Contains(hv.zk, c.zk) {
				t.Errorf("zookeeper half %q, want one containing %q", hv.zk, c.zk)
			}
			if got := hv.sentence(e, 2, c.taken); c.zk == "" && !strings.Contains(got, "its ZooKeeper node was gone by") {
				t.Errorf("sentence without zookeeper evidence: %q", got)
			}
		})
	}
	if (hold{nodes: []string{"lock0", "lock1"}}).combined() {
		t.Error("a RedLock grant counted as combined")
	}
}
