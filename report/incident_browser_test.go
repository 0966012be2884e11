package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/browsertest"
)

// TestReportFirstScreen opens the default run's report (make run's:
// testdata/runs/redis-pause-default) in headless Chromium at 1280x800 and
// checks that the first screen, with no scrolling, holds the verdict, the
// incident count (3), and the first incident's drawing with both holders,
// the pause on the paused process's lane only, the server's release of
// its lock, and the tokens on the bars. It saves a screenshot of the
// first screen under the test's temporary directory, or under
// $LOCKCHECK_SCREENSHOTS when set.
func TestReportFirstScreen(t *testing.T) {
	if _, err := os.Stat(browsertest.ChromiumPath); err != nil {
		t.Fatalf("%s is missing (%v): `make test` installs it (scripts/deps.sh); or run apt-get install chromium", browsertest.ChromiumPath, err)
	}
	fx, in := loadDefaultRun(t)
	e, later := pausedHolder(t, fx.h)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	tokens := map[int]int64{}
	for _, op := range fx.h {
		if op.Value != nil && op.Type == history.OK && op.F == history.FAcquire {
			tokens[op.Index] = op.Value.Token
		}
	}
	second := -1
	for _, op := range fx.h {
		if op.Index == later[0] {
			second = op.Process
		}
	}

	tctx := browsertest.Start(t, 120*time.Second)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("open the report", chromedp.Do(tctx, chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate("file://"+path), chromedp.WaitVisible(chromedp.CSS("#incident-svg"))))

	// What lies within the first screen: the elements' boxes, with the
	// page not scrolled.
	type box struct {
		Top, Bottom, Left, Right float64
		Text                     string
	}
	type lane struct {
		Proc        string
		Fault       int // a pause's start op
		Top, Bottom float64
	}
	type facts struct {
		ScrollY, ViewH, ViewW float64
		Verdict, Count        box
		Drawing               box
		Lanes                 []lane
		Pauses                []lane // the lane each pause is drawn in, and its box
		Expiry                []box
		Tokens                []box
		Stale                 []box
	}
	f, err := chromedp.Run(tctx, chromedp.Evaluate[facts](`(() => {
		const b = e => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, text: e.textContent}; };
		const all = s => Array.from(document.querySelectorAll(s));
		return {
			scrollY: window.scrollY, viewH: window.innerHeight, viewW: window.innerWidth,
			verdict: b(document.querySelector('#verdict .verdict')),
			count: b(document.getElementById('incident-count')),
			drawing: b(document.getElementById('incident-svg')),
			lanes: all('#incident-svg g.in-lane[data-lane]').map(g => { const r = g.querySelector('rect.in-bg').getBoundingClientRect();
				return {proc: g.dataset.lane, top: r.top, bottom: r.bottom}; }),
			pauses: all('#incident-svg rect.in-fault.fk-pause').map(r => { const x = r.getBoundingClientRect();
				return {proc: r.dataset.lane, fault: +r.dataset.fault, top: x.top, bottom: x.bottom}; }),
			expiry: all('#incident-svg .in-exp').map(b),
			tokens: all('#incident-svg text.in-tok').map(b),
			stale: all('#incident-svg .in-cs.stale').map(b),
		}; })()`))
	must("read the first screen", err)
	if f.ViewW != 1280 || f.ViewH != 800 || f.ScrollY != 0 {
		t.Fatalf("viewport %gx%g scrolled %g, want 1280x800 at the top", f.ViewW, f.ViewH, f.ScrollY)
	}
	onScreen := func(what string, b box) {
		t.Helper()
		if b.Top < 0 || b.Bottom > f.ViewH || b.Left < 0 || b.Right > f.ViewW || b.Bottom <= b.Top {
			t.Errorf("%s (%q) is at %+v, not within the first screen (1280x800)", what, b.Text, b)
		}
	}
	onScreen("the verdict", f.Verdict)
	if f.Verdict.Text != "INVALID" {
		t.Errorf("verdict %q, want INVALID", f.Verdict.Text)
	}
	onScreen("the incident count", f.Count)
	if f.Count.Text != "3 incidents" {
		t.Errorf("incident count %q, want \"3 incidents\"", f.Count.Text)
	}
	onScreen("the first incident's drawing", f.Drawing)
	laneOf := map[string]lane{}
	for _, l := range f.Lanes {
		laneOf[l.Proc] = l
	}
	for _, p := range []int{e.proc, second} {
		if _, ok := laneOf[strconv.Itoa(p)]; !ok {
			t.Errorf("the drawing has no lane for process %d (lanes %+v)", p, f.Lanes)
		}
	}
	// Each pause lies within the lane of the process it stopped, and the
	// paused holder's is among them.
	onPaused := false
	for _, p := range f.Pauses {
		l, ok := laneOf[p.Proc]
		proc, _ := strconv.Atoi(p.Proc)
		if !ok || !pausedBy(fx.h, p.Fault, proc) || p.Top < l.Top-0.5 || p.Bottom > l.Bottom+0.5 {
			t.Errorf("a pause is drawn at %+v, not within the lane of the process it stopped (%+v)", p, l)
		}
		if p.Proc == strconv.Itoa(e.proc) {
			onPaused = true
			onScreen("the pause", box{Top: p.Top, Bottom: p.Bottom, Left: 1, Right: 2, Text: "pause"})
		}
	}
	if !onPaused {
		t.Errorf("no pause is drawn on process %d's lane (pauses %+v)", e.proc, f.Pauses)
	}
	if len(f.Expiry) == 0 {
		t.Error("the drawing has no expiry mark")
	}
	for _, x := range f.Expiry {
		onScreen("the expiry mark", x)
	}
	var texts []string
	for _, tk := range f.Tokens {
		texts = append(texts, tk.Text)
		if strings.HasPrefix(tk.Text, "token ") {
			onScreen("a token", tk)
		}
	}
	for _, tok := range []int64{tokens[e.acquire], tokens[later[0]]} {
		want := "token " + strconv.FormatInt(tok, 10)
		found := false
		for _, s := range texts {
			found = found || s == want
		}
		if !found {
			t.Errorf("no %q on the bars (%v)", want, texts)
		}
	}
	for _, s := range f.Stale { // the default run's first incident has none: its access failed
		onScreen("the stale access", s)
	}

	// "show in timeline" zooms the full timeline to the incident, where
	// the paused holder's bar carries its token.
	must("zoom to the incident", chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#incident a[data-t0]"))))
	shown, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#tl-tok text')).map(t => t.textContent)`))
	must("read the timeline's tokens", err)
	if want := strconv.FormatInt(tokens[e.acquire], 10); !slices.Contains(shown, want) {
		t.Errorf("zoomed to the incident, the timeline's bars show tokens %v, not the paused holder's %s", shown, want)
	}

	shots := os.Getenv("LOCKCHECK_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	full, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	must("screenshot", err)
	img, err := png.Decode(bytes.NewReader(full))
	must("decode the screenshot", err)
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		t.Fatalf("screenshot of type %T cannot be cut", img)
	}
	var first bytes.Buffer
	must("encode the first screen", png.Encode(&first, sub.SubImage(image.Rect(0, 0, 1280, 800))))
	shot := filepath.Join(shots, "first-screen.png")
	must("save the screenshot", os.WriteFile(shot, first.Bytes(), 0o644))
	t.Logf("the first screen at 1280x800: %s", shot)
	zoomed, err := chromedp.Run(tctx, chromedp.Screenshot(chromedp.CSS("#timeline")))
	must("screenshot the timeline", err)
	zshot := filepath.Join(shots, "incident-timeline.png")
	must("save the screenshot", os.WriteFile(zshot, zoomed, 0o644))
	t.Logf("the timeline zoomed to the first incident: %s", zshot)
}
