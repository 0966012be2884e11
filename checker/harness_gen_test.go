package checker

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// harnessShape configures genHarness: a simulated lock service, resource
// and workers that record a history the way the controller does. Each
// worker acquires a random key by polling (its acquire is in flight until
// a poll finds the lock free, or it gives up and fails), runs its critical
// section (read, write read+1) and releases. Ops may end in info; the
// controller then retires the process (a crash op, and the slot goes on
// under a fresh process id), while a third-party harness (retire false)
// lets the same process go on. Lease expiry frees a lock whose holder
// crashed or stalled; a stall longer than the lease gives a genuine double
// holder and a lost update.
type harnessShape struct {
	ops     int // stop once about this many ops are recorded
	keys    int
	workers int
	// info is the probability that an op ends in info.
	info float64
	// retire says an info op retires its process (the controller's rule).
	retire bool
	// kill is the probability that a worker holding a lock is killed
	// (retired) after its acquire returns.
	kill float64
	// stall is the probability that a critical section stalls for longer
	// than the lease (a paused holder).
	stall float64
	// bug is the probability that a poll is granted a lock that is held.
	bug float64
	// refuse is the probability that a release fails for certain (a
	// refused dial): the lock stays held until its lease runs out, and the
	// worker tries again up to three times; after the third failure the
	// controller retires it, a third-party harness goes on.
	refuse float64
	// late lets the write of a critical section left in doubt land after
	// its process was retired (a stale write, hence a lost update).
	late bool
	// tick rounds every time to a multiple of it (coarse ticks make ties).
	tick time.Duration
}

