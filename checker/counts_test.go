package checker

import "testing"

// TestCountKinds: anomalies are counted by kind in the order of the kinds'
// names, fenced ones apart, and lost-updates say how many writes they lost
// only when that is more than one each.
func TestCountKinds(t *testing.T) {
	a := func(kind string, fenced bool, lost int) Anomaly {
		return Anomaly{Kind: kind, Fenced: fenced, Lost: lost}
	}
	for _, tc := range []struct {
		name string
		as   []Anomaly
		want string
	}{
		{"none", nil, "no anomalies"},
		{"by name", []Anomaly{a("nonlinearizable", false, 0), a("double-holder", false, 0), a("double-holder", false, 0)},
			"2 double-holder, 1 nonlinearizable"},
		{"fenced apart", []Anomaly{a("double-holder", true, 0), a("double-holder", false, 0)},
			"1 double-holder, 1 double-holder (fenced)"},
		{"one write each", []Anomaly{a("lost-update", false, 1), a("lost-update", false, 1)}, "2 lost-update"},
		{"a setback", []Anomaly{a("lost-update", false, 6)}, "1 lost-update (6 writes lost)"},
		{"setbacks summed", []Anomaly{a("lost-update", false, 1), a("lost-update", false, 2)}, "2 lost-update (3 writes lost)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CountKinds(tc.as); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// TestAnomalyStory: the kind in brackets, marked when fencing made the
// anomaly harmless, then the explanation.
func TestAnomalyStory(t *testing.T) {
	for _, c := range []struct {
		a    Anomaly
		want string
	}{
		{Anomaly{Kind: "double-holder", Explanation: "two held it."}, "[double-holder] two held it."},
		{Anomaly{Kind: "double-holder", Fenced: true, Explanation: "two held it."}, "[double-holder, fenced] two held it."},
	} {
		if got := c.a.Story(); got != c.want {
			t.Errorf("Story() = %q, want %q", got, c.want)
		}
	}
}
