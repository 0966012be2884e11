package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/servicetest"
	"github.com/lockcheck/lockcheck/workloads"
)

// needService skips a test whose lock service is not installed.
func needService(t *testing.T, lock string) {
	t.Helper()
	servicetest.Need(t, lock)
}

// dbServers returns the pids of the database servers running now
// (postgres and mariadbd processes in lockcheck's temporary directories),
// to tell those a test left behind. A server whose directory's owner
// record names another process is that process's (another test binary
// beside this one under go test ./..., say conformance's) and is left out;
// one whose directory is gone is counted.
func dbServers() map[string]string {
	out := make(map[string]string)
	me, err := clusters.OwnerRecord()
	if err != nil {
		return out
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		dir := serverDir.FindString(cmd)
		if dir == "" {
			continue
		}
		// clusters.TempDir writes the owner record as .owner.
		if rec, err := os.ReadFile(filepath.Join(dir, ".owner")); err == nil && strings.TrimSpace(string(rec)) != me {
			continue
		}
		out[e.Name()] = cmd
	}
	return out
}

// serverDir finds a database server's temporary directory in its command
// line.
var serverDir = regexp.MustCompile(`/\S*/lockcheck-(postgres|mariadb|pgbouncer)-[0-9]+`)

// assertNoNewServers fails when a database server process that was not
// running before is still running (waiting a few seconds for exits).
func assertNoNewServers(t *testing.T, before map[string]string) {
	t.Helper()
	awaitNone(t, 10*time.Second, 100*time.Millisecond, "database server processes left running", func() (left []string) {
		for pid, cmd := range dbServers() {
			if _, ok := before[pid]; !ok {
				left = append(left, pid+" "+cmd)
			}
		}
		return left
	})
}

// TestRunSQLDesigns runs every database design with no fault (valid, with
// at least one grant) and, for the designs that have one, in an unsafe
// cell (invalid, with the anomaly the mechanism causes). Timing on a busy
// machine decides whether a fault lands inside a critical section, so an
// unsafe cell gets up to three seeds to show its anomaly; an error is
// never accepted.
func TestRunSQLDesigns(t *testing.T) {
	cases := []struct {
		lock, nemesis, workload string
		want                    checker.Validity
		mustFind                string
	}{
		{"pg-advisory", "none", "", checker.Valid, ""},
		{"pg-advisory", "session-kill", "", checker.Invalid, "double-holder"},
		{"pg-advisory-xact", "none", "", checker.Valid, ""},
		{"pg-advisory-xact", "session-kill", "", checker.Invalid, "double-holder"},
		{"pg-for-update", "none", "", checker.Valid, ""},
		{"pg-for-update", "none", workloads.WorkloadRegisterInDB, checker.Valid, ""},
		{"pg-for-update", "pause", workloads.WorkloadRegisterInDB, checker.Valid, ""},
		{"pg-for-update", "session-kill", "", checker.Invalid, "double-holder"},
		{"pg-unique-row", "none", "", checker.Valid, ""},
		{"pg-unique-row", "pause", "", checker.Invalid, "double-holder"},
		{"pg-unique-row-client-clock", "none", "", checker.Valid, ""},
		{"pg-optimistic", "none", "", checker.Valid, ""},
		{"mysql-get-lock", "none", "", checker.Valid, ""},
		{"mysql-get-lock", "session-kill", "", checker.Invalid, "double-holder"},
		{"mysql-for-update", "none", "", checker.Valid, ""},
		{"mysql-for-update", "session-kill", "", checker.Invalid, "double-holder"},
		{"mysql-unique-row", "none", "", checker.Valid, ""},
		{"mysql-unique-row", "pause", "", checker.Invalid, "double-holder"},
		{"mysql-unique-row-client-clock", "none", "", checker.Valid, ""},
		{"mysql-optimistic", "none", "", checker.Valid, ""},
	}
	for _, c := range cases {
		name := c.lock + "/" + c.nemesis
		if c.workload != "" {
			name += "/" + c.workload
		}
		t.Run(name, func(t *testing.T) {
			needService(t, c.lock)
			before := dbServers()
			seeds := 1
			if c.want == checker.Invalid {
				seeds = 3
			}
			got := seekVerdict(t, seeds, c.want, c.mustFind, func(seed int) Test {
				tt := quick(t, c.lock, c.nemesis, false)
				tt.Seed, tt.Workload = uint64(seed), c.workload
				if c.nemesis == "none" {
					// No lease may run out in a run without faults: a
					// loaded machine once held a client-clock holder's
					// acquire for 500 ms, and a 1 s lease made a real
					// double holder with no fault.
					tt.Time, tt.Lease = 3*time.Second, safeLease
					tt.Until = untilGrants(20) // 3 s is the bound, 20 grants enough
				}
				// An unsafe cell ends at what it asserts: its first double
				// holder, or under session-kill the first whose story names
				// the ended session (the kill's op must have completed for
				// the story to tell it).
				switch {
				case c.nemesis == "session-kill":
					tt.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), c.mustFind, "database session was terminated ")
				case c.want == checker.Invalid:
					tt.StopOnAnomaly = true
				}
				if c.nemesis == "session-kill" {
					// Session timeouts of 2 x lease that a loaded machine
					// cannot outrun, so the double holder is the kill's.
					tt.Lease = 2 * time.Second
				}
				return tt
			})
			if c.nemesis == "session-kill" {
				assertStory(t, got, "double-holder", "database session was terminated ")
			}
			assertNoChildren(t)
			assertNoNewServers(t, before)
		})
	}
}

