package runner

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// toldTest returns a run of lock under pause whose holders run many short
// critical sections per grant, and whose pauses (4 s) outlast the lease
// (etcd's 2 s TTL for a 1 s lease, Redis's 1 s key, ZooKeeper's 1 s
// session): the server releases a paused holder's lock, and the holder's
// lock client tells it when it runs again, while it still has sections to
// run.
func toldTest(t *testing.T, lock string) Test {
	tt := quick(t, lock, "pause", false)
	tt.Workers, tt.Time, tt.Lease = 3, patient, time.Second
	tt.NemesisInterval, tt.NemesisDuration = 2*time.Second, 4*time.Second
	tt.Sections, tt.Think = 50, 20*time.Millisecond
	return tt
}

// untilWindow holds once the windows checker finds a window of which want
// holds.
func untilWindow(want func(checker.Window) bool) func(history.History) bool {
	return func(h history.History) bool {
		res := checker.NewWindows().Check(context.Background(), h)
		ws, _ := res.Stats["windows"].([]checker.Window)
		for _, w := range ws {
			if want(w) {
				return true
			}
		}
		return false
	}
}

// runWindows runs tt and returns its windows.
func runWindows(t *testing.T, tt Test) []checker.Window {
	t.Helper()
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := windowsOf(t, out.Result).Stats["windows"].([]checker.Window)
	assertNoChildren(t)
	return ws
}

// TestWindowToldThenWrote runs etcd-mutex with the planted worker that
// ignores its lock client (workloads.PlantIgnoreLoss) under pause: a
// holder whose lease ended while it was stopped is told so by its
// session's end when it runs again, and goes on writing: its window is
// classed "wrote after it was told".
func TestWindowToldThenWrote(t *testing.T) {
	tt := toldTest(t, "etcd-mutex")
	tt.WorkerEnv = append(tt.WorkerEnv, workloads.PlantEnv+"="+workloads.PlantIgnoreLoss)
	tt.Until = untilWindow(func(w checker.Window) bool { return w.Class == checker.ClassToldThenWrote })
	ws := runWindows(t, tt)
	for _, w := range ws {
		if w.Class != checker.ClassToldThenWrote {
			continue
		}
		if w.After == 0 || w.Learned == nil || !strings.Contains(w.LearnedBy, "its lock client reported") {
			t.Errorf("a window told by %q with %d accesses after it: %+v", w.LearnedBy, w.After, w)
		}
		b, _ := json.Marshal(w)
		t.Logf("%s", b)
		return
	}
	b, _ := json.Marshal(ws)
	t.Fatalf("no window classed %q: %s", checker.ClassToldThenWrote, b)
}

// TestWindowCorrectDesignsStop runs bundled designs as shipped under the
// same pauses and sections until the server released a holder's lock:
// none of their windows is classed "wrote after it was told" (the etcd and
// ZooKeeper clients refuse the next access once they know; redis-set-px
// learns only at its release).
func TestWindowCorrectDesignsStop(t *testing.T) {
	for _, lock := range []string{"redis-set-px", "etcd-mutex", "zk-ephemeral"} {
		t.Run(lock, func(t *testing.T) {
			tt := toldTest(t, lock)
			tt.Until = untilWindow(func(w checker.Window) bool { return w.Learned != nil })
			ws := runWindows(t, tt)
			if len(ws) == 0 {
				t.Fatal("no lost-lock window")
			}
			for _, w := range ws {
				if w.Class == checker.ClassToldThenWrote {
					b, _ := json.Marshal(w)
					t.Errorf("a shipped %s wrote after it was told: %s", lock, b)
				}
			}
		})
	}
}

// TestObserveOff runs with the observer off (--observe=false): no
// server-release op is recorded and the windows checker finds nothing.
func TestObserveOff(t *testing.T) {
	tt := quick(t, "redis-set-px", "none", false)
	tt.NoObserve, tt.Time, tt.Until = true, patient, untilGrants(10)
	out, h := runValid(t, tt)
	for _, op := range h {
		if op.F == history.FServerRelease {
			t.Fatalf("server-release recorded with the observer off: %+v", op)
		}
	}
	if w := windowsOf(t, out.Result); w.Stats["server_releases"] != 0 || w.Stats["probes"] != 0 {
		t.Errorf("windows stats with the observer off: %v", w.Stats)
	}
	assertNoChildren(t)
}

// TestSections: --sections is checked against its range, and the re-run
// command repeats it when it is not the default.
func TestSections(t *testing.T) {
	for _, tc := range []struct {
		n       int
		ok      bool
		command string
	}{{0, true, ""}, {1, true, ""}, {50, true, "--sections 50"}, {-1, false, ""}, {maxSections + 1, false, ""}} {
		tt := Test{Lock: "redis-set-px", Sections: tc.n}
		tt.Defaults()
		if err := tt.Validate(); (err == nil) != tc.ok {
			t.Errorf("--sections %d: %v", tc.n, err)
		}
		if !tc.ok {
			continue
		}
		cmd := strings.Join(Command(tt), " ")
		if tc.command != "" && !strings.Contains(cmd, tc.command) || tc.command == "" && strings.Contains(cmd, "--sections") {
			t.Errorf("--sections %d: re-run command %s", tc.n, cmd)
		}
	}
}
