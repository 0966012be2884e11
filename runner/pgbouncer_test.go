package runner

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/internal/servicetest"
)

// TestRunPgBouncer runs PostgreSQL designs through PgBouncer, a real
// pgbouncer in front of a real PostgreSQL: a session advisory lock
// through transaction pooling has two holders with no fault, and its story
// says the lock and its release ran on different server connections; the
// same lock through session pooling, and a transaction advisory lock
// through transaction pooling, are valid.
func TestRunPgBouncer(t *testing.T) {
	cases := []struct {
		lock, service string
		want          checker.Validity
	}{
		{"pg-advisory", "pgbouncer-transaction", checker.Invalid},
		{"pg-advisory", "pgbouncer-session", checker.Valid},
		{"pg-advisory-xact", "pgbouncer-transaction", checker.Valid},
	}
	for _, c := range cases {
		t.Run(c.lock+"@"+c.service, func(t *testing.T) {
			needService(t, c.lock)
			servicetest.NeedService(t, c.service)
			before := dbServers()
			tt := quick(t, c.lock, "none", false)
			tt.Service = c.service
			// No lease may run out in a run without faults (see
			// TestRunSQLDesigns).
			tt.Time, tt.Lease = 3*time.Second, safeLease
			if c.want == checker.Invalid {
				// The pooler's double holder comes at some grant, sooner
				// or later on a loaded machine: wait for it (patient is
				// only the bound), never a count of grants in 3 s.
				tt.Time = patient
				tt.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder", "lock and its release ran on different server connections")
			}
			out, err := runPastPgBouncer801(t, tt)
			if err != nil {
				t.Fatal(err)
			}
			if out.Result.Valid != c.want {
				t.Fatalf("verdict %v, want %v; anomalies %+v", out.Result.Valid, c.want, out.Result.Anomalies)
			}
			if grants(t, out.Dir) == 0 {
				t.Fatal("no grant at all")
			}
			if c.want == checker.Invalid {
				assertStory(t, out.Result, "double-holder", "lock and its release ran on different server connections")
			}
			assertNoChildren(t)
			assertNoNewServers(t, before)
		})
	}
}

// runPastPgBouncer801 runs tt, and runs it again (at most twice more)
// when PgBouncer 1.18 itself exited with its known crash, pgbouncer#801
// ("disconnect_client(): bad client state", after a client closed a
// cancel request first: pgx cancels a statement in flight when a run
// stops its workers). The harness is right to end such a run in an
// error; the crash is the pooler's, not what these cases test.
func runPastPgBouncer801(t *testing.T, tt Test) (Outcome, error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		out, err := Run(context.Background(), tt, io.Discard)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "bad client state") {
			return out, err
		}
		t.Logf("attempt %d ended in PgBouncer's own crash (pgbouncer#801), running again: %v", attempt, err)
	}
}

// TestServiceFlag checks --service: a service that fronts the design's
// own is taken, named in the rerun command and the default name; one that
// does not is refused naming those that do.
func TestServiceFlag(t *testing.T) {
	tt := quick(t, "pg-advisory", "none", false)
	tt.Service = "pgbouncer-transaction"
	tt.Defaults()
	p, err := Resolve(tt)
	if err != nil {
		t.Fatal(err)
	}
	if p.Service.Name != "pgbouncer-transaction" {
		t.Errorf("service %s, want pgbouncer-transaction", p.Service.Name)
	}
	if p.Test.Name != "pg-advisory@pgbouncer-transaction-none" {
		t.Errorf("name %q", p.Test.Name)
	}
	if cmd := strings.Join(Command(p.Test), " "); !strings.Contains(cmd, "--service pgbouncer-transaction") {
		t.Errorf("rerun command lacks --service: %s", cmd)
	}
	tt.Service = "postgres"
	if p, err := Resolve(tt); err != nil || p.Service.Name != "postgres" {
		t.Errorf("the design's own service: %v, %v", p, err)
	}
	for _, bad := range []struct{ lock, service, want string }{
		{"redis-set-px", "pgbouncer-transaction", "--service pgbouncer-transaction: redis-set-px runs on redis, which pgbouncer-transaction does not front (services for it: redis)"},
		{"pg-advisory", "redis", "--service redis: pg-advisory runs on postgres, which redis does not front (services for it: postgres, pgbouncer-session, pgbouncer-transaction)"},
		{"pg-advisory", "pgbouncer", "pgbouncer"},
	} {
		tt := quick(t, bad.lock, "none", false)
		tt.Service = bad.service
		tt.Defaults()
		_, err := Resolve(tt)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s on %s: error %v, want one saying %q", bad.lock, bad.service, err, bad.want)
		}
	}
}
