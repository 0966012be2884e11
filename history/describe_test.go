package history

import (
	"sync"
	"testing"
	"time"
)

// toyWords registers the toy faults' words once, however often the test
// runs (go test -count).
var toyWords sync.Once

func registerToyWords() {
	RegisterFaultWords(FaultWords{F: "toy-describe", Describe: func(f Fault) string {
		if f.Detail == "" {
			return ""
		}
		return "toy of " + f.Detail
	}})
	RegisterFaultWords(FaultWords{F: "toy-noun", Noun: "toy jump"})
}

// TestDescribeFault is a table test of how a story names a fault: by its
// kind's own Describe, or by its noun (its op name without one), its
// processes and nodes or else its detail, and its span.
func TestDescribeFault(t *testing.T) {
	toyWords.Do(registerToyWords)
	const s = time.Second
	span := func(f Fault) Fault { f.Start, f.End = 1500*time.Millisecond, 4*s; return f }
	cases := []struct {
		name string
		f    Fault
		want string
	}{
		{"its own description", span(Fault{F: "toy-describe", Detail: "lock0"}), "toy of lock0 from 1.50 s to 4.00 s"},
		{"its description says nothing", span(Fault{F: "toy-describe", Nodes: []string{"n1"}}), "toy-describe of node n1 from 1.50 s to 4.00 s"},
		{"one process", span(Fault{F: "toy-op", Targets: []int{3}}), "toy-op of process 3 from 1.50 s to 4.00 s"},
		{"processes and nodes", span(Fault{F: "toy-op", Targets: []int{3, 1}, Nodes: []string{"a", "b", "c"}}),
			"toy-op of processes 3 and 1 and nodes a, b and c from 1.50 s to 4.00 s"},
		{"a noun, one node", span(Fault{F: "toy-noun", Nodes: []string{"lock2"}}), "toy jump of node lock2 from 1.50 s to 4.00 s"},
		{"the detail when it names no one", span(Fault{F: "toy-op", Detail: "all links"}), "toy-op (all links) from 1.50 s to 4.00 s"},
		{"targets before the detail", span(Fault{F: "toy-op", Targets: []int{0}, Detail: "x"}), "toy-op of process 0 from 1.50 s to 4.00 s"},
		{"nothing to say", Fault{F: "toy-op", Start: 0, End: 250 * time.Millisecond}, "toy-op from 0.00 s to 0.25 s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DescribeFault(c.f); got != c.want {
				t.Errorf("DescribeFault\n got %q\nwant %q", got, c.want)
			}
		})
	}
}
