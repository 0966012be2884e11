package report

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// writeFile writes path, making its directory.
func writeFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// touch sets the modification time of path to d after the epoch of the
// tests, so the order of writes does not rest on the clock's resolution.
func touch(t *testing.T, path string, d time.Duration) {
	t.Helper()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(d)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// testJSON is a test.json of the run named by its start time.
func testJSON(name, lock, run string) string {
	started, _ := time.Parse("20060102T150405", run)
	return fmt.Sprintf(`{"name":%q,"lock":%q,"nemesis":"pause","seed":1,"workers":3,"time":1000000000,"started":%q}`,
		name, lock, started.Format(time.RFC3339))
}

// indexRow is a row of the index: verdict, lock, and the anomaly cell.
type indexRow struct{ verdict, lock, test, anomalies string }

// rowRE matches a row of the index, capturing verdict, lock, test
// directory and the anomalies cell.
var rowRE = regexp.MustCompile(`(?s)<tr class="run" data-verdict="([a-z]+)" data-lock="([a-z-]*)">.*?<span class="muted">([^<]*)</span>.*?<span class="v [a-z]+">[a-z]+</span></td>\s*<td>([^<]*)`)

// getIndex GETs target from h and returns the body and its rows.
func getIndex(t testing.TB, h http.Handler, target string) (string, []indexRow) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d", target, rec.Code)
	}
	var rows []indexRow
	for _, m := range rowRE.FindAllStringSubmatch(rec.Body.String(), -1) {
		rows = append(rows, indexRow{m[1], m[2], m[3], m[4]})
	}
	return rec.Body.String(), rows
}

// TestServeCacheRereads checks that an unchanged results.json is decoded
// once, and one whose modification time or size changed is decoded again.
func TestServeCacheRereads(t *testing.T) {
	store := t.TempDir()
	dir := filepath.Join(store, "t", "20260101T100000")
	writeFile(t, filepath.Join(dir, "test.json"), testJSON("t", "redis-set-px", "20260101T100000"))
	results := filepath.Join(dir, "results.json")
	writeFile(t, results, `{"valid":false,"anomalies":[{"kind":"double-holder"}]}`)
	touch(t, results, time.Hour)
	h := NewServer(store).(*server)
	parses := func() int64 { return h.cache.parses.Load() }
	steps := []struct {
		name   string
		change func()
		want   indexRow
		parses int64
	}{
		{"first", func() {}, indexRow{"invalid", "redis-set-px", "20260101T100000", "1 double-holder"}, 1},
		{"unchanged", func() {}, indexRow{"invalid", "redis-set-px", "20260101T100000", "1 double-holder"}, 1},
		{"other size", func() {
			writeFile(t, results, `{"valid":false,"anomalies":[{"kind":"double-holder"},{"kind":"lost-update"}]}`)
			touch(t, results, time.Hour) // the same time: only the size tells
		}, indexRow{"invalid", "redis-set-px", "20260101T100000", "1 double-holder, 1 lost-update"}, 2},
		{"other time", func() {
			writeFile(t, results, `{"valid":false,"anomalies":[{"kind":"double-holder"},{"kind":"token-order"}]}`)
			touch(t, results, 2*time.Hour) // the same size: only the time tells
		}, indexRow{"invalid", "redis-set-px", "20260101T100000", "1 double-holder, 1 token-order"}, 3},
		{"test.json changed", func() {
			writeFile(t, filepath.Join(dir, "test.json"), testJSON("t", "redis-setnx-expire", "20260101T100000"))
		}, indexRow{"invalid", "redis-setnx-expire", "20260101T100000", "1 double-holder, 1 token-order"}, 3},
		{"removed", func() {
			if err := os.Remove(results); err != nil {
				t.Fatal(err)
			}
		}, indexRow{"none", "redis-setnx-expire", "20260101T100000", ""}, 3},
	}
	for _, st := range steps {
		st.change()
		_, rows := getIndex(t, h, "/")
		if len(rows) != 1 || rows[0] != st.want {
			t.Errorf("%s: rows %+v, want %+v", st.name, rows, st.want)
		}
		if parses() != st.parses {
			t.Errorf("%s: results.json decoded %d times, want %d", st.name, parses(), st.parses)
		}
	}
}

