package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// builder assembles test histories from ops given out of order; build sorts
// them by time and numbers them.
type builder struct {
	ops history.History
	// asWritten keeps the ops in the order they were added, not sorted by
	// time: a history written by hand whose times go back.
	asWritten bool
}

// written keeps b's ops in the order they were added.
func (b *builder) written() *builder {
	b.asWritten = true
	return b
}

// at converts seconds to a history time.
func at(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (b *builder) add(t float64, p int, typ history.Type, f, key string, v *history.Value) *builder {
	b.ops = append(b.ops, history.Op{Time: at(t), Process: p, Type: typ, F: f, Key: key, Value: v})
	return b
}

// pair adds an invoke at t0 and a completion of type typ at t1.
func (b *builder) pair(p int, f, key string, t0, t1 float64, typ history.Type, in, out *history.Value) *builder {
	b.add(t0, p, history.Invoke, f, key, in)
	return b.add(t1, p, typ, f, key, out)
}

func (b *builder) acquire(p int, t0, t1 float64, token int64, owner string) *builder {
	return b.pair(p, history.FAcquire, "k", t0, t1, history.OK, nil, &history.Value{Token: token, Owner: owner})
}

func (b *builder) acquireFail(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FAcquire, "k", t0, t1, history.Fail, nil, nil)
}

func (b *builder) acquireInfo(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FAcquire, "k", t0, t1, history.Info, nil, nil)
}

// cs adds an accepted critical section; token 0 means unfenced.
func (b *builder) cs(p int, t0, t1 float64, read int64, token int64) *builder {
	var in *history.Value
	if token != 0 {
		in = &history.Value{Token: token}
	}
	return b.pair(p, history.FCS, "k", t0, t1, history.OK, in,
		&history.Value{Read: history.Int64(read), Wrote: history.Int64(read + 1), Token: token})
}

// csRejected adds a critical section the fenced resource refused.
func (b *builder) csRejected(p int, t0, t1 float64, read, token, maxToken int64) *builder {
	return b.pair(p, history.FCS, "k", t0, t1, history.Fail, &history.Value{Token: token},
		&history.Value{Read: history.Int64(read), Token: token, Extra: &history.Extra{Rejected: "write", MaxToken: maxToken}})
}

func (b *builder) csInfo(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FCS, "k", t0, t1, history.Info, nil, nil)
}

func (b *builder) release(p int, t0, t1 float64, released bool, owner string) *builder {
	return b.pair(p, history.FRelease, "k", t0, t1, history.OK, &history.Value{Owner: owner},
		&history.Value{Released: history.Bool(released)})
}

func (b *builder) crash(p int, t float64) *builder {
	return b.pair(p, history.FCrash, "k", t, t+0.001, history.Info, nil, nil)
}

// fault adds a nemesis fault on processes from t0 to t1.
func (b *builder) fault(f string, t0, t1 float64, targets ...int) *builder {
	end, _ := history.EndOf(f)
	b.pair(history.NemesisProcess, f, "", t0-0.001, t0, history.Info, nil, &history.Value{Extra: &history.Extra{Targets: targets}})
	return b.pair(history.NemesisProcess, end, "", t1-0.001, t1, history.Info, nil, nil)
}

// cycles adds n clean acquire, cs, release cycles from time t, 50 ms each,
// with tokens from token (none when 0) and the register from read, by processes 0..2 in
// turn, with a failed acquire by the next process during each.
func (b *builder) cycles(n int, t float64, token, read int64, fenced bool) *builder {
	for i := range n {
		p := i % 3
		t0 := t + float64(i)*0.05
		tok := token + int64(i)
		if token == 0 {
			tok = 0
		}
		b.acquire(p, t0, t0+0.005, tok, fmt.Sprintf("o%d-%d", p, tok))
		b.acquireFail((p+1)%3, t0+0.002, t0+0.012)
		csTok := int64(0)
		if fenced {
			csTok = tok
		}
		b.cs(p, t0+0.015, t0+0.025, read+int64(i), csTok)
		b.release(p, t0+0.03, t0+0.035, true, fmt.Sprintf("o%d-%d", p, tok))
	}
	return b
}

func (b *builder) build() history.History {
	h := append(history.History(nil), b.ops...)
	if !b.asWritten {
		sort.SliceStable(h, func(i, j int) bool { return h[i].Time < h[j].Time })
	}
	for i := range h {
		h[i].Index = i
	}
	return h
}

