package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// crashAtFailpointHistory: process 3 takes the key with SETNX, reports that it
// is stopped at the setnx-expire failpoint, and is killed there by the crash
// nemesis; its acquire ends in info and it is retired. When atFailpoint is
// false, process 3 had already completed its acquire (failed) when it was
// killed, so the failpoint stop was over. Then acquires fail for 10 s.
func crashAtFailpointHistory(atFailpoint bool) history.History {
	b := (&builder{}).cycles(5, 0, 1, 0, false)
	b.add(1.00, 3, history.Invoke, history.FAcquire, "k", nil)
	b.add(1.01, 3, history.Info, history.FEvent, "", &history.Value{
		Extra: &history.Extra{Detail: "failpoint setnx-expire: between SETNX and PEXPIRE of k (the key has no TTL yet)"},
	})
	if !atFailpoint {
		b.add(1.05, 3, history.Fail, history.FAcquire, "k", nil)
		b.add(1.06, 3, history.Invoke, history.FRelease, "k", nil)
	}
	b.fault(history.FKillWorker, 1.50, 2.00, 3)
	if atFailpoint {
		b.add(1.51, 3, history.Info, history.FAcquire, "k", nil)
	} else {
		b.add(1.51, 3, history.Info, history.FRelease, "k", nil)
	}
	b.crash(3, 1.52)
	for i := range 20 {
		t := 2.0 + float64(i)*0.5
		b.acquireFail(1+i%2, t, t+0.1)
	}
	return b.build()
}

func TestLivenessCrashAtFailpoint(t *testing.T) {
	runCases(t, NewLiveness(Options{StuckBound: 3 * time.Second}), []checkerCase{
		{name: "killed at failpoint", h: crashAtFailpointHistory(true), want: Invalid, kinds: []string{"stuck-lock"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stuck-lock")
				for _, want := range []string{
					"A kill-worker of process 3 from 1.50 s to 2.00 s was in force.",
					"Process 3 was killed by the crash nemesis (kill-worker at 1.50 s) while stopped at a failpoint in its acquire of k (begun at 1.00 s), which its client reported at 1.01 s: \"failpoint setnx-expire: between SETNX and PEXPIRE of k (the key has no TTL yet)\".",
					"key k has no TTL",
				} {
					if !strings.Contains(a.Explanation, want) {
						t.Errorf("explanation lacks %q:\n%s", want, a.Explanation)
					}
				}
			}},
		{name: "killed after the failpoint", h: crashAtFailpointHistory(false), want: Invalid, kinds: []string{"stuck-lock"},
			inspect: func(t *testing.T, r Result) {
				a := find(t, r, "stuck-lock")
				if strings.Contains(a.Explanation, "failpoint in its acquire") || !strings.Contains(a.Explanation, "kill-worker of process 3") {
					t.Errorf("a crash after the failpoint stop must be named only as a fault:\n%s", a.Explanation)
				}
			}},
	})
}
