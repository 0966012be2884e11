package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/lockcheck/lockcheck/checker"
)

// maxPrinted bounds how many anomaly explanations a terminal gets; all of
// them are in results.json.
const maxPrinted = 8

// printResult prints each checker's verdict, the danger conditions the
// run reached (one line) and the first anomalies.
func printResult(w io.Writer, res checker.Result) {
	printVerdicts(w, res)
	printAnomalies(w, res)
}

// printVerdicts prints each checker's verdict and the danger conditions
// the run reached (one line).
func printVerdicts(w io.Writer, res checker.Result) {
	conditions := false
	for _, r := range res.Results {
		if r.Checker == checker.ConditionsName {
			conditions = true // its line is the reached line below
			continue
		}
		note := ""
		if r.Advisory {
			note = " (advisory: fenced run, the resource decides)"
		}
		if r.Error != "" {
			note += " error: " + oneLine(r.Error)
		}
		if r.NotExercised != "" {
			note += " not exercised: " + oneLine(r.NotExercised)
		}
		if why := r.NotUsed; why != "" {
			note += " (" + why + ")"
		}
		fmt.Fprintf(w, "  %-9s %s%s\n", r.Checker, verdictWord(r.Valid), note)
	}
	if conditions {
		fmt.Fprintf(w, "  %s\n", checker.ReachedLine(res.Reached))
	}
}

// printAnomalies prints the first maxPrinted anomalies' stories, the
// findings first (kindRank).
func printAnomalies(w io.Writer, res checker.Result) {
	anomalies := append([]checker.Anomaly(nil), res.Anomalies...)
	sort.SliceStable(anomalies, func(i, j int) bool {
		return kindRank(anomalies[i].Kind) < kindRank(anomalies[j].Kind)
	})
	printed := 0
	for _, a := range anomalies {
		if printed == maxPrinted {
			n := len(anomalies) - printed
			fmt.Fprintf(w, "  ... %d more %s in results.json\n", n, map[bool]string{true: "anomaly", false: "anomalies"}[n == 1])
			break
		}
		fmt.Fprintf(w, "  %s\n", oneLine(a.Story()))
		printed++
	}
}

// kindRank orders anomaly kinds for the terminal: the findings a reader
// needs first (who held the lock twice, what was lost) before the evidence.
func kindRank(kind string) int {
	for i, k := range []string{"oversold", "lost-decrement", "stock-mismatch", "double-holder", "lost-update", "stale-write", "foreign-release",
		"token-order", "no-grants", "stuck-lock", "stale-write-rejected", "nonlinearizable"} {
		if k == kind {
			return i
		}
	}
	return 100
}

// anomalyCounts summarises anomalies by kind (checker.CountKinds) and says
// how many incidents they make, e.g. "2 double-holder, 2 lost-update in 2
// incidents".
func anomalyCounts(res checker.Result) string {
	s := checker.CountKinds(res.Anomalies)
	if n := len(res.Incidents); n > 0 {
		s += fmt.Sprintf(" in %d %s", n, map[bool]string{true: "incident", false: "incidents"}[n == 1])
	}
	return s
}

// verdictText is the verdict word of the last line, with the reason when
// the run was not exercised: "unknown: not exercised: no pause lasted ...".
func verdictText(res checker.Result) string {
	if res.Valid == checker.Unknown && res.NotExercised != "" {
		return "unknown: not exercised: " + oneLine(res.NotExercised)
	}
	return verdictWord(res.Valid)
}
