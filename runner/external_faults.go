package runner

import (
	"errors"
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
	// Needs are the control commands the topology file must give for it
	// (a word "a|b" is met by either), none for a fault of the client's
	// side.
	Needs []string
	// Services are the services it applies to when not every one (the
	// session kill of the databases); nil for every service.
	Services []string
}

// ExternalFaults returns the registered nemesis kinds that a run against
// external servers can inject, in the kinds' order: those that build on
// the external cluster as a run builds them, first with no control
// command, then on a topology file of one lock server that gives every
// command, for each service that runs on external servers. Every other
// kind needs the servers themselves and is refused there with the reason.
func ExternalFaults() []ExternalFault {
	var out []ExternalFault
	for _, k := range nemesis.Kinds() {
		n, err := buildOn(clusters.NewExternal(clusters.ExternalConfig{Addrs: []string{"127.0.0.1:1"}, Workers: 2}), k)
		if err == nil {
			start, _ := n.Fs()
			out = append(out, ExternalFault{Name: k.Name, Class: history.ClassOf(start)})
			continue
		}
		var on, needs []string
		var class string
		for _, s := range clusters.Services() {
			if s.External == nil {
				continue
			}
			n, err := buildOn(commandedExternal(s, true), k)
			if err != nil {
				continue
			}
			start, _ := n.Fs()
			on, class = append(on, s.Name), history.ClassOf(start)
			var missing *clusters.MissingCommand
			if _, err := buildOn(commandedExternal(s, false), k); errors.As(err, &missing) {
				needs = missing.Words
			}
		}
		if len(on) == 0 {
			continue
		}
		f := ExternalFault{Name: k.Name, Class: class, Needs: needs}
		if len(on) < len(ExternalServices()) {
			f.Services = on
		}
		out = append(out, f)
	}
	return out
}

// commandedExternal returns service s's external topology (unstarted) of
// one lock server, with every control command or with none.
func commandedExternal(s clusters.Service, every bool) topology {
	cmds := clusters.Commands{}
	for _, w := range clusters.ControlWords {
		if every {
			cmds[w] = "true"
		}
	}
	e := clusters.NewExternal(clusters.ExternalConfig{Workers: 2, Login: clusters.Login{User: "u", Database: "d"},
		Servers: []clusters.ExternalServer{{Name: "s0", Addr: "127.0.0.1:1", Commands: cmds}}})
	if s.External.Extend != nil {
		return s.External.Extend(e)
	}
	return ledIfOne(e)
}

// buildOn builds nemesis kind k on an unstarted topology, as a run would
// once the topology started: its error is the kind's refusal.
func buildOn(c topology, k nemesis.Kind) (nemesis.Nemesis, error) {
	r := &run{cluster: c, holders: map[int]nemesis.Target{}, live: map[int]nemesis.Target{}}
	return k.New(r, rand.New(rand.NewPCG(1, 1)))
}

// refuseExternalFaults refuses, before anything starts, a nemesis kind of
// the plan that its external topology cannot take: a server fault whose
// control command the topology file lacks, or one that needs the servers
// themselves.
func refuseExternalFaults(p *Plan) error {
	c, err := buildExternal(p, p.config(""))
	if err != nil {
		return err
	}
	r := &run{cluster: c}
	for _, k := range p.Kinds {
		if _, err := buildOn(c, k); err != nil {
			return r.unsupported(err)
		}
	}
	return nil
}
