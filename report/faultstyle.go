package report

import (
	"fmt"
	"hash/fnv"
	"html/template"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// faultKind is one fault kind of a run in the timeline's legend.
type faultKind struct {
	// Kind is the fault's start op (pause, clock-jump); Words says what
	// it does.
	Kind, Words string
}

// faultColours gives each of lockcheck's own fault kinds a colour of its
// own (red, green, blue), none of them an op's (acquire teal, cs slate,
// release purple, fail orange, info magenta, crash red, event blue).
var faultColours = map[string][3]int{
	history.FPause:       {255, 179, 0},
	history.FKillWorker:  {141, 110, 99},
	history.FPartition:   {30, 136, 229},
	history.FFailover:    {57, 73, 171},
	history.FKill:        {97, 97, 97},
	history.FSessionKill: {0, 121, 107},
	history.FClock:       {142, 36, 170},
	history.FClockJump:   {236, 64, 122},
	history.FSkew:        {186, 104, 200},
}

// otherColours are for the fault kinds other packages register, picked
// by the kind's name.
var otherColours = [][3]int{{158, 157, 36}, {0, 131, 143}, {121, 85, 72}, {244, 81, 30}, {67, 160, 71}, {92, 107, 192}}

// faultWords says what each fault kind does, for the legend.
var faultWords = map[string]string{
	history.FPause:       "a process stopped (SIGSTOP)",
	history.FKillWorker:  "a worker killed",
	history.FPartition:   "links cut",
	history.FFailover:    "a failover",
	history.FKill:        "a server killed",
	history.FSessionKill: "a session killed on the server",
	history.FClock:       "a clock moved",
	history.FClockJump:   "a server's clock jumped",
	history.FSkew:        "a client clock skewed",
}

// faultColour returns the colour of a fault kind.
func faultColour(kind string) [3]int {
	if c, ok := faultColours[kind]; ok {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(kind))
	return otherColours[int(h.Sum32())%len(otherColours)]
}

// faultStyles returns the CSS that colours each fault kind of faults
// (.fk-KIND, in the timeline, its faults lane, the incident and the
// legend) and the kinds for the legend, in order of first occurrence.
func faultStyles(faults []history.Fault) (template.CSS, []faultKind) {
	var kinds []faultKind
	var css strings.Builder
	for _, f := range faults {
		if slices.ContainsFunc(kinds, func(k faultKind) bool { return k.Kind == f.F }) || !cssIdent(f.F) {
			continue
		}
		w := faultWords[f.F]
		if w == "" {
			w = history.ClassOf(f.F) + " fault"
		}
		kinds = append(kinds, faultKind{Kind: f.F, Words: w})
		c := faultColour(f.F)
		fmt.Fprintf(&css, ".fb.fk-%[1]s,.in-fault.fk-%[1]s{fill:rgba(%[2]d,%[3]d,%[4]d,.18)}.fl.fk-%[1]s{fill:rgb(%[2]d,%[3]d,%[4]d);stroke:rgb(%[2]d,%[3]d,%[4]d)}"+
			".in-fault.fk-%[1]s{stroke:rgb(%[2]d,%[3]d,%[4]d)}.sw.fk-%[1]s{background:rgba(%[2]d,%[3]d,%[4]d,.5)}\n", f.F, c[0], c[1], c[2])
	}
	return template.CSS(css.String()), kinds
}

// cssIdent reports whether s can be used in a class name as it is.
func cssIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
