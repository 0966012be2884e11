package history

import (
	"sync"
	"testing"
)

// toyCombined registers the toy combined lock once, however often the
// test runs (go test -count).
var toyCombined sync.Once

// TestCombinedLockOf checks that a grant is of a combined lock only when
// its nodes name every half, and that a bad registration panics.
func TestCombinedLockOf(t *testing.T) {
	toyCombined.Do(func() {
		RegisterCombinedLock(CombinedLock{Halves: []string{"toy-left", "toy-right"},
			Tell: func(CombinedHold) (string, string) { return "told", "lost" }})
	})
	cases := []struct {
		nodes []string
		want  bool
	}{
		{[]string{"toy-left", "toy-right"}, true},
		{[]string{"toy-right", "lock0", "toy-left"}, true},
		{[]string{"toy-left"}, false},
		{[]string{"lock0", "lock1"}, false},
		{nil, false},
	}
	for _, c := range cases {
		cl, ok := CombinedLockOf(c.nodes)
		if ok != c.want {
			t.Errorf("CombinedLockOf(%v) = %v, want %v", c.nodes, ok, c.want)
		}
		if ok {
			if story, lost := cl.Tell(CombinedHold{}); story != "told" || lost != "lost" {
				t.Errorf("teller of %v: %q, %q", c.nodes, story, lost)
			}
		}
	}
	for name, bad := range map[string]CombinedLock{
		"one half":  {Halves: []string{"toy-only"}, Tell: func(CombinedHold) (string, string) { return "", "" }},
		"no teller": {Halves: []string{"toy-a", "toy-b"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered without a panic", name)
				}
			}()
			RegisterCombinedLock(bad)
		}()
	}
}