// TestServeCacheConcurrent checks that concurrent index requests on a
// fresh server decode each results.json once, and all see every run.
func TestServeCacheConcurrent(t *testing.T) {
	store := t.TempDir()
	const runs = 30
	for i := range runs {
		run := fmt.Sprintf("20260101T10%02d00", i)
		dir := filepath.Join(store, fmt.Sprintf("t%d", i%4), run)
		writeFile(t, filepath.Join(dir, "test.json"), testJSON("t", "redis-set-px", run))
		writeFile(t, filepath.Join(dir, "results.json"), `{"valid":true,"anomalies":[],"stats":{"x":"`+strings.Repeat("y", 100_000)+`"}}`)
	}
	h := NewServer(store).(*server)
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			if _, rows := getIndex(t, h, "/"); len(rows) != runs {
				t.Errorf("%d rows, want %d", len(rows), runs)
			}
		})
	}
	wg.Wait()
	if n := h.cache.parses.Load(); n != runs {
		t.Errorf("%d results.json decoded for %d runs", n, runs)
	}
	// The same through resultsSummary alone, without the shared scan.
	c := newRunCache(cacheLimit)
	path := filepath.Join(store, "t0", "20260101T100000", "results.json")
	sig := statFile(path)
	for range 20 {
		wg.Go(func() {
			if e := c.resultsSummary(path, sig); e.verdict != "valid" {
				t.Errorf("resultsSummary: %+v", e)
			}
		})
	}
	wg.Wait()
	if n := c.parses.Load(); n != 1 {
		t.Errorf("20 concurrent resultsSummary decoded the file %d times, want 1", n)
	}
}

// TestServeSummaries checks which of summary.json and results.json the
// index reads: a fresh whole summary alone; a stale, corrupt or foreign
// one is passed over for results.json; a run without results.json is
// "none" whatever summary it has.
func TestServeSummaries(t *testing.T) {
	const run = "20260101T100000"
	invalid := `{"valid":false,"anomalies":[{"kind":"double-holder"},{"kind":"lost-update","fenced":true}]}`
	tests := []struct {
		name    string
		results string // "" for none
		summary string // "" for none; "write" for WriteSummary of a valid result
		stale   bool   // summary.json older than results.json
		want    indexRow
		parses  int64
		problem string // a substring of the row, "" for no problem cell
	}{
		{name: "summary", results: invalid, summary: "write",
			want: indexRow{"valid", "redis-set-px", run, "no anomalies"}}, // the summary says valid: it was read, not results.json
		{name: "no summary", results: invalid,
			want: indexRow{"invalid", "redis-set-px", run, "1 double-holder, 1 lost-update (1 fenced)"}, parses: 1},
		{name: "stale summary", results: invalid, summary: "write", stale: true,
			want: indexRow{"invalid", "redis-set-px", run, "1 double-holder, 1 lost-update (1 fenced)"}, parses: 1},
		{name: "corrupt summary", results: invalid, summary: `{"version":1,"valid":tr`,
			want: indexRow{"invalid", "redis-set-px", run, "1 double-holder, 1 lost-update (1 fenced)"}, parses: 1},
		{name: "summary of another version", results: invalid, summary: `{"version":9,"valid":true,"lock":"x"}`,
			want: indexRow{"invalid", "redis-set-px", run, "1 double-holder, 1 lost-update (1 fenced)"}, parses: 1},
		{name: "summary without verdict", results: invalid, summary: `{"version":1,"lock":"x"}`,
			want: indexRow{"invalid", "redis-set-px", run, "1 double-holder, 1 lost-update (1 fenced)"}, parses: 1},
		{name: "in progress", want: indexRow{"none", "redis-set-px", run, ""}},
		{name: "aborted with an old summary", summary: "write", want: indexRow{"none", "redis-set-px", run, ""}},
		{name: "corrupt results", results: `{"valid":fa`, want: indexRow{"none", "redis-set-px", run, ""},
			parses: 1, problem: "results.json has no verdict"},
		{name: "corrupt results and summary", results: `{"valid":`, summary: `nope`, want: indexRow{"none", "redis-set-px", run, ""},
			parses: 1, problem: "results.json has no verdict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := t.TempDir()
			dir := filepath.Join(store, "redis-set-px-pause", run)
			writeFile(t, filepath.Join(dir, "test.json"), testJSON("redis-set-px-pause", "redis-set-px", run))
			touch(t, filepath.Join(dir, "test.json"), 0)
			if tt.results != "" {
				writeFile(t, filepath.Join(dir, "results.json"), tt.results)
				touch(t, filepath.Join(dir, "results.json"), time.Minute)
			}
			switch tt.summary {
			case "":
			case "write":
				if err := WriteSummary(dir, checker.Result{Valid: checker.Valid}); err != nil {
					t.Fatal(err)
				}
			default:
				writeFile(t, filepath.Join(dir, SummaryFile), tt.summary)
			}
			if tt.summary != "" {
				at := 2 * time.Minute
				if tt.stale {
					at = time.Second
				}
				touch(t, filepath.Join(dir, SummaryFile), at)
			}
			h := NewServer(store).(*server)
			body, rows := getIndex(t, h, "/")
			if len(rows) != 1 || rows[0] != tt.want {
				t.Fatalf("rows %+v, want %+v", rows, tt.want)
			}
			if n := h.cache.parses.Load(); n != tt.parses {
				t.Errorf("results.json decoded %d times, want %d", n, tt.parses)
			}
			for _, s := range []string{`<td>pause</td><td>1</td><td>off</td><td>1s</td>`, `2026-01-01 10:00:00`, `>redis-set-px-pause</a>`} {
				if !strings.Contains(body, s) {
					t.Errorf("row lacks %q", s)
				}
			}
			if hasProblem := strings.Contains(body, `class="problem"`); hasProblem != (tt.problem != "") || !strings.Contains(body, tt.problem) {
				t.Errorf("problem cell %v, want %q", hasProblem, tt.problem)
			}
			if hasResults := strings.Contains(body, `results.json</a>`); hasResults != (tt.results != "") {
				t.Errorf("results.json link %v with results %q", hasResults, tt.results)
			}
		})
	}
}