// The planted-bug histories. Processes 0-2 run 41 clean cycles (register 0
// to 41, tokens 1 to 41) until 2.05 s; then process 3 is granted the lock
// (token 42), is paused from 2.40 s to 5.40 s, its lease runs out, and
// process 1 is granted it (token 43) at 3.35 s. The variants differ in what
// 3's delayed critical section does.

// pausedHolder builds the common part, and 3's critical section as given.
func pausedHolder(fenced bool, cs3 func(b *builder)) *builder {
	b := (&builder{}).cycles(41, 0, 1, 0, fenced)
	tok := func(t int64) int64 {
		if fenced {
			return t
		}
		return 0
	}
	b.acquire(3, 2.30, 2.31, 42, "o3")
	b.fault(history.FPause, 2.40, 5.40, 3)
	b.acquire(1, 3.30, 3.35, 43, "o1")
	b.cs(1, 3.36, 3.40, 41, tok(43))
	b.release(1, 3.45, 3.50, true, "o1")
	cs3(b)
	b.release(3, 5.60, 5.61, false, "o3")
	b.acquire(2, 5.70, 5.71, 44, "o2")
	b.cs(2, 5.72, 5.73, 42, tok(44))
	b.release(2, 5.74, 5.75, true, "o2")
	return b
}

// doubleHolderPause: unfenced, 3's write of 42 lands after 1's: a lost
// update.
func doubleHolderPause() history.History {
	return pausedHolder(false, func(b *builder) { b.cs(3, 2.35, 5.41, 41, 0) }).build()
}

// fencedPauseRejected: fenced, the resource refuses 3's write of token 42.
func fencedPauseRejected() history.History {
	return pausedHolder(true, func(b *builder) { b.csRejected(3, 2.35, 5.41, 41, 42, 43) }).build()
}

// fencedPauseAccepted: fenced, but the resource accepts 3's stale token.
func fencedPauseAccepted() history.History {
	return pausedHolder(true, func(b *builder) { b.cs(3, 2.35, 5.41, 41, 42) }).build()
}

// clean is a history without violations: cycles, a pause of an idle
// process, a crashed process whose acquire was indeterminate, and one whose
// critical section was.
func clean() history.History {
	b := (&builder{}).cycles(20, 0, 1, 0, false)
	b.fault(history.FPause, 0.2, 0.4, 2)
	// Process 5's acquire times out; it is retired.
	b.acquireInfo(5, 1.01, 1.50).crash(5, 1.51)
	// Process 6 is granted the lock, its critical section times out, it is
	// retired, and its lease frees the lock at 2.6 s.
	b.acquire(6, 1.55, 1.56, 21, "o6").csInfo(6, 1.57, 2.07).crash(6, 2.08)
	b.acquireFail(0, 1.60, 1.70)
	b.acquire(0, 2.60, 2.61, 22, "o0-22").cs(0, 2.62, 2.63, 21, 0).release(0, 2.64, 2.65, true, "o0-22")
	return b.build()
}

// plainDelForeignRelease: a lock released with a plain DEL. Process 3 is
// paused while holding; 1 is granted the lock; 3 resumes and its DEL
// deletes 1's key; 2 is granted the lock while 1 still holds it, and 1's
// DEL then deletes 2's key.
func plainDelForeignRelease() history.History {
	b := (&builder{}).cycles(41, 0, 0, 0, false)
	b.acquire(3, 2.30, 2.31, 0, "o3").cs(3, 2.32, 2.35, 41, 0)
	b.fault(history.FPause, 2.40, 5.40, 3)
	b.acquire(1, 3.30, 3.35, 0, "o1").cs(1, 3.36, 3.40, 42, 0)
	b.pair(3, history.FRelease, "k", 5.60, 5.61, history.OK, &history.Value{Owner: "o3"},
		&history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "o1"}})
	b.acquire(2, 5.65, 5.70, 0, "o2").cs(2, 5.71, 5.75, 43, 0)
	b.pair(1, history.FRelease, "k", 6.00, 6.01, history.OK, &history.Value{Owner: "o1"},
		&history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "o2"}})
	b.pair(2, history.FRelease, "k", 6.10, 6.11, history.OK, &history.Value{Owner: "o2"},
		&history.Value{Released: history.Bool(false)})
	return b.build()
}

// noGrants: every acquire failed.
func noGrants() history.History {
	b := &builder{}
	for i := range 10 {
		b.acquireFail(i%3, float64(i)*0.1, float64(i)*0.1+0.05)
	}
	return b.build()
}

// tokenOrderHistory: process 1 is granted a token lower than one granted before it
// asked.
func tokenOrderHistory() history.History {
	b := (&builder{}).cycles(3, 0, 10, 0, true)
	b.acquire(1, 0.20, 0.21, 5, "o1").cs(1, 0.22, 0.23, 3, 5).release(1, 0.24, 0.25, true, "o1")
	return b.build()
}

