package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Scenario is one named failure story.
type Scenario struct {
	// Name is the --scenario name.
	Name string
	// Summary is the one line `check list` prints.
	Summary string
	// Args are the `check run` flags that tell the story.
	Args []string
	// Expect is the verdict the story should end in, in words, for the
	// docs and `check list`.
	Expect string
	// Want is the expected verdict as data, in the letters of the expected
	// table in docs/verdicts.md, for `check matrix` and `check repro`: "U"
	// (invalid), "L" (invalid with a stuck lock) or "S" (valid).
	Want string
	// WantFenced is the expected verdict with --fencing added; "" when the
	// lock design has no fencing token (--fencing is refused).
	WantFenced string
}

// All returns every scenario, sorted by name.
func All() []Scenario {
	ss := []Scenario{
		{
			Name: "zk-session-expiry",
			Summary: "a ZooKeeper lock holder is paused (a long GC pause) 5 ms after its grant for 3 session timeouts: its " +
				"session expires, its ephemeral node is deleted, another worker takes the lock, and the first resumes and writes",
			Args: []string{"--lock", "zk-ephemeral", "--nemesis", "pause@grant+5ms:3xlease*3", "--lease", "1s",
				"--workers", "5", "--time", "20s"},
			Expect: "invalid (valid with --fencing: the czxid check refuses the stale write)",
			Want:   "U", WantFenced: "S",
		},
		{
			Name: "redis-pause",
			Summary: "a Redis SET NX PX lock holder is paused 5 ms after its grant, longer than its lease: another worker " +
				"takes the expired lock and the first resumes and writes (Kleppmann's example)",
			Args:   []string{"--lock", "redis-set-px", "--nemesis", "pause@grant+5ms:3xlease*3", "--lease", "1s", "--time", "20s"},
			Expect: "invalid (valid with --fencing)",
			Want:   "U", WantFenced: "S",
		},
	}
	ss = append(ss, registered...)
	sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
	return ss
}

// registered holds the scenarios that register themselves from their own
// file.
var registered []Scenario

// register adds a scenario to All; each scenario file calls it from init.
func register(s Scenario) { registered = append(registered, s) }

// Find returns the scenario called name, or an error listing the known ones.
func Find(name string) (Scenario, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Scenario{}, suggest.Unknown("scenario", name, names)
}

// Expand replaces a --scenario NAME (or --scenario=NAME) in args with the
// scenario's flags, placed first so that flags given after them override
// them. It returns the scenario's name ("" when args name none).
func Expand(args []string) ([]string, string, error) {
	for i, a := range args {
		var name string
		switch {
		case a == "--scenario" || a == "-scenario":
			if i+1 >= len(args) {
				return nil, "", fmt.Errorf("--scenario needs a name")
			}
			name = args[i+1]
			rest := append(append([]string(nil), args[:i]...), args[i+2:]...)
			return expand(name, rest)
		case strings.HasPrefix(a, "--scenario=") || strings.HasPrefix(a, "-scenario="):
			name = a[strings.IndexByte(a, '=')+1:]
			rest := append(append([]string(nil), args[:i]...), args[i+1:]...)
			return expand(name, rest)
		}
	}
	return args, "", nil
}

func expand(name string, rest []string) ([]string, string, error) {
	s, err := Find(name)
	if err != nil {
		return nil, "", err
	}
	return append(append([]string(nil), s.Args...), rest...), s.Name, nil
}
