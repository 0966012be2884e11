package checker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestSessionKillStory checks that a double holder whose first holder's
// database session was ended says so: when the session was terminated,
// that the server released the lock, and when the client wrote anyway.
func TestSessionKillStory(t *testing.T) {
	assertGoldenStory(t, "session-kill-double-holder", "double-holder",
		"Process 1's database session was terminated between 1.00 s and 4.20 s",
		"the server released its lock",
		"wrote by 5.10 s")
}

// TestSessionKillSentence is a table test of the sentence alone.
func TestSessionKillSentence(t *testing.T) {
	kill := history.Fault{F: history.FSessionKill, Start: 4200e6, End: 7200e6, Targets: []int{1}}
	aimed := history.Fault{F: history.FSessionKill, Start: 3000e6, Done: 4200e6, End: 7200e6, Targets: []int{1}}
	pause := history.Fault{F: history.FPause, Start: 4200e6, End: 7200e6, Targets: []int{1}}
	cases := []struct {
		name   string
		faults []history.Fault
		stale  int
		until  int64
		want   string
	}{
		{"kill of the stale holder", []history.Fault{kill}, 1, 5100e6, "terminated at 4.20 s"},
		{"a kill aimed for a while: between its invocation and completion", []history.Fault{aimed}, 1, 5100e6, "terminated between 3.00 s and 4.20 s;"},
		{"kill of another process", []history.Fault{kill}, 2, 5100e6, ""},
		{"kill after the hold", []history.Fault{kill}, 1, 4000e6, ""},
		{"a pause is not a kill", []history.Fault{pause}, 1, 5100e6, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := sessionKillSentence(c.faults, c.stale, timeDur(c.until))
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("got %q, want one containing %q", got, c.want)
			}
		})
	}
}

func timeDur(ns int64) time.Duration { return time.Duration(ns) }

// TestSessionTimeoutStory checks that a double holder of a lock that lives
// as long as its database session (Options.Session) blames the server's
// ending of the silent session, not a lease, when the holder was stopped
// for longer than the session timeout; and keeps the lease story otherwise.
func TestSessionTimeoutStory(t *testing.T) {
	pg := &SessionTimeout{Server: "PostgreSQL", Settings: "idle_session_timeout", Timeout: 2 * time.Second}
	cases := []struct {
		name    string
		session *SessionTimeout
		want    string
	}{
		{"database session", pg, "A pause of process 3 from 2.40 s to 5.40 s was in force: the PostgreSQL server ended its silent database session " +
			"after 2.00 s (its session timeout: idle_session_timeout) and released its lock while it was stopped."},
		{"unnamed server", &SessionTimeout{Timeout: time.Second}, "was in force: the database server ended its silent database session " +
			"after 1.00 s (its session timeout) and released its lock while it was stopped."},
		{"pause shorter than the timeout", &SessionTimeout{Server: "MariaDB", Timeout: 4 * time.Second}, "was in force: its lease ran out while it was stopped."},
		{"no session", nil, "was in force: its lease ran out while it was stopped."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewOverlap(Options{Session: c.session}).Check(context.Background(), doubleHolderPause())
			a := find(t, r, "double-holder")
			if !strings.HasSuffix(a.Explanation, c.want) {
				t.Errorf("explanation:\n got %s\nwant one ending %s", a.Explanation, c.want)
			}
		})
	}
}

// TestSessionEnded is a table test of the clause alone: a pause or a
// partition of the holder longer than the timeout ends its session.
func TestSessionEnded(t *testing.T) {
	s := &SessionTimeout{Server: "MariaDB", Settings: "wait_timeout", Timeout: 2 * time.Second}
	fault := func(f string, from, to float64, p int) history.Fault {
		return history.Fault{F: f, Start: time.Duration(from * 1e9), End: time.Duration(to * 1e9), Targets: []int{p}}
	}
	cases := []struct {
		name   string
		faults []history.Fault
		want   bool
	}{
		{"long pause", []history.Fault{fault(history.FPause, 1, 4, 1)}, true},
		{"long partition", []history.Fault{fault(history.FPartition, 1, 4, 1)}, true},
		{"short pause", []history.Fault{fault(history.FPause, 1, 2.5, 1)}, false},
		{"another process", []history.Fault{fault(history.FPause, 1, 4, 2)}, false},
		{"a kill is no silence", []history.Fault{fault(history.FSessionKill, 1, 4, 1)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := sessionEnded(s, c.faults, 1)
			if (got != "") != c.want {
				t.Errorf("got %q, want a clause: %v", got, c.want)
			}
			if c.want && !strings.HasPrefix(got, "the MariaDB server ended its silent database session after 2.00 s (its session timeout: wait_timeout)") {
				t.Errorf("got %q", got)
			}
		})
	}
}