// stuckLockHistory: process 0 holds the lock and crashes; the lock is never freed
// and every later acquire fails for 20 s.
func stuckLockHistory() history.History {
	b := (&builder{}).cycles(5, 0, 1, 0, false)
	b.acquire(0, 1.00, 1.01, 6, "o0").csInfo(0, 1.02, 2.02).crash(0, 2.03)
	for i := range 40 {
		t := 2.5 + float64(i)*0.5
		b.acquireFail(1+i%2, t, t+0.1)
	}
	return b.build()
}

// infoHeavy: 50 processes whose acquires all end in info and are retired,
// around clean cycles.
func infoHeavy() history.History {
	b := (&builder{}).cycles(60, 0, 1, 0, false)
	for i := range 50 {
		t := 0.01 + float64(i)*0.05
		b.acquireInfo(10+i, t, t+1.0).crash(10+i, t+1.001)
	}
	return b.build()
}

// lateInDoubtWrite: process 5 is granted the lock (token 42) and reads 41,
// but its critical section ends in doubt and it is retired at 2.63 s; 0 and
// 1 then update the register to 42 and 43; 5's write of 42 lands late, and
// 2 reads 42 again: 1's update is lost, by 5's stale write, although no two
// holds overlapped.
func lateInDoubtWrite() history.History {
	b := (&builder{}).cycles(41, 0, 1, 0, false)
	b.acquire(5, 2.10, 2.11, 42, "o5").csInfo(5, 2.12, 2.62).crash(5, 2.63)
	b.acquire(0, 2.70, 2.71, 43, "o0").cs(0, 2.72, 2.73, 41, 0).release(0, 2.74, 2.75, true, "o0")
	b.acquire(1, 2.80, 2.81, 44, "o1").cs(1, 2.82, 2.83, 42, 0).release(1, 2.84, 2.85, true, "o1")
	b.acquire(2, 3.00, 3.01, 45, "o2").cs(2, 3.02, 3.03, 42, 0).release(2, 3.04, 3.05, true, "o2")
	return b.build()
}

// withoutEchoedTokens strips the token from every critical section's reply,
// as a third-party worker that does not echo it would: the token the
// controller sent (the invocation) is all the history has.
func withoutEchoedTokens(h history.History) history.History {
	out := append(history.History(nil), h...)
	for i := range out {
		if op := &out[i]; op.F == history.FCS && op.Type != history.Invoke && op.Value != nil {
			v := *op.Value
			v.Token = 0
			op.Value = &v
		}
	}
	return out
}

// fencedNoEchoAccepted: fencedPauseAccepted from a worker that does not
// echo tokens in its critical sections' replies.
func fencedNoEchoAccepted() history.History { return withoutEchoedTokens(fencedPauseAccepted()) }

// tokenMismatch: a worker's critical-section reply carries a token other
// than the one the controller sent.
func tokenMismatch() history.History {
	b := (&builder{}).cycles(3, 0, 1, 0, true)
	b.acquire(0, 0.20, 0.21, 4, "o0")
	b.pair(0, history.FCS, "k", 0.22, 0.23, history.OK, &history.Value{Token: 4},
		&history.Value{Token: 7, Read: history.Int64(3), Wrote: history.Int64(4)})
	b.release(0, 0.24, 0.25, true, "o0")
	return b.build()
}

// staleReadsNewerWrite: fenced; process 3 (token 42) is paused inside its
// critical section, 1 (token 43) updates the register from 41 to 42, and
// 3's critical section then reads 42 (1's write) and writes 43 with its
// stale token 42, which the resource accepts. The register looks fine and
// the two critical sections were concurrent and read different values: only
// who read whose write shows the stale token.
func staleReadsNewerWrite() history.History {
	b := (&builder{}).cycles(41, 0, 1, 0, true)
	b.acquire(3, 2.30, 2.31, 42, "o3")
	b.fault(history.FPause, 2.40, 5.40, 3)
	b.acquire(1, 3.30, 3.35, 43, "o1").cs(1, 3.36, 3.40, 41, 43).release(1, 3.45, 3.50, true, "o1")
	b.cs(3, 2.35, 5.41, 42, 42)
	b.release(3, 5.60, 5.61, false, "o3")
	b.acquire(2, 5.70, 5.71, 44, "o2").cs(2, 5.72, 5.73, 43, 44).release(2, 5.74, 5.75, true, "o2")
	return b.build()
}
