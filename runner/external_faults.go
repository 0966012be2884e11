package runner

import (
	"math/rand/v2"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
)

// ExternalFault is a nemesis kind a run against lock servers lockcheck
// did not start (--cluster external) can inject, and what it strikes: its
// fault op's class (history.ClassNetwork for the workers' links).
type ExternalFault struct {
	Name  string
	Class string
}

// ExternalFaults returns the registered nemesis kinds that a run against
// external servers can inject, in the kinds' order: those that build on
// the external cluster as a run builds them. Every other kind needs the
// servers themselves and is refused there with the reason.
func ExternalFaults() []ExternalFault {
	r := &run{cluster: clusters.NewExternal(clusters.ExternalConfig{Addrs: []string{"127.0.0.1:1"}, Workers: 2}),
		holders: map[int]nemesis.Target{}, live: map[int]nemesis.Target{}}
	var out []ExternalFault
	for _, k := range nemesis.Kinds() {
		n, err := k.New(r, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			continue
		}
		start, _ := n.Fs()
		out = append(out, ExternalFault{Name: k.Name, Class: history.ClassOf(start)})
	}
	return out
}
