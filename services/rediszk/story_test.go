package rediszk

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// sec is a whole number of seconds, for exact boundaries.
func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// TestCombinedHalves is a table test of what the story says of each half.
func TestCombinedHalves(t *testing.T) {
	const s = time.Second

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
			h := history.CombinedHold{Process: 1, Later: 2, Granted: 1 * s, Taken: c.taken, Lease: c.lease, Faults: c.faults, Events: c.events, Grace: 2 * s}
			hv := tellHalves(h)
			if !strings.Contains(hv.redis, c.redis) {
				t.Errorf("redis half %q, want one containing %q", hv.redis, c.redis)
			}
			if (c.zk == "") != (hv.zk == "") || !strings.Contains(hv.zk, c.zk) {
				t.Errorf("zookeeper half %q, want one containing %q", hv.zk, c.zk)
			}
			if got := hv.sentence(h); c.zk == "" && !strings.Contains(got, "its ZooKeeper node was gone by") {
				t.Errorf("sentence without zookeeper evidence: %q", got)
			}
		})
	}
}

func TestCombinedHalvesBoundaries(t *testing.T) {
	ev := func(at float64, detail string) *history.Op {
		return &history.Op{Time: sec(at), Process: 3, Type: history.Info, F: history.FEvent, Value: &history.Value{Extra: &history.Extra{Detail: detail}}}
	}
	pause := func(from, to float64, targets ...int) history.Fault {
		return history.Fault{F: history.FPause, Start: sec(from), End: sec(to), Targets: targets}
	}
	kill := history.Fault{F: history.FKill, Start: sec(10.5), End: sec(11), Nodes: []string{"lock0"}}
	killTargeted := history.Fault{F: history.FKill, Start: sec(10.5), End: sec(11), Targets: []int{3}}
	tests := []struct {
		name      string
		taken     float64
		lease     time.Duration
		faults    []history.Fault
		events    []*history.Op
		redis, zk string
	}{
		{"no lease", 12, 0, []history.Fault{pause(10, 12, 3)}, nil,
			"its Redis key was gone by 12.00 s", ""},
		{"expired exactly at the later grant", 12, 2 * time.Second, nil, nil,
			"its Redis key expired by 12.00 s, its PX lease of 2.00 s after the grant", ""},
		{"lost before its lease, with a node kill", 11, 2 * time.Second, []history.Fault{kill}, nil,
			"its Redis key was gone by 11.00 s, before its PX lease of 2.00 s ran out at 12.00 s: lost, not expired (kill of node lock0 from 10.50 s to 11.00 s)", ""},
		{"lost before its lease, a kill of a process is not named", 11, 2 * time.Second, []history.Fault{killTargeted}, nil,
			"its Redis key was gone by 11.00 s, before its PX lease of 2.00 s ran out at 12.00 s: lost, not expired", ""},
		{"lost before its lease, a clock jump is named", 11, 2 * time.Second,
			[]history.Fault{{F: history.FClock, Start: sec(10.5), End: sec(11), Nodes: []string{"lock0"}}}, nil,
			"its Redis key was gone by 11.00 s, before its PX lease of 2.00 s ran out at 12.00 s: lost, not expired (clock jump of node lock0 from 10.50 s to 11.00 s)", ""},
		{"lost before its lease, a leader pause is not named", 11, 2 * time.Second,
			[]history.Fault{{F: history.FPause, Start: sec(10.5), End: sec(11), Nodes: []string{"zk1"}}}, nil,
			"its Redis key was gone by 11.00 s, before its PX lease of 2.00 s ran out at 12.00 s: lost, not expired", ""},
		{"pause longer than the session", 20, time.Second, []history.Fault{pause(10, 14, 3)}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant",
			"its ZooKeeper session expired on the servers within about one session timeout (1.00 s) of the pause's start, by 11.00 s"},
		{"partition, the successor sooner than the timeout", 10.5, time.Second,
			[]history.Fault{{F: history.FPartition, Start: sec(10), End: sec(14), Targets: []int{3}}}, nil,
			"its Redis key was gone by 10.50 s, before its PX lease of 1.00 s ran out at 11.00 s: lost, not expired",
			"its ZooKeeper session expired on the servers within about one session timeout (1.00 s) of the partition's start, by 10.50 s"},
		{"pause exactly as long as the session", 20, time.Second, []history.Fault{pause(10, 11, 3)}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant", ""},
		{"pause of another process", 20, time.Second, []history.Fault{pause(10, 14, 4)}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant", ""},
		{"pause starting exactly one grace before the grant", 20, time.Second, []history.Fault{pause(8, 14, 3)}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant",
			"its ZooKeeper session expired on the servers within about one session timeout (1.00 s) of the pause's start, by 9.00 s"},
		{"pause starting more than a grace before the grant", 20, time.Second, []history.Fault{pause(7.9, 14, 3)}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant", ""},
		{"pause starting exactly at the later grant", 20, time.Second, []history.Fault{pause(20, 24, 3)}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant",
			"its ZooKeeper session expired on the servers within about one session timeout (1.00 s) of the pause's start, by 20.00 s"},
		{"pause starting after the later grant", 20, time.Second, []history.Fault{pause(20.5, 24, 3)}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant", ""},
		{"a kill is no pause", 20, time.Second, []history.Fault{{F: history.FKill, Start: sec(10), End: sec(14), Targets: []int{3}}}, nil,
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant", ""},
		{"told, with a pause", 20, time.Second, []history.Fault{pause(10, 14, 3)},
			[]*history.Op{ev(5, "session 0x1f connected"), ev(9, "session 0x1f expired"), ev(14.5, "session 0x1f expired")},
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant",
			"its ZooKeeper session 0x1f expired on the servers within about one session timeout (1.00 s) of the pause's start, by 11.00 s (its client was told at 14.50 s)"},
		{"told at the grant, no fault", 20, time.Second, nil,
			[]*history.Op{ev(10, "session 0x1f expired")},
			"its Redis key expired by 11.00 s, its PX lease of 1.00 s after the grant",
			"its ZooKeeper session 0x1f expired (its client was told at 10.00 s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The checker names the session the client named before the
			// grant: every case with events names 0x1f.
			session := ""
			if len(tt.events) > 0 {
				session = "session 0x1f"
			}
			got := tellHalves(history.CombinedHold{Process: 3, Granted: sec(10), Taken: sec(tt.taken), Lease: tt.lease, Faults: tt.faults, Events: tt.events, Grace: 2 * time.Second, Release: "rel", Session: session})
			if got.redis != tt.redis {
				t.Errorf("redis\n got %q\nwant %q", got.redis, tt.redis)
			}
			if got.zk != tt.zk {
				t.Errorf("zk\n got %q\nwant %q", got.zk, tt.zk)
			}
			if got.release != "rel" {
				t.Errorf("release %q", got.release)
			}
		})
	}
	// Told at time 0: a grant at 0 and an event at 0.
	got := tellHalves(history.CombinedHold{Process: 3, Taken: sec(5), Lease: time.Second, Events: []*history.Op{ev(0, "session 0x2 expired")}, Grace: 2 * time.Second, Session: "session 0x2"})
	if got.zk != "its ZooKeeper session 0x2 expired (its client was told at 0.00 s)" {
		t.Errorf("told at 0: %q", got.zk)
	}
}
