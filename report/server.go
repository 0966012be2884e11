package report

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// NewServer returns the web UI of `check serve` over the store directory
// store:
//
//   - GET / lists the stored runs (store/<test>/<run>/ directories that hold
//     a test.json), newest first, with their verdicts, filtered by the query
//     parameters verdict (valid, invalid, unknown, none) and lock;
//   - GET /runs/<path> serves a file of the store, or lists a directory;
//   - GET /matrix/ and /matrix/<time> show the stored matrices (matrix.go).
//
// Only files inside the store are served: a path with a "." or ".."
// segment (however encoded), a hidden name, a backslash or a NUL, or one
// that resolves through a symbolic link to outside the store is 404, as is
// every other path. Pages are sent with a Content-Security-Policy that
// forbids loading anything from anywhere, so a report that named an
// external URL would not load it.
//
// The index reads each run's summary.json (WriteSummary) when it is at
// least as new as the run's results.json and test.json, and otherwise
// test.json and results.json, decoding only the verdict and the anomalies'
// kinds. The server remembers each run's row while the run's files keep
// their modification times and sizes, and each results.json's summary
// while the file does, so an unchanged results.json is decoded once;
// index requests that arrive while the store is being read share the next
// reading. The index shows indexPageSize runs a page (query parameter
// page, from 1).
func NewServer(store string) http.Handler {
	return &server{store: store, cache: newRunCache(cacheLimit)}
}

// server implements NewServer.
type server struct {
	store string
	cache *runCache
}

// contentSecurity allows inline styles and scripts (every page is
// self-contained) and nothing from the network.
const contentSecurity = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
	"img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP routes a request.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Security-Policy", contentSecurity)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch p := r.URL.Path; {
	case p == "/":
		s.index(w, r)
	case strings.HasPrefix(p, "/runs/"):
		s.file(w, r, strings.TrimPrefix(p, "/runs/"))
	case p == "/matrix" || p == "/matrix/":
		s.matrixPage(w, r, "")
	case strings.HasPrefix(p, "/matrix/") && !strings.ContainsAny(p[len("/matrix/"):], "/\\") && !strings.HasPrefix(p[len("/matrix/"):], "."):
		s.matrixPage(w, r, p[len("/matrix/"):])
	default:
		http.NotFound(w, r)
	}
}

// errOutside is why a path is not served; every such path is a 404.
var errOutside = errors.New("not a file in the store")

// root returns the store's absolute path with symbolic links resolved.
func (s *server) root() (string, error) {
	abs, err := filepath.Abs(s.store)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// resolve maps rel, a slash-separated path below the store taken from a
// URL (already percent-decoded), to a file system path inside the store.
func (s *server) resolve(rel string) (string, error) {
	if strings.ContainsAny(rel, "\\\x00") {
		return "", errOutside
	}
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		if seg == "" && (i == len(segs)-1 || len(segs) == 1) {
			continue // a trailing slash, or the store itself
		}
		if seg == "" || strings.HasPrefix(seg, ".") { // also "." and ".."
			return "", errOutside
		}
	}
	root, err := s.root()
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	if !within(root, real) {
		return "", errOutside
	}
	return real, nil
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// file serves the file or directory rel of the store.
func (s *server) file(w http.ResponseWriter, r *http.Request, rel string) {
	real, err := s.resolve(rel)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	root, err := s.root()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	// Open through os.Root as well, which refuses to leave the store even
	// if a link changed since resolve looked.
	sub, err := filepath.Rel(root, real)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer rt.Close()
	f, err := rt.Open(sub)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case st.IsDir():
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, r.URL.EscapedPath()+"/", http.StatusMovedPermanently)
			return
		}
		s.listing(w, r, root, real, rel)
	case st.Mode().IsRegular():
		if strings.HasSuffix(r.URL.Path, "/") { // a file is not a directory
			http.NotFound(w, r)
			return
		}
		if ct := contentType(real); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		http.ServeContent(w, r, "", st.ModTime(), f)
	default:
		http.NotFound(w, r)
	}
}

// contentType returns the Content-Type of the store's own file kinds, ""
// to let ServeContent decide.
func contentType(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".json":
		return "application/json"
	case ".jsonl", ".log", ".txt", ".conf", ".aof", ".out":
		return "text/plain; charset=utf-8"
	case ".png":
		return "image/png"
	case ".svg":
		return "image/svg+xml"
	}
	return ""
}

// entry is one line of a directory listing.
type entry struct {
	Name, Href, Size string
}

