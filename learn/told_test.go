package learn

import (
	"slices"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// TestTell: the taught kind's first story comes first, then how many more
// of it; each Also kind's first story and its count; the rest counted in
// one line. Nothing is told twice.
func TestTell(t *testing.T) {
	at := func(kind string, s float64, text string) checker.Anomaly {
		d := time.Duration(s * float64(time.Second))
		return checker.Anomaly{Kind: kind, Start: d, End: d + time.Second, Explanation: text}
	}
	as := []checker.Anomaly{
		at("double-holder", 1, "d1"), at("foreign-release", 1.5, "f1"), at("nonlinearizable", 1, "n1"),
		at("double-holder", 3, "d2"), at("foreign-release", 4, "f2"), at("foreign-release", 6, "f3"),
	}
	for _, tc := range []struct {
		name   string
		l      Lesson
		as     []checker.Anomaly
		taught string
		more   []string
	}{
		{"taught and the rest", Lesson{Shows: "foreign-release"}, as, "[foreign-release] f1",
			[]string{"… and 2 more foreign releases like it, from 4.00 s to 7.00 s.", "The checkers also found 2 double-holder, 1 nonlinearizable."}},
		{"also", Lesson{Shows: "foreign-release", Also: []string{"nonlinearizable", "double-holder"}}, as, "[foreign-release] f1",
			[]string{"… and 2 more foreign releases like it, from 4.00 s to 7.00 s.", "[nonlinearizable] n1", "[double-holder] d1",
				"… and 1 more double holder like it, from 3.00 s to 4.00 s."}},
		{"fenced", Lesson{Shows: "double-holder"}, []checker.Anomaly{{Kind: "double-holder", Fenced: true, Explanation: "d"}}, "[double-holder, fenced] d", nil},
		{"none of the taught kind", Lesson{Shows: "stuck-lock"}, as[:1], "", []string{"The checkers also found 1 double-holder."}},
		{"no anomalies", Lesson{Shows: "stale-write-rejected"}, nil, "", nil},
		{"the span of the rest, in any order", Lesson{Shows: "double-holder"},
			[]checker.Anomaly{at("double-holder", 1, "d1"), at("double-holder", 9, "d9"), at("double-holder", 2, "d2"), at("double-holder", 5, "d5")}, "[double-holder] d1",
			[]string{"… and 3 more double holders like it, from 2.00 s to 10.00 s."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.l.Tell(tc.as)
			if got.Taught != tc.taught || !slices.Equal(got.More, tc.more) {
				t.Errorf("got %q %q, want %q %q", got.Taught, got.More, tc.taught, tc.more)
			}
		})
	}
}

// TestKindNoun: one and many of a known kind, and an unknown kind.
func TestKindNoun(t *testing.T) {
	for _, tc := range []struct {
		kind string
		n    int
		want string
	}{
		{"double-holder", 1, "double holder"},
		{"token-order", 2, "token-order anomalies"},
		{"oversold", 1, "oversold anomaly"},
		{"oversold", 3, "oversold anomalies"},
	} {
		if got := kindNoun(tc.kind, tc.n); got != tc.want {
			t.Errorf("kindNoun(%q, %d) = %q, want %q", tc.kind, tc.n, got, tc.want)
		}
	}
}