// TestServeSummaryTestProblem checks that a summary written when test.json
// could not be read shows that problem, and the row still lists.
func TestServeSummaryTestProblem(t *testing.T) {
	store := t.TempDir()
	dir := filepath.Join(store, "x", "20260101T100000")
	writeFile(t, filepath.Join(dir, "test.json"), `{"lock":`)
	writeFile(t, filepath.Join(dir, "results.json"), `{"valid":true}`)
	if err := WriteSummary(dir, checker.Result{Valid: checker.Invalid, Anomalies: anomalies("stuck-lock")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"test.json", "results.json"} {
		touch(t, filepath.Join(dir, p), 0)
	}
	body, rows := getIndex(t, NewServer(store), "/")
	if want := (indexRow{"invalid", "", "20260101T100000", "1 stuck-lock"}); len(rows) != 1 || rows[0] != want {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
	if !strings.Contains(body, `<span class="problem">test.json: unexpected end of JSON input</span>`) {
		t.Errorf("the test.json problem is not shown: %s", body)
	}
}

// TestServeIndexPages checks the index's pages of indexPageSize runs.
func TestServeIndexPages(t *testing.T) {
	store := t.TempDir()
	const runs = 2*indexPageSize + 7
	for i := range runs {
		run := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format("20060102T150405")
		dir := filepath.Join(store, "t", run)
		lock := "redis-set-px"
		if i%2 == 1 {
			lock = "redlock"
		}
		writeFile(t, filepath.Join(dir, "test.json"), testJSON("t", lock, run))
		if err := WriteSummary(dir, checker.Result{Valid: checker.Valid}); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "results.json"), `{"valid":true}`)
		touch(t, filepath.Join(dir, "results.json"), 0)
	}
	h := NewServer(store)
	newest := func(i int) string { // the run i-th newest, from 0
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(runs-1-i) * time.Minute).Format("20060102T150405")
	}
	tests := []struct {
		target       string
		rows         int
		first        string
		count        string
		newer, older string // the pager's links, "" for none
	}{
		{"/", indexPageSize, newest(0), "207 of 207 runs, page 1 of 3", "", "/?page=2"},
		{"/?page=1", indexPageSize, newest(0), "207 of 207 runs, page 1 of 3", "", "/?page=2"},
		{"/?page=2", indexPageSize, newest(indexPageSize), "page 2 of 3", "/", "/?page=3"},
		{"/?page=3", 7, newest(2 * indexPageSize), "page 3 of 3", "/?page=2", ""},
		{"/?page=99", 7, newest(2 * indexPageSize), "page 3 of 3", "/?page=2", ""},
		{"/?page=0", indexPageSize, newest(0), "page 1 of 3", "", "/?page=2"},
		{"/?page=x", indexPageSize, newest(0), "page 1 of 3", "", "/?page=2"},
		{"/?lock=redlock", indexPageSize, newest(1), "103 of 207 runs, page 1 of 2", "", "/?lock=redlock&amp;page=2"},
		{"/?lock=redlock&page=2", 3, newest(2*indexPageSize + 1), "103 of 207 runs, page 2 of 2", "/?lock=redlock", ""},
		{"/?verdict=valid&lock=redis-set-px&page=2", 4, newest(2 * indexPageSize), "104 of 207 runs, page 2 of 2",
			"/?lock=redis-set-px&amp;verdict=valid", ""},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			body, rows := getIndex(t, h, tt.target)
			if len(rows) != tt.rows || rows[0].test != tt.first {
				t.Fatalf("%d rows from %+v, want %d from %s", len(rows), rows[0], tt.rows, tt.first)
			}
			if !strings.Contains(body, tt.count) {
				t.Errorf("page lacks %q", tt.count)
			}
			for rel, href := range map[string]string{"prev": tt.newer, "next": tt.older} {
				link := `<a href="` + href + `" rel="` + rel + `">`
				if has := strings.Contains(body, `rel="`+rel+`"`); has != (href != "") || !strings.Contains(body, link) && href != "" {
					t.Errorf("%s link: want %q in the page", rel, link)
				}
			}
		})
	}
	// One page: no pager, no page count.
	small, _ := serveStore(t)
	body, _ := getIndex(t, NewServer(small), "/")
	if strings.Contains(body, "page 1") || strings.Contains(body, `class="pager"`) {
		t.Error("a one-page index shows a pager")
	}
}

