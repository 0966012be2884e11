package report

import (
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
)

// TestReportNotExercised: the banner of a not-exercised run says why.
func TestReportNotExercised(t *testing.T) {
	res := checker.Result{Checker: "lockcheck", Valid: checker.Unknown,
		NotExercised: "no pause lasted longer than the 1 s lease while its process held the lock"}
	_, page := writeReport(t, Input{Meta: Meta{Name: "t", Lock: "redis-set-px", Nemesis: "pause"}, Result: res})
	want := `id="not-exercised">not exercised: no pause lasted longer than the 1 s lease while its process held the lock<`
	if !strings.Contains(page, want) || !strings.Contains(page, `class="banner unknown"`) {
		t.Errorf("the banner lacks %q", want)
	}
}

// TestReportReached: the banner says which danger conditions the run
// reached, and none when it reached none; a result checked before there
// were conditions says nothing.
func TestReportReached(t *testing.T) {
	conditions := checker.Result{Checker: "conditions", Valid: checker.Valid, Advisory: true}
	for _, tt := range []struct {
		res  checker.Result
		want string
	}{
		{checker.Result{Checker: "lockcheck", Valid: checker.Invalid, Results: []checker.Result{conditions},
			Reached: []checker.Reached{{Name: "holder-paused-past-lease", Count: 3}}}, `id="reached" title="the danger conditions this run reached (docs/conditions.md)">reached: holder-paused-past-lease ×3<`},
		{checker.Result{Checker: "lockcheck", Valid: checker.Valid, Results: []checker.Result{conditions}}, `>reached: none<`},
		{checker.Result{Checker: "lockcheck", Valid: checker.Valid}, ""},
	} {
		_, page := writeReport(t, Input{Meta: Meta{Name: "t", Lock: "redis-set-px", Nemesis: "pause"}, Result: tt.res})
		if tt.want == "" {
			if strings.Contains(page, `id="reached"`) {
				t.Error("a result without the conditions checker has a reached line")
			}
		} else if !strings.Contains(page, tt.want) {
			t.Errorf("the banner lacks %q", tt.want)
		}
	}
}
