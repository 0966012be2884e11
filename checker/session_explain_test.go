package checker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestSessionKillStory checks that a double holder whose first holder's
// database session was ended says so: when the session was terminated,
// that the server released the lock, and when the client wrote anyway.
func TestSessionKillStory(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("testdata", "histories", "session-kill-double-holder", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	res := Default(Options{}).Check(context.Background(), h)
	for _, a := range res.Anomalies {
		if a.Kind != "double-holder" {
			continue
		}
		for _, want := range []string{
			"Process 1's database session was terminated at 4.20 s",
			"the server released its lock",
			"wrote by 5.10 s",
		} {
			if !strings.Contains(a.Explanation, want) {
				t.Errorf("story lacks %q: %s", want, a.Explanation)
			}
		}
		return
	}
	t.Fatalf("no double holder: %+v", res.Anomalies)
}

// TestSessionKillSentence is a table test of the sentence alone.
func TestSessionKillSentence(t *testing.T) {
	kill := history.Fault{F: history.FSessionKill, Start: 4200e6, End: 7200e6, Targets: []int{1}}
	pause := history.Fault{F: history.FPause, Start: 4200e6, End: 7200e6, Targets: []int{1}}
	cases := []struct {
		name   string
		faults []history.Fault
		stale  int
		until  int64
		want   string
	}{
		{"kill of the stale holder", []history.Fault{kill}, 1, 5100e6, "terminated at 4.20 s"},
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
