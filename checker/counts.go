package checker

import (
	"fmt"
	"sort"
	"strings"
)

// CountKinds summarises anomalies by kind, in the order of the kinds'
// names: "2 double-holder, 1 lost-update (6 writes lost)". A fenced
// anomaly counts apart ("1 double-holder (fenced)"); lost-updates say how
// many writes they lost when that is more than one each (Anomaly.Lost). No
// anomaly gives "no anomalies".
func CountKinds(anomalies []Anomaly) string {
	counts := make(map[string]int)
	lost := make(map[string]int)
	for _, a := range anomalies {
		k := a.Kind
		if a.Fenced {
			k += " (fenced)"
		}
		counts[k]++
		lost[k] += a.Lost
	}
	if len(counts) == 0 {
		return "no anomalies"
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
		if lost[k] > counts[k] {
			parts[i] += fmt.Sprintf(" (%d writes lost)", lost[k])
		}
	}
	return strings.Join(parts, ", ")
}