// seekVerdict runs mk(seed) for seeds 1, 2, ... up to seeds until a run
// has the cell's verdict, and returns that run's result. A valid cell
// wants valid with a grant and fails the test at once otherwise, but for
// a run its fault missed (not exercised), which gets the next seed. An
// invalid cell wants an anomaly of kind mustFind; a run without one gets
// the next seed, and the test fails when the last had none.
func seekVerdict(t *testing.T, seeds int, want checker.Validity, mustFind string, mk func(seed int) Test) checker.Result {
	t.Helper()
	for seed := 1; ; seed++ {
		out, err := Run(context.Background(), mk(seed), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		got := out.Result
		if want == checker.Valid {
			if got.Valid == checker.Unknown && got.NotExercised != "" && seed < seeds {
				t.Logf("seed %d: not exercised (%s), trying the next seed", seed, got.NotExercised)
				continue
			}
			if got.Valid != checker.Valid {
				t.Fatalf("seed %d: verdict %v, anomalies %+v", seed, got.Valid, got.Anomalies)
			}
			if grants(t, out.Dir) == 0 {
				t.Fatalf("seed %d: no grant at all", seed)
			}
			return got
		}
		if got.Valid == checker.Invalid && kinds(got, false)[mustFind] > 0 {
			return got
		}
		t.Logf("seed %d: verdict %v with %v: the fault missed, trying the next seed", seed, got.Valid, kinds(got, false))
		if seed >= seeds {
			t.Fatalf("no seed of %d found a %s", seeds, mustFind)
		}
	}
}

// assertStory checks that the story of some anomaly of kind says phrase.
func assertStory(t *testing.T, res checker.Result, kind, phrase string) {
	t.Helper()
	var all []string
	for _, a := range res.Anomalies {
		if a.Kind == kind && strings.Contains(a.Explanation, phrase) {
			return
		}
		all = append(all, a.Explanation)
	}
	t.Errorf("no %s story says %q: %s", kind, phrase, strings.Join(all, " | "))
}

// TestRunSQLInterrupted interrupts a database run and checks that no
// server process is left.
func TestRunSQLInterrupted(t *testing.T) {
	for _, lock := range []string{"pg-advisory", "mysql-get-lock"} {
		t.Run(lock, func(t *testing.T) {
			needService(t, lock)
			before := dbServers()
			tt := quick(t, lock, "session-kill", false)
			tt.Time = time.Minute
			runInterruptedAtGrant(t, tt)
			assertNoChildren(t)
			assertNoNewServers(t, before)
		})
	}
}

// TestRunSQLFailedSetup makes a database run's setup fail after the server
// started (its log directory's proxy log is a directory) and checks that
// no server process is left.
func TestRunSQLFailedSetup(t *testing.T) {
	needService(t, "pg-advisory")
	before := dbServers()
	tt := quick(t, "pg-advisory", "none", false)
	tt.Defaults()
	p := mustResolve(t, tt)
	logDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(logDir, "toxiproxy.log"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := p.topology(logDir)
	if err := c.Setup(context.Background()); err == nil {
		c.Teardown(context.Background())
		t.Fatal("setup succeeded")
	}
	assertNoChildren(t)
	assertNoNewServers(t, before)
}

// runInterruptedAtGrant runs tt and interrupts it once its history has a
// grant (the workload under way, however long the setup took), within two
// minutes; the run must end interrupted, without an error.
func runInterruptedAtGrant(t *testing.T, tt Test) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if h := latestHistory(tt.Store); h != nil && hasGrant(h) {
				cancel()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	out, err := Run(ctx, tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted {
		t.Fatal("the run was not interrupted")
	}
}

// latestHistory reads the history of the newest run under store, nil
// when there is none yet.
func latestHistory(store string) history.History {
	dirs, _ := filepath.Glob(filepath.Join(store, "*", "*", "history.jsonl"))
	if len(dirs) == 0 {
		return nil
	}
	h, err := history.ReadFile(dirs[len(dirs)-1])
	if err != nil {
		return nil
	}
	return h
}

func hasGrant(h history.History) bool {
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK {
			return true
		}
	}
	return false
}
