package report

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveStore builds a store with four runs and a few traps:
//
//	store/redis-set-px-pause/20260101T100000/   invalid, redis-set-px, report
//	store/redis-set-px-none/20260101T110000/    valid, redis-set-px, no report
//	store/redis-setnx-expire-pause/20260101T120000/  unknown, redis-setnx-expire
//	store/redis-set-px-kill/20260101T130000/    still running: no results.json
//	store/latest -> redis-set-px-kill/20260101T130000 (inside: served)
//	store/redis-set-px-pause/20260101T100000/out -> <outside>/secret.txt
//	store/redis-set-px-pause/20260101T100000/outdir -> <outside>
//	store/.hidden.json
//
// and returns the store and the outside directory.
func serveStore(t *testing.T) (string, string) {
	t.Helper()
	base := t.TempDir()
	store, outside := filepath.Join(base, "store"), filepath.Join(base, "outside")
	for _, d := range []string{store, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret.txt"), "SECRET")
	write(filepath.Join(store, ".hidden.json"), "{}")
	runs := []struct {
		test, run, lock, nemesis, valid string
		report                          bool
	}{
		{"redis-set-px-pause", "20260101T100000", "redis-set-px", "pause", "false", true},
		{"redis-set-px-none", "20260101T110000", "redis-set-px", "none", "true", false},
		{"redis-setnx-expire-pause", "20260101T120000", "redis-setnx-expire", "pause", `"unknown"`, true},
		{"redis-set-px-kill", "20260101T130000", "redis-set-px", "kill", "", false},
	}
	for i, r := range runs {
		dir := filepath.Join(store, r.test, r.run)
		started, _ := time.Parse("20060102T150405", r.run)
		write(filepath.Join(dir, "test.json"), fmt.Sprintf(`{"name":%q,"lock":%q,"nemesis":%q,"seed":%d,"fencing":false,
"workers":10,"time":20000000000,"started":%q,"command":["check","run","--lock",%q,"--seed","%d"]}`,
			r.test, r.lock, r.nemesis, i+1, started.Format(time.RFC3339), r.lock, i+1))
		write(filepath.Join(dir, "history.jsonl"), `{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k0"}`+"\n")
		if r.valid != "" {
			anomalies := `[]`
			if r.valid == "false" {
				anomalies = `[{"kind":"double-holder","processes":[1,2],"start":1,"end":2,"explanation":"x"},{"kind":"lost-update","processes":[1,2],"start":1,"end":2,"explanation":"y"}]`
			}
			write(filepath.Join(dir, "results.json"), `{"checker":"lockcheck","valid":`+r.valid+`,"anomalies":`+anomalies+`}`)
		}
		if r.report {
			write(filepath.Join(dir, "report.html"), "<!doctype html><title>report</title>")
		}
		write(filepath.Join(dir, "nodes", "lock0.log"), "log line\n")
	}
	pause := filepath.Join(store, "redis-set-px-pause", "20260101T100000")
	for link, target := range map[string]string{
		filepath.Join(pause, "out"):    filepath.Join(outside, "secret.txt"),
		filepath.Join(pause, "outdir"): outside,
		filepath.Join(store, "latest"): filepath.Join("redis-set-px-kill", "20260101T130000"),
		filepath.Join(pause, "inside"): "results.json",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return store, outside
}

// TestServePaths checks that only files inside the store are served and
// every way out is a 404.
func TestServePaths(t *testing.T) {
	store, _ := serveStore(t)
	h := NewServer(store)
	run := "/runs/redis-set-px-pause/20260101T100000/"
	tests := []struct {
		target string
		code   int
		body   string // a substring of the body, for 200
	}{
		{"/", 200, "lockcheck runs"},
		{run + "results.json", 200, `"valid":false`},
		{run + "report.html", 200, "<title>report</title>"},
		{run + "nodes/lock0.log", 200, "log line"},
		{run + "inside", 200, `"valid":false`}, // a link that stays inside
		{run, 200, "results.json"},             // a listing
		{"/runs/latest/test.json", 200, "redis-set-px-kill"},
		{"/runs/", 200, "redis-set-px-pause/"},
		{"/runs/redis-set-px-pause/20260101T100000", 301, ""},
		{"/../../etc/passwd", 404, ""},
		{"/runs/../../etc/passwd", 404, ""},
		{"/runs/../../../../../../etc/passwd", 404, ""},
		{"/runs/%2e%2e/%2e%2e/etc/passwd", 404, ""},
		{"/runs/%2E%2E/%2E%2E/etc/passwd", 404, ""},
		{"/runs/..%2f..%2f..%2fetc%2fpasswd", 404, ""},
		{"/runs/redis-set-px-pause/..%2f..%2foutside/secret.txt", 404, ""},
		{"/%2e%2e/%2e%2e/etc/passwd", 404, ""},
		{"/runs/redis-set-px-pause/./20260101T100000/results.json", 404, ""},
		{"/runs//etc/passwd", 404, ""},
		{"/runs/%2fetc%2fpasswd", 404, ""},
		{"/runs/..\\..\\etc\\passwd", 404, ""},
		{"/runs/..%5c..%5cetc%5cpasswd", 404, ""},
		{"/runs/x%00/results.json", 404, ""},
		{"/runs/.hidden.json", 404, ""},
		{"/runs/%2ehidden.json", 404, ""},
		{run + "out", 404, ""},               // a link to a file outside
		{run + "outdir/secret.txt", 404, ""}, // through a link to a directory outside
		{run + "outdir/", 404, ""},           // the outside directory itself
		{run + "missing.json", 404, ""},      // no such file
		{run + "results.json/", 404, ""},     // a file is not a directory
		{"/etc/passwd", 404, ""},             // not under /runs/
		{"/runs", 404, ""},                   // not under /runs/
		{"/favicon.ico", 404, ""},            // nothing else is served
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
			if rec.Code != tt.code {
				t.Fatalf("GET %s: %d, want %d (body %.80q)", tt.target, rec.Code, tt.code, rec.Body.String())
			}
			if strings.Contains(rec.Body.String(), "SECRET") {
				t.Fatalf("GET %s served the file outside the store", tt.target)
			}
			if tt.body != "" && !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("GET %s: body %.200q lacks %q", tt.target, rec.Body.String(), tt.body)
			}
		})
	}
	// The same over a real connection, where no client cleans the path.
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, target := range []string{"/../../etc/passwd", "/runs/%2e%2e/%2e%2e/etc/passwd", "/runs/../outside/secret.txt", run + "out"} {
		if code := rawGet(t, srv.Listener.Addr().String(), target); code != 404 {
			t.Errorf("raw GET %s: %d, want 404", target, code)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", rec.Code)
	}
}

