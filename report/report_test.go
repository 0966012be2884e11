package report

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// externalRef finds anything in a page that could make a browser fetch
// from the network: an absolute or protocol-relative URL in an attribute,
// url() or @import in CSS, a <link>, or a scheme anywhere.
var externalRef = regexp.MustCompile(`(?i)https?:|ftp:|ws:|wss:|(?:src|href|action|xlink:href)\s*=\s*["']?//|url\(|@import|<link\b|<iframe\b|<img\b|<object\b|<embed\b`)

// writeReport writes in to a fresh directory, with extra files beside it,
// and returns the page.
func writeReport(t *testing.T, in Input, beside ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range beside {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "report.html")
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Errorf("Write left %s.tmp behind", path)
	}
	return path, string(b)
}

// TestReportWrite renders the verdicts and checks the banner, the anomaly
// paragraphs (verbatim, in kind order) and which files are linked.
func TestReportWrite(t *testing.T) {
	fx := loadFixture(t, "pause-double-holder")
	invalid := check(t, fx.h, false)
	clean := synthHistory(2, 3, 3*time.Second) // first pause after 3 s: none
	valid := check(t, clean, false)
	if valid.Valid != checker.Valid {
		t.Fatalf("clean synthetic history: %s %v", valid.Valid, valid.Anomalies)
	}
	unknown := checker.Result{Checker: "lockcheck", Valid: checker.Unknown, Error: "mutex: porcupine timed out after 60s"}

	tests := []struct {
		name       string
		in         Input
		beside     []string
		verdict    string
		want       []string // substrings of the page
		wantLinks  []string
		unwantLink []string
	}{
		{
			name: "invalid", in: Input{Meta: fx.meta, History: fx.h, Result: invalid},
			beside: []string{"linearizability.html", "test.json"}, verdict: "invalid",
			want: []string{"INVALID", "seed <b>3</b>", "fencing: not used", "1 double-holder, 1 lost-update, 1 nonlinearizable",
				`<svg id="tl"`, `<svg id="latency"`, `<svg id="throughput"`, `class="dh"`, `class="h x"`, "fb-process",
				"not used: the resource took no tokens"},
			wantLinks: []string{"history.jsonl", "results.json", "test.json", "linearizability.html"},
		},
		{
			name: "valid", in: Input{Meta: Meta{Name: "control", Lock: "redis-set-px", Nemesis: "none", Workers: 3, Seed: 9,
				Fencing: true, Duration: 3 * time.Second, Command: "check run --lock redis-set-px --seed 9 --fencing"},
				History: clean, Result: valid},
			verdict: "valid",
			// --fencing, but the synthetic resource took no tokens.
			want:      []string{"VALID", "fencing: not used", "no anomalies", "The checkers found no anomalies."},
			wantLinks: []string{"history.jsonl", "results.json"}, unwantLink: []string{"linearizability.html", "test.json"},
		},
		{
			name: "unknown", in: Input{Meta: Meta{Name: "slow", Fencing: true}, History: clean, Result: unknown}, verdict: "unknown",
			want:       []string{"UNKNOWN", "porcupine timed out after 60s", "nemesis <b>none</b>", "fencing: on"},
			unwantLink: []string{"linearizability.html"},
		},
		{
			name: "no tokens", in: Input{Meta: Meta{Name: "rl", Lock: "redlock", NoTokens: true}, History: clean, Result: valid},
			verdict: "valid", want: []string{`id="no-tokens"`, "The lock redlock hands out no fencing token"},
		},
		{
			name: "malformed history", in: Input{Meta: Meta{Name: "broken"}, Result: unknown,
				History: history.History{{Index: 0, Process: 1, Type: history.OK, F: "acquire"}}},
			verdict: "unknown", want: []string{"The history is malformed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, page := writeReport(t, tt.in, tt.beside...)
			if !strings.Contains(page, `<header class="banner `+tt.verdict+`"`) {
				t.Errorf("banner is not %s", tt.verdict)
			}
			for _, s := range tt.want {
				if !strings.Contains(page, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, l := range tt.wantLinks {
				if !strings.Contains(page, `href="`+l+`"`) {
					t.Errorf("page does not link %s", l)
				}
			}
			for _, l := range tt.unwantLink {
				if strings.Contains(page, `href="`+l+`"`) {
					t.Errorf("page links %s, which does not exist", l)
				}
			}
			if m := externalRef.FindString(page); m != "" {
				t.Errorf("page refers to the network: %q", m)
			}
			// Every anomaly's explanation appears verbatim, in kind order.
			text := html.UnescapeString(page)
			last := -1
			for _, a := range sortedAnomalies(tt.in.Result.Anomalies) {
				i := strings.Index(text, a.Explanation)
				if i < 0 {
					t.Errorf("page lacks the %s explanation %q", a.Kind, a.Explanation)
					continue
				}
				if i < last {
					t.Errorf("%s paragraph out of order", a.Kind)
				}
				last = i
			}
		})
	}
}

// TestReportKindOrder checks that the page groups kinds as the CLI
// prints them: double-holder and lost-update first.
func TestReportKindOrder(t *testing.T) {
	as := []checker.Anomaly{{Kind: "nonlinearizable"}, {Kind: "zzz"}, {Kind: "lost-update"}, {Kind: "stale-write-rejected"},
		{Kind: "double-holder"}, {Kind: "aaa"}, {Kind: "lost-update", Fenced: true}}
	var got []string
	for _, a := range sortedAnomalies(as) {
		got = append(got, a.Kind)
	}
	want := "double-holder lost-update lost-update stale-write-rejected nonlinearizable aaa zzz"
	if strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
	if s := anomalySummary(sortedAnomalies(as)); !strings.HasPrefix(s, "1 double-holder, 2 lost-update (1 fenced), ") {
		t.Errorf("summary %q", s)
	}
}

// TestReportParagraphCap checks that at most maxParagraphs anomalies get a
// paragraph and the rest are counted.
func TestReportParagraphCap(t *testing.T) {
	h := synthHistory(3, 3, 2*time.Second)
	res := check(t, h, false)
	for i := range 250 {
		res.Anomalies = append(res.Anomalies, checker.Anomaly{Kind: "lost-update", Processes: []int{1, 2},
			Start: time.Duration(i) * time.Millisecond, End: time.Duration(i+1) * time.Millisecond,
			Explanation: "story " + strings.Repeat("x", i%3)})
	}
	_, page := writeReport(t, Input{Meta: Meta{Name: "many"}, History: h, Result: res})
	if n := strings.Count(page, `<p class="anomaly`); n != maxParagraphs {
		t.Errorf("%d paragraphs, want %d", n, maxParagraphs)
	}
	if !strings.Contains(page, "and 50 more") || !strings.Contains(page, "lost-update (250)") {
		t.Error("page does not count the anomalies left out")
	}
}

// TestReportSize checks the budget: a 60 s, 10-worker run with pauses
// (about 25 000 ops) gives a report under 5 MB with every hold drawn.
func TestReportSize(t *testing.T) {
	h := synthHistory(1, 10, 60*time.Second)
	if len(h) < 20000 {
		t.Fatalf("synthetic history has %d ops, want about 25 000", len(h))
	}
	res := check(t, h, false)
	start := time.Now()
	path, page := writeReport(t, Input{Meta: Meta{Name: "big", Workers: 10, Duration: time.Minute}, History: h, Result: res})
	t.Logf("%d ops: %s, %d bytes, written in %s", len(h), path, len(page), time.Since(start).Round(time.Millisecond))
	if len(page) >= 5<<20 {
		t.Errorf("report is %d bytes, want < 5 MiB", len(page))
	}
	grants := 0
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK {
			grants++
		}
	}
	if n := strings.Count(page, `<rect class="h`); n != grants {
		t.Errorf("%d hold bars, want one per grant (%d)", n, grants)
	}
	events := 0
	for _, op := range h {
		if op.F == history.FEvent {
			events++
		}
	}
	if n := strings.Count(page, `<path class="e" d=`); n != events || events == 0 {
		t.Errorf("%d event marks, want one per event (%d)", n, events)
	}
	if n := strings.Count(page, "<title>"); n > maxHover+maxHoldRects+2*maxBands+200 {
		t.Errorf("%d tooltips: the hover budget is not applied", n)
	}
}

// TestReportThinning checks that a history far beyond the budgets keeps
// every non-ok op and stays bounded.
func TestReportThinning(t *testing.T) {
	h := synthHistory(4, 10, 150*time.Second) // ~ 65 000 ops
	res := check(t, h, false)
	_, page := writeReport(t, Input{Meta: Meta{Name: "long", Workers: 10}, History: h, Result: res})
	if !strings.Contains(page, "Thinned to keep the page small") {
		t.Error("no thinning note")
	}
	assertFailMarks(t, h, page)
	t.Logf("%d ops: %d bytes", len(h), len(page))
}

// TestReportFailHeavy checks that a run of nothing but failing acquires
// (a lock service that is down) still gives a bounded page.
func TestReportFailHeavy(t *testing.T) {
	var h history.History
	for i := range 100000 {
		p := i % 10
		at := time.Duration(i) * time.Millisecond
		h = append(h, history.Op{Index: 2 * i, Time: at, Process: p, Type: history.Invoke, F: history.FAcquire, Key: "k0"},
			history.Op{Index: 2*i + 1, Time: at + 500*time.Microsecond, Process: p, Type: history.Fail, F: history.FAcquire,
				Key: "k0", Error: "dial tcp 127.0.0.1:6379: connect: connection refused"})
	}
	res := checker.Result{Checker: "lockcheck", Valid: checker.Invalid,
		Anomalies: []checker.Anomaly{{Kind: "no-grants", Explanation: "no acquire succeeded"}}}
	_, page := writeReport(t, Input{Meta: Meta{Name: "down", Workers: 10}, History: h, Result: res})
	if len(page) >= 5<<20 {
		t.Errorf("report is %d bytes, want < 5 MiB", len(page))
	}
	if n := strings.Count(page, "<title>"); n > maxHover+50 {
		t.Errorf("%d tooltips, want at most about %d", n, maxHover)
	}
	if !strings.Contains(page, "100000 fail, info, crash and anomaly ops, 1 in 4 drawn") {
		t.Error("no note on the thinned fail ops")
	}
	t.Logf("%d ops: %d bytes", len(h), len(page))
}

// TestReportProgress checks the status line on a terminal (rewritten in
// place) and in a log (a line at most every 5 s, plus the last).
func TestReportProgress(t *testing.T) {
	snaps := func() []Snapshot {
		var ss []Snapshot
		for e := time.Duration(0); e <= 12*time.Second; e += 250 * time.Millisecond {
			ss = append(ss, Snapshot{Elapsed: e, Total: 12 * time.Second, Grants: int(e / (100 * time.Millisecond))})
		}
		ss[len(ss)-1].Anomalies, ss[len(ss)-1].Nemesis = 2, "pause of process 3"
		return ss
	}
	tests := []struct {
		name  string
		tty   bool
		lines int    // newline-terminated lines
		cr    int    // carriage returns
		last  string // the last status text
	}{
		{name: "tty", tty: true, lines: 1, cr: 49, last: "running 12s / 12s  100%  grants 120  while held 2  nemesis: pause of process 3"},
		{name: "log", tty: false, lines: 4, cr: 0, last: "running 12s / 12s  100%  grants 120  while held 2  nemesis: pause of process 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := NewProgress(&buf, tt.tty)
			for _, s := range snaps() {
				p.Update(s)
			}
			p.Done()
			p.Done()
			out := buf.String()
			if n := strings.Count(out, "\n"); n != tt.lines {
				t.Errorf("%d lines, want %d: %q", n, tt.lines, out)
			}
			if n := strings.Count(out, "\r"); n != tt.cr {
				t.Errorf("%d carriage returns, want %d", n, tt.cr)
			}
			if tt.tty && strings.Count(out, "\x1b[K") != tt.cr {
				t.Error("a rewrite does not clear to the end of the line")
			}
			if !tt.tty && strings.Contains(out, "\x1b") {
				t.Error("escape sequences in a log")
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			last := lines[len(lines)-1]
			if i := strings.LastIndex(last, "\r"); i >= 0 {
				last = last[i+1:]
			}
			last = strings.TrimSuffix(last, "\x1b[K")
			if last != tt.last {
				t.Errorf("last status %q, want %q", last, tt.last)
			}
			if !tt.tty {
				want := []string{"running 0s / 12s    0%", "running 5s / 12s   41%", "running 10s / 12s   83%", "running 12s / 12s  100%"}
				for i, w := range want {
					if !strings.HasPrefix(lines[i], w) {
						t.Errorf("line %d %q, want prefix %q", i, lines[i], w)
					}
				}
			}
		})
	}
}

// TestReportProgressLine checks the status text, a long fault description
// cut short.
func TestReportProgressLine(t *testing.T) {
	tests := []struct {
		s    Snapshot
		want string
	}{
		{Snapshot{Elapsed: 12345 * time.Millisecond, Total: 20 * time.Second, Grants: 845},
			"running 12.3s / 20s   61%  grants 845  while held 0  nemesis: -"},
		{Snapshot{Elapsed: 25 * time.Second, Total: 20 * time.Second, Anomalies: 1, Nemesis: strings.Repeat("pause ", 20)},
			"running 25s / 20s  100%  grants 0  while held 1  nemesis: " + strings.Repeat("pause ", 9) + "pause…"},
		{Snapshot{Elapsed: time.Second}, "running 1s / 0s    0%  grants 0  while held 0  nemesis: -"},
	}
	for _, tt := range tests {
		if got := progressLine(tt.s); got != tt.want {
			t.Errorf("progressLine(%+v)\n got %q\nwant %q", tt.s, got, tt.want)
		}
	}
}

// TestReportIsTerminal checks that files and pipes are not terminals.
func TestReportIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tt := range []struct {
		name string
		f    *os.File
	}{{"file", f}, {"pipe", w}, {"nil", nil}} {
		if IsTerminal(tt.f) {
			t.Errorf("IsTerminal(%s) = true", tt.name)
		}
	}
}

// assertFailMarks checks that page draws each failed or uncertain client op
// of h as its own mark with a tooltip, and that there are some.
func assertFailMarks(t *testing.T, h history.History, page string) {
	t.Helper()
	fails := 0
	for _, op := range h {
		if (op.Type == history.Fail || op.Type == history.Info) && !op.IsNemesis() && op.F != history.FCrash && op.F != history.FEvent {
			fails++
		}
	}
	if n := len(regexp.MustCompile(`<path class="[fi]( q)?" d=`).FindAllString(page, -1)); n != fails || fails == 0 {
		t.Errorf("%d fail/info marks with tooltips, want %d", n, fails)
	}
}