// listing lists the directory real (rel in the store).
func (s *server) listing(w http.ResponseWriter, r *http.Request, root, real, rel string) {
	des, err := os.ReadDir(real)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	var es []entry
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(real, name)
		if de.Type()&fs.ModeSymlink != 0 {
			t, err := filepath.EvalSymlinks(p)
			if err != nil || !within(root, t) {
				continue
			}
			p = t
		}
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		e := entry{Name: name, Href: url.PathEscape(name)}
		if st.IsDir() {
			e.Name += "/"
			e.Href += "/"
		} else {
			e.Size = byteSize(st.Size())
		}
		es = append(es, e)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	data := struct {
		Dir     string
		Entries []entry
	}{Dir: "/" + path.Clean("runs/"+rel) + "/", Entries: es}
	if err := listingTemplate.Execute(w, data); err != nil {
		fmt.Fprintf(w, "<!-- %s -->", template.HTMLEscapeString(err.Error()))
	}
}

// byteSize renders n bytes for people.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// runInfo is one stored run in the index.
type runInfo struct {
	Test, Run string // directory names
	Href      string // URL of the run directory
	Name      string
	Lock      string
	Nemesis   string
	Seed      uint64
	Fencing   bool
	Workers   int
	Duration  string
	Started   time.Time
	Command   string
	Verdict   string // valid, invalid, unknown, or none (no results.json)
	Anomalies string
	Report    bool // report.html exists
	Results   bool
	History   bool
	Problem   string        // why test.json or results.json could not be read
	Row       template.HTML // the row of the index, rendered once
}

// resultsFile is the part of results.json the index shows.
type resultsFile struct {
	Valid     *checker.Validity `json:"valid"`
	Anomalies []checker.Anomaly `json:"anomalies"`
}

// newRunInfo returns the row of run directory store/test/run before its
// files are read.
func newRunInfo(test, run string) runInfo {
	return runInfo{Test: test, Run: run, Name: test, Verdict: "none",
		Href: "/runs/" + url.PathEscape(test) + "/" + url.PathEscape(run) + "/"}
}

// setTest fills in the fields of test.json.
func (ri *runInfo) setTest(tf TestInfo) {
	if tf.Name != "" {
		ri.Name = tf.Name
	}
	ri.Lock, ri.Nemesis, ri.Seed, ri.Fencing, ri.Workers = tf.Lock, tf.Nemesis, tf.Seed, tf.Fencing, tf.Workers
	ri.Started, ri.Command = tf.Started, strings.Join(tf.Command, " ")
	if tf.Time > 0 {
		ri.Duration = tf.Time.String()
	}
}

// finish sets the problems, the start time from the directory name when
// test.json has none, and renders the row.
func (ri *runInfo) finish(problems []string) {
	if ri.Started.IsZero() { // the run directory is named by its start time
		if t, err := time.Parse("20060102T150405", strings.SplitN(ri.Run, "-", 2)[0]); err == nil {
			ri.Started = t
		}
	}
	ri.Problem = strings.Join(problems, "; ")
	var b strings.Builder
	if err := rowTemplate.Execute(&b, ri); err != nil {
		b.WriteString("<!-- " + template.HTMLEscapeString(err.Error()) + " -->")
	}
	ri.Row = template.HTML(b.String())
}

