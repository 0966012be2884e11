package report

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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

// TestReportBrowser drives headless Chromium over `check serve`'s handler:
// the index lists a stored invalid run, its report shows the banner, an
// anomaly story and the timeline, every link on both pages answers 200,
// the anomaly link zooms the timeline, no page requests anything from
// anywhere but the server, and a 60 s, 10-worker report is under 5 MB. It
// logs the report's render time (not asserted: the machine is shared) and
// saves screenshots under the test's temporary directory, or under
// $LOCKCHECK_SCREENSHOTS when set (to keep them).
func TestReportBrowser(t *testing.T) {
	// make test installs Chromium: here a missing one is a failure, not
	// a skip.
	if _, err := os.Stat(browsertest.ChromiumPath); err != nil {
		t.Fatalf("%s is missing (%v): `make test` installs it (scripts/deps.sh); or run apt-get install chromium", browsertest.ChromiumPath, err)
	}
	store := t.TempDir()

	fx := loadFixture(t, "pause-double-holder")
	res := check(t, fx.h, fx.meta.Fencing)
	if res.Valid.String() != "invalid" {
		t.Fatalf("fixture verdict %s, want invalid", res.Valid)
	}
	const fixRun = "20261121T172223"
	storeRun(t, store, fx.meta.Name, fixRun, fx.testRaw, Input{Meta: fx.meta, History: fx.h, Result: res})
	first := sortedAnomalies(res.Anomalies)[0]

	h := synthHistory(1, 10, 60*time.Second)
	meta := Meta{Name: "synthetic-pause-60s", Lock: "redis-set-px", Nemesis: "pause", Seed: 1, Workers: 10,
		Duration: 60 * time.Second, Started: fx.meta.Started.Add(time.Hour),
		Command: "check run --lock redis-set-px --nemesis pause --workers 10 --time 1m0s --seed 1"}
	bigDir := storeRun(t, store, meta.Name, "20261121T182223", nil, Input{Meta: meta, History: h, Result: check(t, h, false)})
	st, err := os.Stat(filepath.Join(bigDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("60 s / 10-worker report: %d ops, report.html %.2f MB", len(h), float64(st.Size())/1e6)
	if st.Size() >= 5<<20 {
		t.Errorf("60 s / 10-worker report is %d bytes, want < 5 MiB", st.Size())
	}

	srv := httptest.NewServer(NewServer(store)) // listens on 127.0.0.1
	defer srv.Close()

	tctx := browsertest.Start(t, 180*time.Second) // a bound on events, generous for a loaded machine
	var mu sync.Mutex
	var requested []string
	if err := chromedp.Listen(tctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	// Every page records what the Content-Security-Policy refused and the
	// script errors it raised.
	if err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.__problems = [];
			document.addEventListener('securitypolicyviolation', e => window.__problems.push('refused ' + e.blockedURI + ' (' + e.violatedDirective + ')'));
			window.addEventListener('error', e => window.__problems.push('script error: ' + e.message));`})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	noProblems := func(page string) {
		t.Helper()
		ps, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`window.__problems || ['no problem log']`))
		if err != nil {
			t.Fatalf("problems of %s: %v", page, err)
		}
		for _, p := range ps {
			t.Errorf("%s: %s", page, p)
		}
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	client := srv.Client()
	checkLinks := func(page string) {
		t.Helper()
		hrefs, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('a[href]')).map(a => new URL(a.getAttribute('href'), document.baseURI).href)`))
		must("links of "+page, err)
		if len(hrefs) == 0 {
			t.Errorf("%s has no links", page)
		}
		seen := make(map[string]bool)
		for _, href := range hrefs {
			u, _, _ := strings.Cut(href, "#")
			if seen[u] {
				continue
			}
			seen[u] = true
			if !strings.HasPrefix(u, srv.URL+"/") {
				t.Errorf("%s links outside the server: %s", page, href)
				continue
			}
			resp, err := client.Get(u)
			if err != nil {
				t.Errorf("%s: GET %s: %v", page, u, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: GET %s: %s", page, u, resp.Status)
			}
		}
		t.Logf("%s: %d distinct links, all 200", page, len(seen))
	}
	shots := os.Getenv("LOCKCHECK_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	// The index lists both runs, newest first, with their verdicts.
	must("open the index", chromedp.Do(tctx, chromedp.EmulateViewport(1300, 900),
		chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#runs"))))
	type row struct {
		Verdict, Lock, Badge, Text string
	}
	rows, err := chromedp.Run(tctx, chromedp.Evaluate[[]row](`Array.from(document.querySelectorAll('tr.run')).map(r =>
		({verdict: r.dataset.verdict, lock: r.dataset.lock, badge: r.querySelector('.v').textContent, text: r.innerText}))`))
	must("read the index", err)
	if len(rows) != 2 {
		t.Fatalf("index lists %d runs, want 2: %+v", len(rows), rows)
	}
	if r := rows[1]; r.Verdict != "invalid" || r.Badge != "invalid" || !strings.Contains(r.Text, fx.meta.Name) || !strings.Contains(r.Text, fixRun) {
		t.Errorf("index row of the fixture run = %+v, want verdict invalid, name %s, run %s", r, fx.meta.Name, fixRun)
	}
	if !strings.Contains(rows[0].Text, meta.Name) {
		t.Errorf("newest run first: first row %q, want %s", rows[0].Text, meta.Name)
	}
	checkLinks("index")
	noProblems("index")

	// The report: banner, anomaly story (the checker's text, verbatim),
	// timeline.
	reportURL := srv.URL + "/runs/" + fx.meta.Name + "/" + fixRun + "/report.html"
	must("open the report", chromedp.Do(tctx, chromedp.Navigate(reportURL), chromedp.WaitVisible(chromedp.CSS("#tl"))))
	type pageFacts struct {
		Banner, BannerText, Explanation, Kind string
		Holds, DoubleHolds, Bands, Faults     int
		ViewBox                               string
	}
	facts, err := chromedp.Run(tctx, chromedp.Evaluate[pageFacts](`({
		banner: document.querySelector('header.banner').className,
		bannerText: document.querySelector('header.banner').innerText,
		explanation: document.querySelector('p.anomaly .explanation').textContent,
		kind: document.querySelector('p.anomaly .tag').textContent,
		holds: document.querySelectorAll('#tl-plot rect.h').length,
		doubleHolds: document.querySelectorAll('#tl-plot rect.h.x').length,
		bands: document.querySelectorAll('#tl-plot .dh').length,
		faults: document.querySelectorAll('#tl-plot rect.fb').length,
		viewBox: document.getElementById('tl-plot').getAttribute('viewBox')})`))
	must("read the report", err)
	if facts.Banner != "banner invalid" || !strings.Contains(facts.BannerText, "INVALID") ||
		!strings.Contains(facts.BannerText, fx.meta.Command) || !strings.Contains(facts.BannerText, "seed 3") {
		t.Errorf("banner %q: %q, want invalid with seed 3 and the command %q", facts.Banner, facts.BannerText, fx.meta.Command)
	}
	if facts.Kind != first.Kind || facts.Explanation != first.Explanation {
		t.Errorf("first anomaly paragraph = [%s] %q, want [%s] %q", facts.Kind, facts.Explanation, first.Kind, first.Explanation)
	}
	if facts.Holds == 0 || facts.DoubleHolds == 0 || facts.Bands == 0 || facts.Faults == 0 {
		t.Errorf("timeline: %d holds, %d in a double holder, %d double-holder bands, %d fault bands; want all > 0",
			facts.Holds, facts.DoubleHolds, facts.Bands, facts.Faults)
	}
	checkLinks("report")
	noProblems("report")
	full, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	must("screenshot", err)
	shot := filepath.Join(shots, "report.png")
	must("save screenshot", os.WriteFile(shot, full, 0o644))
	t.Logf("screenshot of the report: %s", shot)

	// "show in timeline" zooms the timeline to the anomaly.
	must("zoom to the anomaly", chromedp.Do(tctx, chromedp.Click(chromedp.CSS("p.anomaly a[data-t0]"))))
	vb, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById('tl-plot').getAttribute('viewBox')`))
	must("read the zoom", err)
	var x0, w, y0, ph float64
	if _, err := fmt.Sscanf(vb, "%g %g %g %g", &x0, &y0, &w, &ph); err != nil {
		t.Fatalf("viewBox %q: %v", vb, err)
	}
	if t0, t1 := ms(first.Start), ms(first.End); x0 > t0 || x0+w < t1 || vb == facts.ViewBox {
		t.Errorf("after zooming to the anomaly (%.0f–%.0f ms) the timeline shows %q (was %q)", t0, t1, vb, facts.ViewBox)
	}
	zoomed, err := chromedp.Run(tctx, chromedp.Screenshot(chromedp.CSS("#timeline")))
	must("screenshot the timeline", err)
	zshot := filepath.Join(shots, "timeline-zoomed.png")
	must("save screenshot", os.WriteFile(zshot, zoomed, 0o644))
	t.Logf("screenshot of the zoomed timeline: %s", zshot)

	noProblems("report after zooming")

	// Porcupine's page works under the same policy.
	must("open linearizability.html", chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"/runs/"+fx.meta.Name+"/"+fixRun+"/linearizability.html"),
		chromedp.WaitReady(chromedp.CSS("body"))))
	noProblems("linearizability.html")

	// Render time of the 60 s, 10-worker report: navigation start to the
	// end of the load event.
	bigURL := srv.URL + "/runs/" + meta.Name + "/20261121T182223/report.html"
	start := time.Now()
	must("open the 60 s report", chromedp.Do(tctx, chromedp.Navigate(bigURL), chromedp.WaitVisible(chromedp.CSS("#tl"))))
	wall := time.Since(start)
	type timing struct{ DCL, Load float64 }
	tm, err := chromedp.Run(tctx, chromedp.Poll[timing](`(() => { const n = performance.getEntriesByType('navigation')[0];
		return n && n.loadEventEnd > 0 ? {dcl: n.domContentLoadedEventEnd - n.startTime, load: n.loadEventEnd - n.startTime} : null })()`,
		chromedp.WithPollingTimeout(20*time.Second)))
	must("read the navigation timing", err)
	t.Logf("60 s / 10-worker report in Chromium: DOMContentLoaded %.0f ms, load event end %.0f ms after navigation start (%s wall, including the protocol)",
		tm.DCL, tm.Load, wall.Round(time.Millisecond))
	bigShot, err := chromedp.Run(tctx, chromedp.Screenshot(chromedp.CSS("#timeline")))
	must("screenshot the 60 s timeline", err)
	must("save screenshot", os.WriteFile(filepath.Join(shots, "timeline-60s.png"), bigShot, 0o644))
	noProblems("60 s report")

	mu.Lock()
	defer mu.Unlock()
	for _, u := range requested {
		if !strings.HasPrefix(u, srv.URL+"/") && !strings.HasPrefix(u, "data:") && u != "about:blank" {
			t.Errorf("the browser requested %s, outside the server", u)
		}
	}
	if !slices.Contains(requested, reportURL) {
		t.Errorf("request log misses %s: %v", reportURL, requested)
	}
}
