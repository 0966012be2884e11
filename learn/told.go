package learn

import (
	"fmt"
	"slices"

	"github.com/lockcheck/lockcheck/checker"
)

// Told is what a lesson tells of its run's anomalies, the taught one
// first: a student sees what the lesson is about before anything else, and
// no story twice.
type Told struct {
	// Taught is the story of the run's first anomaly of the lesson's Shows
	// kind, "" when it has none.
	Taught string
	// More follows it: how many more of the taught kind; the first story
	// of each of the lesson's Also kinds and how many more of it; one line
	// counting the rest by kind.
	More []string
}

// Tell tells the anomalies of the lesson's run (a checker.Result's, in its
// order).
func (l Lesson) Tell(as []checker.Anomaly) Told {
	var t Told
	var rest []checker.Anomaly
	byKind := make(map[string][]checker.Anomaly)
	for _, a := range as {
		if a.Kind == l.Shows || slices.Contains(l.Also, a.Kind) {
			byKind[a.Kind] = append(byKind[a.Kind], a)
		} else {
			rest = append(rest, a)
		}
	}
	for i, kind := range append([]string{l.Shows}, l.Also...) {
		group := byKind[kind]
		if len(group) == 0 {
			continue
		}
		if i == 0 {
			t.Taught = group[0].Story()
		} else {
			t.More = append(t.More, group[0].Story())
		}
		if n := len(group) - 1; n > 0 {
			from, to := group[1].Start, group[1].End
			for _, a := range group[2:] {
				from, to = min(from, a.Start), max(to, a.End)
			}
			t.More = append(t.More, fmt.Sprintf("… and %d more %s like it, from %.2f s to %.2f s.",
				n, kindNoun(kind, n), from.Seconds(), to.Seconds()))
		}
	}
	if len(rest) > 0 {
		t.More = append(t.More, "The checkers also found "+checker.CountKinds(rest)+".")
	}
	return t
}

// kindNoun names n anomalies of kind in words: "double holders".
func kindNoun(kind string, n int) string {
	nouns := map[string][2]string{
		"double-holder":        {"double holder", "double holders"},
		"foreign-release":      {"foreign release", "foreign releases"},
		"lost-update":          {"lost update", "lost updates"},
		"token-order":          {"token-order anomaly", "token-order anomalies"},
		"stale-write":          {"stale write", "stale writes"},
		"stale-write-rejected": {"rejected stale write", "rejected stale writes"},
		"stuck-lock":           {"stuck lock", "stuck locks"},
		"nonlinearizable":      {"nonlinearizable stretch", "nonlinearizable stretches"},
	}
	w, ok := nouns[kind]
	if !ok {
		w = [2]string{kind + " anomaly", kind + " anomalies"}
	}
	if n == 1 {
		return w[0]
	}
	return w[1]
}
