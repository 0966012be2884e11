package report

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/matrix"
)

// storeMatrices stores two matrices with the same cells, an hour apart, in
// which redis-set-px pause went from U 2/2 to 1 of 2.
func storeMatrices(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	first := 1.5
	mk := func(started time.Time, pause ...matrix.Verdict) {
		m := &matrix.Matrix{Version: matrix.Version, Started: started, Seeds: "1,2", Jobs: 2,
			Command: []string{"check", "matrix", "--lock", "redis-set-px", "--nemesis", "none,pause", "--seeds", "1,2"}}
		none := matrix.CellResult{Cell: matrix.Cell{Row: "redis-set-px", Column: "none", Expect: matrix.Safe,
			Args: []string{"--lock", "redis-set-px", "--nemesis", "none"}}}
		p := matrix.CellResult{Cell: matrix.Cell{Row: "redis-set-px", Column: "pause", Expect: matrix.Unsafe,
			Args: []string{"--lock", "redis-set-px", "--nemesis", "pause"}}}
		for i, v := range pause {
			seed := uint64(i + 1)
			none.Runs = append(none.Runs, matrix.Run{Seed: seed, Verdict: matrix.Valid,
				Dir: "matrix/x/runs/00" + string(rune('1'+i)) + "-none/redis-set-px-none/20261123T130000"})
			r := matrix.Run{Seed: seed, Verdict: v, Dir: "matrix/x/runs/p<" + string(rune('1'+i)) + ">/t/r"}
			if v == matrix.Invalid {
				r.Story, r.FirstAnomalyS, r.Anomalies = "processes 1 & 2 both held k0", &first, map[string]int{"double-holder": 1}
			}
			p.Runs = append(p.Runs, r)
		}
		m.Cells = []matrix.CellResult{none, p}
		m.Judge()
		dir, err := matrix.NewDir(store, matrix.StoreDir, started)
		if err != nil {
			t.Fatal(err)
		}
		if err := matrix.Save(dir, m); err != nil {
			t.Fatal(err)
		}
	}
	// The first none run has a report; the others link their directory.
	rep := filepath.Join(store, "matrix", "x", "runs", "001-none", "redis-set-px-none", "20261123T130000", "report.html")
	if err := os.MkdirAll(filepath.Dir(rep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rep, []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	mk(t0, matrix.Invalid, matrix.Invalid)
	mk(t0.Add(time.Hour), matrix.Invalid, matrix.Valid)
	return store
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestServeMatrices(t *testing.T) {
	h := NewServer(storeMatrices(t))
	code, body := get(t, h, "/matrix/")
	if code != http.StatusOK {
		t.Fatalf("/matrix/: %d", code)
	}
	for _, want := range []string{`href="/matrix/20261123T140000"`, `href="/matrix/20261123T130000"`, "1 missed", "all met", "1 cells"} {
		if !strings.Contains(body, want) {
			t.Errorf("/matrix/ lacks %q:\n%s", want, body)
		}
	}
	code, body = get(t, h, "/matrix/20261123T140000")
	if code != http.StatusOK {
		t.Fatalf("matrix page: %d", code)
	}
	for _, want := range []string{
		`class="cell missed changed"`, "was U 2/2", `class="cell met"`, // the pause cell changed, none did not
		`href="/runs/matrix/x/runs/p%3C1%3E/t/r/"`, // each run links to its directory, escaped
		`title="invalid: processes 1 &amp; 2 both held k0"`,
		`href="/runs/matrix/x/runs/001-none/redis-set-px-none/20261123T130000/report.html"`,
		`href="/runs/matrix/x/runs/002-none/redis-set-px-none/20261123T130000/"`,
		`href="/matrix/20261123T130000"`, // the previous matrix
		"U? 1/2",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("matrix page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "p<1>") {
		t.Error("a run directory went into the page unescaped")
	}
	code, body = get(t, h, "/matrix/20261123T130000")
	if code != http.StatusOK || strings.Contains(body, "changed") && strings.Contains(body, `class="cell met changed"`) {
		t.Fatalf("first matrix: %d, marked changed", code)
	}
	for _, p := range []string{"/matrix/nope", "/matrix/../secret", "/matrix/.x", "/matrix/a/b"} {
		if code, _ := get(t, h, p); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
	if _, body := get(t, h, "/"); !strings.Contains(body, `href="/matrix/"`) {
		t.Error("the run index does not link the matrices")
	}
}
