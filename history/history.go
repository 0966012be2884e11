package history

import (
	"fmt"
	"math"
	"time"
)

// History is a sequence of ops in the order they were recorded.
type History []Op

// Pair is an invocation with its completion, both pointing into the history
// they came from (a pair copies no op). Complete is nil when the history
// ended before the op completed (an interrupted run); such an op counts as
// info: it may have taken effect at any time after its invocation.
type Pair struct {
	Invoke   *Op
	Complete *Op
}

// Type returns the completion type, Info when the op never completed.
func (p Pair) Type() Type {
	if p.Complete == nil {
		return Info
	}
	return p.Complete.Type
}

// End returns the completion time, or math.MaxInt64 when the op is
// indeterminate (info or never completed): its effect may land at any later
// time.
func (p Pair) End() time.Duration {
	if p.Complete == nil || p.Complete.Type == Info {
		return time.Duration(math.MaxInt64)
	}
	return p.Complete.Time
}

// Returned returns when the controller saw the completion, or the invoke time
// when the op never completed.
func (p Pair) Returned() time.Duration {
	if p.Complete == nil {
		return p.Invoke.Time
	}
	return p.Complete.Time
}

// Value returns the completion's value when present, else the invocation's.
func (p Pair) Value() *Value {
	if p.Complete != nil && p.Complete.Value != nil {
		return p.Complete.Value
	}
	return p.Invoke.Value
}

// Unheard reports whether p ended with no reply: info (its outcome
// unknown), or done by an application that got no answer (Extra.Unheard).
func (p Pair) Unheard() bool {
	if p.Type() == Info {
		return true
	}
	v := p.Value()
	return v != nil && v.Extra != nil && v.Extra.Unheard
}

// Pairs matches every invocation with its completion, in invocation order.
// The pairs point into h. Lone ops (IsLone: FEvent, FServerExit) are not
// operations and are skipped.
// It returns an error when a process completes an op it never invoked,
// completes it before its invocation, or invokes while another of its ops
// is still open.
func (h History) Pairs() ([]Pair, error) {
	// About one pair for every two ops: a capacity hint, which no result
	// depends on.
	pairs := make([]Pair, 0, len(h)>>1)
	open := newOpenPairs() // process -> index in pairs
	for i := range h {
		op := &h[i]
		if op.IsLone() {
			continue
		}
		if op.Type == Invoke {
			if j, ok := open.get(op.Process); ok {
				return nil, fmt.Errorf("op %d: process %d invokes %s while op %d (%s) is open",
					op.Index, op.Process, op.F, pairs[j].Invoke.Index, pairs[j].Invoke.F)
			}
			open.set(op.Process, len(pairs))
			pairs = append(pairs, Pair{Invoke: op})
			continue
		}
		j, ok := open.get(op.Process)
		if !ok {
			return nil, fmt.Errorf("op %d: process %d completes %s with no open invocation", op.Index, op.Process, op.F)
		}
		if pairs[j].Invoke.F != op.F {
			return nil, fmt.Errorf("op %d: process %d completes %s but invoked %s", op.Index, op.Process, op.F, pairs[j].Invoke.F)
		}
		if inv := pairs[j].Invoke; op.Time < inv.Time {
			return nil, fmt.Errorf("op %d: process %d completes %s at %s, before its invocation (op %d) at %s",
				op.Index, op.Process, op.F, op.Time, inv.Index, inv.Time)
		}
		pairs[j].Complete = op
		open.clear(op.Process)
	}
	return pairs, nil
}

// openPairs maps a process to the index of its open invocation among the
// pairs. Processes are small numbers (the nemesis's -1, the workers from
// 0), held in a slice; any other in a map: a long run's millions of ops
// would spend most of Pairs in the map.
type openPairs struct {
	dense []int // process+1 -> index+1; 0: none open
	other map[int]int
}

// maxDenseProcess bounds the processes openPairs keeps in its slice.
const maxDenseProcess = 1 << 16

func newOpenPairs() *openPairs { return &openPairs{other: map[int]int{}} }

func (o *openPairs) get(p int) (int, bool) {
	if p >= -1 && p < maxDenseProcess {
		if p+1 < len(o.dense) && o.dense[p+1] > 0 {
			return o.dense[p+1] - 1, true
		}
		return 0, false
	}
	j, ok := o.other[p]
	return j, ok
}

func (o *openPairs) set(p, j int) {
	if p >= -1 && p < maxDenseProcess {
		if p+1 >= len(o.dense) {
			o.dense = append(o.dense, make([]int, p+2-len(o.dense))...)
		}
		o.dense[p+1] = j + 1
		return
	}
	o.other[p] = j
}

func (o *openPairs) clear(p int) {
	if p >= -1 && p < maxDenseProcess {
		if p+1 < len(o.dense) {
			o.dense[p+1] = 0
		}
		return
	}
	delete(o.other, p)
}

// Keys returns the distinct non-empty lock keys in order of first appearance.
func (h History) Keys() []string {
	seen := make(map[string]bool)
	var keys []string
	for _, op := range h {
		if op.Key != "" && !seen[op.Key] {
			seen[op.Key] = true
			keys = append(keys, op.Key)
		}
	}
	return keys
}
