package learn

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/lockcheck/lockcheck/internal/browsertest"
)

// TestCourseBrowser writes the course with WriteHTML into a temporary
// directory and drives its pages from disk (file://) in headless Chromium
// at 1280x800: the index lists every lesson; on three lessons' pages, Play
// advances the playhead (waiting for it, not for a fixed time), scrubbing
// to the first overlap shows it in red with its OVERLAP line, and a wrong
// then a right answer to the quiz each show their verdict. No page asks
// for anything but its own file, and none raises a script error or a
// Content-Security-Policy refusal. Screenshots go under
// $LOCKCHECK_SCREENSHOTS when set.
func TestCourseBrowser(t *testing.T) {
	ctx := browsertest.Start(t, 180*time.Second)
	dir := t.TempDir()
	if err := WriteHTML(dir, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var requested []string
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("watch the requests", chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, e.Request.URL)
			mu.Unlock()
		}
	}))
	must("watch for problems", chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.__problems = [];
			document.addEventListener('securitypolicyviolation', e => window.__problems.push('refused ' + e.blockedURI + ' (' + e.violatedDirective + ')'));
			window.addEventListener('error', e => window.__problems.push('script error: ' + e.message));`})
		return err
	})))
	noProblems := func(page string) {
		t.Helper()
		ps, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__problems || ['no problem log']`))
		must("problems of "+page, err)
		for _, p := range ps {
			t.Errorf("%s: %s", page, p)
		}
	}
	shots := os.Getenv("LOCKCHECK_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else {
		must("screenshot dir", os.MkdirAll(shots, 0o755))
	}
	url := func(name string) string { return "file://" + filepath.Join(dir, name) }

	must("open the index", chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(url("index.html")), chromedp.WaitVisible(chromedp.CSS("#lessons"))))
	items, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#lessons li a')).map(a => a.getAttribute('href'))`))
	must("read the index", err)
	all := All()
	if len(items) != len(all) {
		t.Fatalf("index lists %d lessons, want %d: %v", len(items), len(all), items)
	}
	for i, l := range all {
		if items[i] != l.ID+".html" {
			t.Errorf("index item %d links %s, want %s.html", i+1, items[i], l.ID)
		}
	}
	noProblems("index")

	for _, id := range []string{"ttl-pause", "fencing", "zk-session-expiry"} {
		t.Run(id, func(t *testing.T) {
			l, err := Find(id)
			must("find", err)
			tl, err := l.Timeline()
			must("timeline", err)
			if len(tl.Red) == 0 || tl.Red[0].Kind != "overlap" {
				t.Fatalf("%s: recorded history has no overlap to scrub to: %+v", id, tl.Red)
			}
			must("open "+id, chromedp.Do(ctx, chromedp.Navigate(url(id+".html")), chromedp.WaitVisible(chromedp.CSS("#timeline-svg"))))

			// Play: the playhead moves on its own; wait for it.
			must("press play", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#play"))))
			moved, err := chromedp.Run(ctx, chromedp.Poll[bool](`Number(document.getElementById('scrub').value) >= 200 && document.getElementById('play').textContent === 'Pause'`,
				chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0)))
			must("wait for the playhead", err)
			if !moved {
				t.Fatal("the playhead did not move after Play")
			}
			must("press pause", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#play"))))
			clock, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#clock")))
			must("read the clock", err)
			if sec := clockSeconds(t, clock); sec < 0.2 {
				t.Errorf("after play the clock says %q, want at least 0.2 s", clock)
			}
			label, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#play")))
			must("read the play button", err)
			if label != "Play" {
				t.Errorf("after pause the button says %q, want Play", label)
			}

			// Scrub: a click on the range moves the playhead there.
			frac := 0.75
			pos, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById('scrub').getBoundingClientRect(); return [r.left, r.top + r.height / 2, r.width]; })()`))
			must("locate the scrubber", err)
			must("click the scrubber", chromedp.Do(ctx, chromedp.MouseClickXY(pos[0]+8+frac*(pos[2]-16), pos[1])))
			clock, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#clock")))
			must("read the clock", err)
			if sec, want := clockSeconds(t, clock), frac*tl.End; sec < want-0.05*tl.End || sec > want+0.05*tl.End {
				t.Errorf("after a click at 3/4 of the scrubber the clock says %q, want about %.2f s", clock, want)
			}

			// Scrub to the first overlap: it is drawn in red and named.
			mid := (tl.Red[0].From + tl.Red[0].To) / 2
			must("scrub to the overlap", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('scrub'); s.value = `+
				strconv.Itoa(int(mid*1000))+`; s.dispatchEvent(new Event('input', {bubbles: true})); })()`)))
			type redFacts struct {
				Alert     string
				Shown     int
				Fill      string
				UnsafeRow int
			}
			rf, err := chromedp.Run(ctx, chromedp.Evaluate[redFacts](`(() => {
				const reds = Array.from(document.querySelectorAll('#timeline-svg rect.red')).filter(r => r.getBoundingClientRect().width > 0);
				return {alert: document.getElementById('alert').textContent, shown: reds.length,
					fill: reds.length ? getComputedStyle(reds[0]).fill : '', unsafeRow: document.querySelectorAll('#status tr.unsafe').length};
			})()`))
			must("read the overlap", err)
			if !strings.HasPrefix(rf.Alert, "OVERLAP: ") || !strings.Contains(rf.Alert, "both believe they hold") {
				t.Errorf("at %.2f s the alert says %q, want the OVERLAP line", mid, rf.Alert)
			}
			if rf.Shown == 0 || rf.Fill != "rgb(220, 38, 38)" {
				t.Errorf("at %.2f s: %d red overlap bands drawn (fill %q), want at least one in rgb(220, 38, 38)", mid, rf.Shown, rf.Fill)
			}
			shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			must("screenshot", err)
			must("save screenshot", os.WriteFile(filepath.Join(shots, "learn-"+id+".png"), shot, 0o644))

			// The quiz: a wrong answer, then the right one.
			wrong := (l.Answer + 1) % len(l.Choices)
			for _, c := range []struct {
				choice int
				class  string
				prefix string
			}{{wrong, "wrong", "Not quite. The answer: "}, {l.Answer, "right", "Right: "}} {
				must("answer", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=choice][value="`+strconv.Itoa(c.choice)+`"]`)),
					chromedp.Click(chromedp.CSS("#check")), chromedp.WaitVisible(chromedp.CSS("#answer"))))
				type verdict struct{ Text, Class string }
				v, err := chromedp.Run(ctx, chromedp.Evaluate[verdict](`({text: document.getElementById('verdict').textContent, class: document.getElementById('verdict').className})`))
				must("read the verdict", err)
				if v.Class != c.class || v.Text != c.prefix+l.Choices[l.Answer] {
					t.Errorf("answer %d: verdict %+v, want class %s and %q", c.choice, v, c.class, c.prefix+l.Choices[l.Answer])
				}
			}
			noProblems(id)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requested {
		if !strings.HasPrefix(u, "file://"+dir+"/") {
			t.Errorf("a page asked for %s: the course must work offline", u)
		}
	}
	if len(requested) == 0 {
		t.Error("no request recorded: the network log is not working")
	}
}

// clockSeconds reads the player's clock, "t = 1.23 s".
func clockSeconds(t *testing.T, clock string) float64 {
	t.Helper()
	s := strings.TrimSuffix(strings.TrimPrefix(clock, "t = "), " s")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("clock %q: %v", clock, err)
	}
	return v
}
