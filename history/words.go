package history

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The words the stories of anomalies use, shared by the checkers and by
// the faults that tell their own part (FaultWords).

// Secs renders a time since the test started as seconds with two
// decimals: "2.31 s".
func Secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
}

// SecsShort renders a duration as "1 s", "1.5 s" or "300 ms".
func SecsShort(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".") + " s"
}

// JoinAnd joins words as English: "a", "a and b", "a, b and c".
func JoinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Procs renders process numbers: "process 3", "processes 3 and 1".
func Procs(ps []int) string {
	words := make([]string, len(ps))
	for i, p := range ps {
		words[i] = strconv.Itoa(p)
	}
	if len(ps) == 1 {
		return "process " + words[0]
	}
	return "processes " + JoinAnd(words)
}

// FaultWords is what the stories say of one kind of fault, keyed by its
// start op: the fault registers them with its kind (nemesis.Kind.Words),
// beside its code, and the checkers' stories read them. Every field is
// optional.
type FaultWords struct {
	// F is the start op.
	F string
	// Noun names a fault of the kind in a story ("clock jump"); "" means
	// F.
	Noun string
	// Describe, when set, tells a fault of the kind in place of the noun
	// with its targets ("failover of master redis0 (...)"), without its
	// time span.
	Describe func(f Fault) string
	// Why says how the fault let a second holder in, as a clause
	// ("redis0's wall clock jumped 3 s forward, so ..."), "" when it cannot
	// say.
	Why func(f Fault) string
	// First puts Why before what a pause or a partition of the stale
	// holder says (a failover, which breaks the lock whoever is paused).
	First bool
	// Aftermath, when set, tells in a sentence of its own what the fault
	// did to process stale, which held the lock until heldUntil (a
	// session the server ended while its client went on); "" when the
	// fault did not strike it.
	Aftermath func(f Fault, stale int, heldUntil time.Duration) string
}

var (
	wordsMu    sync.RWMutex
	faultWords = make(map[string]FaultWords)
)

// RegisterFaultWords adds the words of the faults that start with w.F. A
// start op given words twice is a programming error and panics.
func RegisterFaultWords(w FaultWords) {
	if w.F == "" {
		panic("history: fault words need a start op")
	}
	wordsMu.Lock()
	defer wordsMu.Unlock()
	if _, ok := faultWords[w.F]; ok {
		panic(fmt.Sprintf("history: words of fault %q registered twice", w.F))
	}
	faultWords[w.F] = w
}

// FaultWordsOf returns the words of the faults that start with f (zero
// when none were registered).
func FaultWordsOf(f string) FaultWords {
	wordsMu.RLock()
	defer wordsMu.RUnlock()
	return faultWords[f]
}

// DescribeFault renders a fault for a story or an anomaly's list of
// faults: "pause of process 3 from 2.40 s to 5.40 s".
func DescribeFault(f Fault) string {
	w := FaultWordsOf(f.F)
	if w.Describe != nil {
		if d := w.Describe(f); d != "" {
			return d + " from " + Secs(f.Start) + " to " + Secs(f.End)
		}
	}
	var what []string
	if len(f.Targets) > 0 {
		what = append(what, Procs(f.Targets))
	}
	switch len(f.Nodes) {
	case 0:
	case 1:
		what = append(what, "node "+f.Nodes[0])
	default:
		what = append(what, "nodes "+JoinAnd(f.Nodes))
	}
	s := cmp.Or(w.Noun, f.F)
	if len(what) > 0 {
		s += " of " + JoinAnd(what)
	} else if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	return s + " from " + Secs(f.Start) + " to " + Secs(f.End)
}