// rawGet sends a request line as written and returns the status code.
func rawGet(t *testing.T, addr, target string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("raw GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(body), "SECRET") || strings.Contains(string(body), "root:") {
		t.Fatalf("raw GET %s served a file outside the store", target)
	}
	return resp.StatusCode
}

// runRow matches a run row of the index: verdict and lock.
var runRow = regexp.MustCompile(`<tr class="run" data-verdict="([a-z]+)" data-lock="([a-z-]*)">\s*<td>([^<]*)</td>`)

// TestServeIndex checks the run list: newest first, verdicts, and the
// verdict and lock filters.
func TestServeIndex(t *testing.T) {
	store, _ := serveStore(t)
	h := NewServer(store)
	tests := []struct {
		query string
		want  []string // verdict/lock of each row, in order
	}{
		{"", []string{"none/redis-set-px", "unknown/redis-setnx-expire", "valid/redis-set-px", "invalid/redis-set-px"}},
		{"?verdict=invalid", []string{"invalid/redis-set-px"}},
		{"?verdict=valid", []string{"valid/redis-set-px"}},
		{"?verdict=unknown", []string{"unknown/redis-setnx-expire"}},
		{"?verdict=none", []string{"none/redis-set-px"}},
		{"?lock=redis-set-px", []string{"none/redis-set-px", "valid/redis-set-px", "invalid/redis-set-px"}},
		{"?lock=redis-setnx-expire", []string{"unknown/redis-setnx-expire"}},
		{"?verdict=invalid&lock=redis-set-px", []string{"invalid/redis-set-px"}},
		{"?verdict=invalid&lock=redis-setnx-expire", nil},
		{"?verdict=bogus", nil},
		{"?lock=%3Cscript%3E", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+tt.query, nil))
			if rec.Code != 200 {
				t.Fatalf("GET /%s: %d", tt.query, rec.Code)
			}
			body := rec.Body.String()
			var got []string
			for _, m := range runRow.FindAllStringSubmatch(body, -1) {
				got = append(got, m[1]+"/"+m[2])
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("rows %v, want %v", got, tt.want)
			}
			if tt.want == nil && !strings.Contains(body, "No runs match the filter") {
				t.Error("an empty filtered list does not say so")
			}
			if strings.Contains(body, "<script>") {
				t.Error("a query parameter reached the page unescaped")
			}
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	body := rec.Body.String()
	for _, s := range []string{
		`<span class="v invalid">invalid</span>`, `<span class="v valid">valid</span>`, `<span class="v unknown">unknown</span>`,
		`href="/runs/redis-set-px-pause/20260101T100000/report.html"`, // the report of a run that has one
		`href="/runs/redis-set-px-none/20260101T110000/results.json"`, // results of a run without a report
		`no report`, `1 double-holder, 1 lost-update`, `check run --lock redis-set-px --seed 1`,
		`2026-01-01 10:00:00`, `<option value="redis-setnx-expire">`, `href="/?verdict=invalid&amp;lock="`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("index lacks %q", s)
		}
	}
	if strings.Contains(body, "latest") {
		t.Error("the latest link is listed as a run of its own")
	}
	// A missing store is a page that says so, not a crash.
	rec = httptest.NewRecorder()
	NewServer(filepath.Join(store, "nope")).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "cannot read the store") {
		t.Errorf("missing store: %d %.200q", rec.Code, rec.Body.String())
	}
}

