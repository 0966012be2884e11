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