// event is one scheduled step of the simulation.
type event struct {
	at  time.Duration
	seq int
	fn  func()
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// released is shared by every release ok that deleted its own key.
var releasedTrue, releasedFalse = &history.Value{Released: history.Bool(true)}, &history.Value{Released: history.Bool(false)}

// genHarness simulates shape with a seed and returns the history.
func genHarness(seed uint64, s harnessShape) history.History {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	if s.workers == 0 {
		s.workers = 10
	}
	if s.keys == 0 {
		s.keys = 1
	}
	const lease = 50 * time.Millisecond
	h := make(history.History, 0, s.ops+64)
	var q eventQueue
	seq := 0
	now := time.Duration(0)
	round := func(t time.Duration) time.Duration {
		if s.tick > 0 {
			t = (t + s.tick - 1) / s.tick * s.tick
		}
		return max(t, now)
	}
	at := func(t time.Duration, fn func()) {
		seq++
		heap.Push(&q, event{at: round(t), seq: seq, fn: fn})
	}
	record := func(p int, typ history.Type, f, key string, v *history.Value) {
		h = append(h, history.Op{Index: len(h), Time: now, Process: p, Type: typ, F: f, Key: key, Value: v})
	}
	us := func(lo, hi int) time.Duration {
		return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Microsecond
	}
	type lock struct {
		holder  int
		expires time.Duration
		token   int64
	}
	keys := make([]string, s.keys)
	locks := make([]lock, s.keys)
	reg := make([]int64, s.keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
		locks[i].holder = -1
	}
	held := func(k int, p int) bool { return locks[k].holder == p && locks[k].expires > now }
	free := func(k int) bool { return locks[k].holder < 0 || locks[k].expires <= now }

	var cycle func(slot, p int)
	// next starts the slot's next cycle, under a fresh process id when p
	// was retired.
	retire := func(slot, p int, key string) {
		record(p, history.Invoke, history.FCrash, key, nil)
		record(p, history.Info, history.FCrash, key, nil)
		at(now+us(100, 2000), func() { cycle(slot, p+s.workers) })
	}
	// after ends an op that went into doubt: retire, or go on with then.
	after := func(slot, p int, key string, then func()) {
		if s.retire {
			retire(slot, p, key)
			return
		}
		at(now+us(10, 500), then)
	}
	var release func(slot, p, k int, v *history.Value, try int)
	var cs func(slot, p, k int, v *history.Value)
	cycle = func(slot, p int) {
		if len(h) >= s.ops {
			return
		}
		k := rng.IntN(s.keys)
		key := keys[k]
		record(p, history.Invoke, history.FAcquire, key, nil)
		start := now
		doubt := rng.Float64() < s.info
		var poll func()
		poll = func() {
			switch {
			case free(k) || rng.Float64() < s.bug:
				l := &locks[k]
				l.holder, l.expires = p, now+lease
				l.token++
				v := &history.Value{Token: l.token, Owner: fmt.Sprintf("p%d-%d", p, l.token)}
				at(now+us(20, 300), func() {
					if doubt {
						record(p, history.Info, history.FAcquire, key, nil)
						after(slot, p, key, func() {
							// A third-party worker releases just in case.
							release(slot, p, k, v, 0)
						})
						return
					}
					record(p, history.OK, history.FAcquire, key, v)
					if rng.Float64() < s.kill {
						retire(slot, p, key)
						return
					}
					at(now+us(5, 100), func() { cs(slot, p, k, v) })
				})
			case now-start > 200*time.Millisecond:
				at(now+us(20, 300), func() {
					if doubt {
						record(p, history.Info, history.FAcquire, key, nil)
						after(slot, p, key, func() { cycle(slot, p) })
						return
					}
					record(p, history.Fail, history.FAcquire, key, nil)
					at(now+us(500, 5000), func() { cycle(slot, p) })
				})
			default:
				at(now+us(200, 2000), poll)
			}
		}
		at(now+us(10, 300), poll)
	}
	cs = func(slot, p, k int, grant *history.Value) {
		key := keys[k]
		record(p, history.Invoke, history.FCS, key, &history.Value{Owner: grant.Owner, Token: grant.Token})
		d := us(50, 1500)
		// The critical section reads at one instant and writes read+1 at
		// a later one; a stall between them outlasts the lease. In doubt,
		// the write lands then, later, or never.
		tRead, tWrite := now+d/3, now+2*d/3
		if rng.Float64() < s.stall {
			stall := lease + us(1000, 60000)
			d += stall
			tWrite += stall
		}
		doubt := rng.Float64() < s.info
		land := 0
		if doubt {
			land = 2 * rng.IntN(2)
			if s.late {
				land = rng.IntN(3)
			}
		}
		var read int64
		at(tRead, func() { read = reg[k] })
		write := func() { reg[k] = read + 1 }
		switch land {
		case 0:
			at(tWrite, write)
		case 1:
			at(now+d+us(0, 60000), write)
		}
		at(now+d, func() {
			if doubt {
				var v *history.Value
				if !s.retire && rng.IntN(2) == 0 {
					// A third-party worker may say what it read.
					v = &history.Value{Read: history.Int64(read)}
				}
				record(p, history.Info, history.FCS, key, v)
				after(slot, p, key, func() { release(slot, p, k, grant, 0) })
				return
			}
			v := &history.Value{Read: history.Int64(read), Wrote: history.Int64(read + 1), Token: grant.Token}
			record(p, history.OK, history.FCS, key, v)
			at(now+us(5, 100), func() { release(slot, p, k, grant, 0) })
		})
	}
	release = func(slot, p, k int, grant *history.Value, try int) {
		key := keys[k]
		record(p, history.Invoke, history.FRelease, key, &history.Value{Owner: grant.Owner, Token: grant.Token})
		if rng.Float64() < s.refuse {
			at(now+us(10, 300), func() {
				record(p, history.Fail, history.FRelease, key, nil)
				switch {
				case try < 2:
					at(now+us(1000, 40000), func() { release(slot, p, k, grant, try+1) })
				case s.retire:
					retire(slot, p, key)
				default:
					at(now+us(10, 500), func() { cycle(slot, p) })
				}
			})
			return
		}
		doubt := rng.Float64() < s.info
		mine := false
		at(now+us(10, 300), func() {
			mine = held(k, p)
			if mine && (!doubt || rng.IntN(2) == 0) {
				locks[k].holder = -1
			}
			at(now+us(10, 300), func() {
				if doubt {
					record(p, history.Info, history.FRelease, key, nil)
					after(slot, p, key, func() { cycle(slot, p) })
					return
				}
				v := releasedFalse
				if mine {
					v = releasedTrue
				}
				record(p, history.OK, history.FRelease, key, v)
				at(now+us(0, 50), func() { cycle(slot, p) })
			})
		})
	}
	for w := range s.workers {
		at(us(0, 1000), func() { cycle(w, w) })
	}
	for q.Len() > 0 {
		e := heap.Pop(&q).(event)
		now = e.at
		e.fn()
	}
	return h
}