// FuzzServePath checks that no URL path serves anything from outside the
// store: every answer is 404, 405, 301 to a path under /runs/, or 200 for a
// file whose resolved path is inside the store.
func FuzzServePath(f *testing.F) {
	for _, s := range []string{"/", "/runs/", "/runs/a/b/results.json", "/runs/../x", "/runs/%2e%2e/x",
		"/runs/a/../../x", "/runs/a/out", "/runs/a/outdir/secret.txt", "/runs/latest/", "/runs/a/b"} {
		f.Add(s)
	}
	base := f.TempDir()
	store, outside := filepath.Join(base, "store"), filepath.Join(base, "outside")
	os.MkdirAll(filepath.Join(store, "a", "b"), 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET"), 0o644)
	os.WriteFile(filepath.Join(store, "a", "b", "results.json"), []byte(`{"valid":true}`), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(store, "a", "out"))
	os.Symlink(outside, filepath.Join(store, "a", "outdir"))
	os.Symlink("a/b", filepath.Join(store, "latest"))
	h := NewServer(store)
	f.Fuzz(func(t *testing.T, p string) {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1"+p, nil)
		if err != nil || !strings.HasPrefix(req.URL.Path, "/") {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if strings.Contains(rec.Body.String(), "SECRET") {
			t.Fatalf("%q served a file outside the store", p)
		}
		switch rec.Code {
		case 200, 404:
		case 301:
			if loc := rec.Header().Get("Location"); !strings.HasPrefix(loc, "/runs/") {
				t.Fatalf("%q redirects to %q", p, loc)
			}
		default:
			t.Fatalf("%q: status %d", p, rec.Code)
		}
	})
}
