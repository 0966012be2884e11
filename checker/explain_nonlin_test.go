package checker

import (
	"strings"
	"testing"
	"time"
)

// TestHeldBoth checks the nonlinearizable story of two holds no order can
// separate: plain words (asked, granted, started its release) with no
// talk of "real intervals", every end a hold can have, and ZooKeeper
// tokens as epoch:counter.
func TestHeldBoth(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	hold := func(proc int, token int64, ac, ar, ec int, end *mutexOp) *lockHold {
		return &lockHold{proc: proc, acq: &mutexOp{kind: mAcquire, proc: proc, token: token}, end: end, ac: ms(ac), ar: ms(ar), ec: ms(ec)}
	}
	release := &mutexOp{kind: mRelease}
	for _, tc := range []struct {
		name     string
		e, later *lockHold
		more     int
		tokens   TokenKind
		want     string
	}{
		{"a pause (real-redis-set-px-pause)", hold(3, 310, 2860, 2862, 5870, release), hold(4, 311, 2850, 3870, 3880, release), 230, NumberTokens,
			"No order of these operations fits a lock: whenever each one took effect, between when it was sent and when its answer came, processes 3 and 4 both held lock k0 at 3.87 s. " +
				"Process 3 asked for it at 2.86 s, was granted it at 2.86 s (token 310) and did not start its release until 5.87 s; " +
				"process 4 asked for it at 2.85 s and was granted it at 3.87 s (token 311). " +
				"Before process 3 gave it up, the lock was granted 230 times more. The overlap checker tells who held the lock when."},
		{"never released, no tokens", hold(1, 0, 100, 200, 0, nil), hold(2, 0, 300, 400, 500, release), 1, NumberTokens,
			"No order of these operations fits a lock: whenever each one took effect, between when it was sent and when its answer came, processes 1 and 2 both held lock k0 at 0.40 s. " +
				"Process 1 asked for it at 0.10 s, was granted it at 0.20 s and never released it; " +
				"process 2 asked for it at 0.30 s and was granted it at 0.40 s. " +
				"Before process 1 gave it up, the lock was granted 1 time more. The overlap checker tells who held the lock when."},
		{"retired", hold(1, 0, 100, 200, 900, &mutexOp{kind: mCrash}), hold(2, 0, 300, 400, 500, release), 0, NumberTokens,
			"Process 1 asked for it at 0.10 s, was granted it at 0.20 s and was not retired until 0.90 s;"},
		{"a failed release", hold(1, 0, 100, 200, 900, &mutexOp{kind: mRelease, abandon: true}), hold(2, 0, 300, 400, 500, release), 0, NumberTokens,
			"and started its release at 0.90 s, which failed;"},
		{"zxids", hold(1, 4294968093, 100, 200, 900, release), hold(2, 4294968094, 300, 400, 500, release), 0, ZxidTokens,
			"was granted it at 0.20 s (zxid 1:797) and did not start its release until 0.90 s; process 2 asked for it at 0.30 s and was granted it at 0.40 s (zxid 1:798). The overlap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := heldBoth("k0", tc.e, tc.later, tc.more, tc.tokens)
			if !strings.Contains(got, tc.want) {
				t.Errorf("story:\n got %s\nwant %s", got, tc.want)
			}
			for _, jargon := range []string{"real interval", "instant", "invoke", "linearizab"} {
				if strings.Contains(got, jargon) {
					t.Errorf("the story says %q: %s", jargon, got)
				}
			}
		})
	}
}

// TestRegisterNoOrder checks the end of the register's nonlinearizable
// story for jargon.
func TestRegisterNoOrder(t *testing.T) {
	for _, jargon := range []string{"real interval", "instant", "linearizab"} {
		if strings.Contains(registerNoOrder, jargon) {
			t.Errorf("registerNoOrder says %q", jargon)
		}
	}
}