// isFile reports whether path is a regular file (not a link).
func isFile(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

// verdicts are the values of the verdict filter.
var verdicts = []string{"invalid", "unknown", "valid", "none"}

// indexPageSize is how many runs a page of the index shows.
const indexPageSize = 100

// index serves the list of runs, a page of indexPageSize at a time.
func (s *server) index(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	verdict, lock := q.Get("verdict"), q.Get("lock")
	runs, err := s.cache.list(s.store)
	data := struct {
		Store           string
		Error           string
		Verdict, Lock   string
		Verdicts, Locks []string
		Total, Matching int
		Page, Pages     int
		Newer, Older    string
		Rows            []template.HTML
	}{Store: s.store, Verdict: verdict, Lock: lock, Verdicts: verdicts, Total: len(runs), Page: 1}
	if err != nil {
		data.Error = err.Error()
	}
	seen := make(map[string]bool)
	var match []*runInfo
	for i := range runs {
		ri := &runs[i]
		if ri.Lock != "" && !seen[ri.Lock] {
			seen[ri.Lock] = true
			data.Locks = append(data.Locks, ri.Lock)
		}
		if (verdict == "" || ri.Verdict == verdict) && (lock == "" || ri.Lock == lock) {
			match = append(match, ri)
		}
	}
	slices.Sort(data.Locks)
	data.Matching = len(match)
	data.Pages = max(1, (len(match)+indexPageSize-1)/indexPageSize)
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p > 1 {
		data.Page = min(p, data.Pages)
	}
	pageHref := func(p int) string {
		v := url.Values{}
		if verdict != "" {
			v.Set("verdict", verdict)
		}
		if lock != "" {
			v.Set("lock", lock)
		}
		if p > 1 {
			v.Set("page", strconv.Itoa(p))
		}
		if len(v) == 0 {
			return "/"
		}
		return "/?" + v.Encode()
	}
	if data.Page > 1 {
		data.Newer = pageHref(data.Page - 1)
	}
	if data.Page < data.Pages {
		data.Older = pageHref(data.Page + 1)
	}
	for _, ri := range match[min((data.Page-1)*indexPageSize, len(match)):min(data.Page*indexPageSize, len(match))] {
		data.Rows = append(data.Rows, ri.Row)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := indexTemplate.Execute(w, data); err != nil {
		fmt.Fprintf(w, "<!-- %s -->", template.HTMLEscapeString(err.Error()))
	}
}

// serverCSS styles the index and the directory listings.
const serverCSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;padding:0 16px 24px;max-width:1400px;color:#1d1d1f}
h1{font-size:20px;margin:16px 0 8px}
a{color:#0b57d0;text-decoration:none}a:hover{text-decoration:underline}
form{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin:8px 0}
.quick a{margin-right:10px}.quick a.on{font-weight:700;color:#1d1d1f}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{background:#f6f7fa}
.v{font-weight:700;padding:1px 7px;border-radius:3px;color:#fff;font-size:12px}
.v.valid{background:#2e7d32}.v.invalid{background:#c62828}.v.unknown{background:#f9a825;color:#1d1d1f}.v.none{background:#9e9e9e}
.files a{margin-right:8px}.pager a{margin-right:16px}.muted{color:#888}.problem{color:#b26a00;font-size:12px}
code{font-size:12px;word-break:break-all}
`

// indexTemplate renders the run list.
var indexTemplate = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lockcheck runs</title><style>` + serverCSS + `</style></head>
<body>
<h1>lockcheck runs <span class="muted">in {{.Store}}</span></h1>
<p><a href="/matrix/">matrices</a></p>
{{if .Error}}<p class="problem">cannot read the store: {{.Error}}</p>{{end}}
<p class="quick">verdict:
<a href="/?lock={{.Lock}}"{{if eq .Verdict ""}} class="on"{{end}}>all</a>
{{range .Verdicts}}<a href="/?verdict={{.}}&amp;lock={{$.Lock}}"{{if eq . $.Verdict}} class="on"{{end}}>{{.}}</a>{{end}}
</p>
<form method="get" action="/">
<label>verdict <select name="verdict"><option value="">all</option>{{range .Verdicts}}<option value="{{.}}"{{if eq . $.Verdict}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>lock <select name="lock"><option value="">all</option>{{range .Locks}}<option value="{{.}}"{{if eq . $.Lock}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<button type="submit">filter</button> <a href="/">clear</a>
<span class="muted">{{.Matching}} of {{.Total}} runs{{if gt .Pages 1}}, page {{.Page}} of {{.Pages}}{{end}}</span>
</form>
<table id="runs">
<tr><th>started (UTC)</th><th>test</th><th>lock</th><th>nemesis</th><th>seed</th><th>fencing</th><th>time</th><th>verdict</th><th>anomalies</th><th>files</th></tr>
{{range .Rows}}{{.}}
{{else}}<tr><td colspan="10" class="muted">No runs{{if or .Verdict .Lock}} match the filter{{end}}.</td></tr>
{{end}}</table>
{{if or .Newer .Older}}<p class="pager">{{if .Newer}}<a href="{{.Newer}}" rel="prev">newer runs</a>{{end}}
{{if .Older}}<a href="{{.Older}}" rel="next">older runs</a>{{end}}</p>{{end}}
</body></html>
`))

// rowTemplate renders one run of the index.
var rowTemplate = template.Must(template.New("row").Parse(`<tr class="run" data-verdict="{{.Verdict}}" data-lock="{{.Lock}}">
<td>{{if not .Started.IsZero}}{{.Started.UTC.Format "2006-01-02 15:04:05"}}{{end}}</td>
<td><a href="{{.Href}}">{{.Name}}</a><br><span class="muted">{{.Run}}</span></td>
<td>{{.Lock}}</td><td>{{.Nemesis}}</td><td>{{.Seed}}</td><td>{{if .Fencing}}on{{else}}off{{end}}</td><td>{{.Duration}}</td>
<td><span class="v {{.Verdict}}">{{.Verdict}}</span></td>
<td>{{.Anomalies}}{{if .Problem}}<br><span class="problem">{{.Problem}}</span>{{end}}</td>
<td class="files">{{if .Report}}<a href="{{.Href}}report.html">report</a>{{else}}<span class="muted">no report</span>{{end}}{{if .Results}}<a href="{{.Href}}results.json">results.json</a>{{end}}{{if .History}}<a href="{{.Href}}history.jsonl">history.jsonl</a>{{end}}<a href="{{.Href}}">all files</a>
{{if .Command}}<br><code>{{.Command}}</code>{{end}}</td>
</tr>`))

// listingTemplate renders a directory of the store.
var listingTemplate = template.Must(template.New("listing").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Dir}}</title><style>` + serverCSS + `</style></head>
<body>
<h1>{{.Dir}}</h1>
<p><a href="/">all runs</a> · <a href="../">up</a></p>
<table><tr><th>name</th><th>size</th></tr>
{{range .Entries}}<tr><td><a href="{{.Href}}">{{.Name}}</a></td><td>{{.Size}}</td></tr>
{{end}}</table>
</body></html>
`))