// TestServeCacheBounded checks that the cache holds no more runs than its
// limit, nor runs that left the store, and still lists every run.
func TestServeCacheBounded(t *testing.T) {
	store := t.TempDir()
	for i := range 5 {
		run := fmt.Sprintf("20260101T10%02d00", i)
		dir := filepath.Join(store, "t", run)
		writeFile(t, filepath.Join(dir, "test.json"), testJSON("t", "redis-set-px", run))
		writeFile(t, filepath.Join(dir, "results.json"), `{"valid":false}`)
	}
	h := &server{store: store, cache: newRunCache(2)}
	for range 2 {
		if _, rows := getIndex(t, h, "/"); len(rows) != 5 || rows[0].verdict != "invalid" {
			t.Fatalf("rows %+v, want 5 invalid", rows)
		}
	}
	if len(h.cache.runs) > 2 || len(h.cache.results) > 2 {
		t.Errorf("cache of limit 2 holds %d runs, %d results", len(h.cache.runs), len(h.cache.results))
	}
	h = NewServer(store).(*server)
	getIndex(t, h, "/")
	if len(h.cache.runs) != 5 || len(h.cache.results) != 5 {
		t.Fatalf("cache holds %d runs, %d results; want 5", len(h.cache.runs), len(h.cache.results))
	}
	if err := os.RemoveAll(filepath.Join(store, "t", "20260101T100000")); err != nil {
		t.Fatal(err)
	}
	if _, rows := getIndex(t, h, "/"); len(rows) != 4 {
		t.Errorf("%d rows after removing a run, want 4", len(rows))
	}
	if len(h.cache.runs) != 4 || len(h.cache.results) != 4 {
		t.Errorf("after removing a run the cache holds %d runs, %d results; want 4", len(h.cache.runs), len(h.cache.results))
	}
}
