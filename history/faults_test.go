package history

import (
	"testing"
	"time"
)

// TestFaultStart: a fault is in force from its start op's completion, or
// from its invocation for the faults whose effect comes before their op
// completes (a failover cuts the master off as it is invoked; a
// session-kill ends the session, and the server releases its locks,
// before it completes).
func TestFaultStart(t *testing.T) {
	for _, tt := range []struct {
		start      string
		fromInvoke bool
	}{
		{FPause, false},
		{FPartition, false},
		{FKill, false},
		{FKillWorker, false},
		{FClock, false},
		{FSkew, false},
		{FClockJump, false},
		{FFailover, true},
		{FSessionKill, true},
	} {
		t.Run(tt.start, func(t *testing.T) {
			end, ok := EndOf(tt.start)
			if !ok {
				t.Fatalf("%s starts no fault", tt.start)
			}
			h := History{
				{Index: 0, Time: 10, Process: NemesisProcess, Type: Invoke, F: tt.start},
				{Index: 1, Time: 15, Process: 1, Type: Info, F: FEvent, Value: &Value{Extra: &Extra{Detail: "database session 7 ended"}}},
				{Index: 2, Time: 20, Process: NemesisProcess, Type: Info, F: tt.start, Value: &Value{Extra: &Extra{Targets: []int{1}}}},
				{Index: 3, Time: 30, Process: NemesisProcess, Type: Invoke, F: end},
				{Index: 4, Time: 31, Process: NemesisProcess, Type: Info, F: end},
			}
			f := h.Faults()
			if len(f) != 1 {
				t.Fatalf("%d faults, want 1: %+v", len(f), f)
			}
			want := time.Duration(20)
			if tt.fromInvoke {
				want = 10
			}
			if f[0].Start != want || f[0].Done != 20 || f[0].End != 31 {
				t.Errorf("%s in force from %d (done at %d) to %d, want from %d (done at 20) to 31", tt.start, f[0].Start, f[0].Done, f[0].End, want)
			}
		})
	}
}
