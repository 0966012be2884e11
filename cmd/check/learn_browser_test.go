package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lockcheck/lockcheck/internal/browsertest"
	"github.com/lockcheck/lockcheck/learn"
)

// TestLearnPagesFirstScreen writes the course as `check learn --html`
// does and opens every lesson's page in headless Chromium at 1280x800: the
// question and its choices are on the first screen and the run's taught
// anomaly is hidden; after a choice is checked, the taught anomaly's story
// is shown, still on the first screen, with no scrolling.
func TestLearnPagesFirstScreen(t *testing.T) {
	ctx := browsertest.Start(t, 180*time.Second)
	dir := filepath.Join(t.TempDir(), "course")
	if code, out, stderr := run("learn", "--html", dir); code != exitValid {
		t.Fatalf("check learn --html: exit %d: %s %s", code, out, stderr)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("viewport", chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)))
	type screen struct {
		ScrollY     float64
		QuestionBot float64
		ChoicesBot  float64
		TaughtShown bool
		TaughtTop   float64
		TaughtBot   float64
		Taught      string
	}
	read := func() screen {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[screen](`(() => {
			const bottom = sel => Math.max(...Array.from(document.querySelectorAll(sel)).map(e => e.getBoundingClientRect().bottom));
			const taught = document.getElementById('taught');
			const r = taught ? taught.getBoundingClientRect() : {top: -1, bottom: -1};
			return {scrollY: window.scrollY, questionBot: bottom('.question'), choicesBot: bottom('.choice'),
				taughtShown: !!taught && !taught.hidden && r.height > 0, taughtTop: r.top, taughtBot: r.bottom,
				taught: taught ? taught.textContent : ''};
		})()`))
		must("read the page", err)
		return s
	}
	for _, l := range learn.All() {
		t.Run(l.ID, func(t *testing.T) {
			must("open", chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, l.ID+".html")), chromedp.WaitVisible(chromedp.CSS("#check"))))
			before := read()
			if before.QuestionBot > 800 || before.ChoicesBot > 800 {
				t.Errorf("the question ends at %.0f px and its choices at %.0f px: not on the 800 px first screen", before.QuestionBot, before.ChoicesBot)
			}
			if before.TaughtShown {
				t.Error("the run's anomaly shows before the student has answered")
			}
			must("answer", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=choice][value="`+strconv.Itoa(l.Answer)+`"]`)),
				chromedp.Click(chromedp.CSS("#check")), chromedp.WaitVisible(chromedp.CSS("#taught"))))
			after := read()
			t.Logf("question ends at %.0f px; after the answer the taught anomaly spans %.0f-%.0f px", before.ChoicesBot, after.TaughtTop, after.TaughtBot)
			if !after.TaughtShown || after.ScrollY != 0 || after.TaughtTop < 0 || after.TaughtBot > 800 {
				t.Errorf("after the answer: taught anomaly shown %v at %.0f-%.0f px, page scrolled %.0f px: want it whole on the 800 px first screen",
					after.TaughtShown, after.TaughtTop, after.TaughtBot, after.ScrollY)
			}
			if !strings.Contains(after.Taught, "["+l.Shows) {
				t.Errorf("the shown story is not the taught %s: %q", l.Shows, after.Taught)
			}
		})
	}
}
