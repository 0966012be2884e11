package main

import (
	"html/template"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/matrix"
)

// trendNights is how many of the newest stored matrices the trend page
// shows.
const trendNights = 30

// withTrend serves GET /trend, the trend page of the store's stored
// matrices (every cell's results night by night, labelled new miss, fixed
// or flaky, each run linked), and hands every other request to next.
func withTrend(store string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/trend" && r.URL.Path != "/trend/" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		ms, err := matrix.List(store)
		if len(ms) > trendNights {
			ms = ms[:trendNights] // newest first
		}
		v := newTrendView(store, matrix.NewTrend(ms))
		if err != nil {
			v.Problem = "some stored matrices could not be read: " + err.Error()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := trendTemplate.Execute(w, v); err != nil {
			http.Error(w, "render trend: "+err.Error(), http.StatusInternalServerError)
		}
	})
}

// trendView is the trend page.
type trendView struct {
	Store, Problem string
	Nights         []trendNight
	Cells          []trendRow
}

// trendNight heads one column: a stored matrix.
type trendNight struct{ Name, Href, Started, Seeds string }

// trendRow is one cell across the nights.
type trendRow struct {
	Name   string
	Labels []trendLabel
	At     []*trendPoint // nil: the night did not run the cell
}

// trendLabel is a label and its CSS class.
type trendLabel struct{ Text, Class string }

// trendPoint is a cell in one night, with a link per run.
type trendPoint struct {
	Summary, Status string
	Runs            []trendRun
}

// trendRun links one run.
type trendRun struct {
	Seed           uint64
	Verdict, Title string
	Href           string // "" when the run has no directory in the store
}

func newTrendView(store string, t matrix.Trend) trendView {
	v := trendView{Store: store}
	for _, m := range t.Nights {
		name := strings.TrimPrefix(m.Dir, matrix.StoreDir+"/")
		v.Nights = append(v.Nights, trendNight{Name: name, Href: "/matrix/" + url.PathEscape(name),
			Started: m.Started.UTC().Format("2006-01-02 15:04"), Seeds: m.Seeds})
	}
	for _, c := range t.Cells {
		row := trendRow{Name: c.Name, At: make([]*trendPoint, len(c.At))}
		for _, l := range c.Labels {
			row.Labels = append(row.Labels, trendLabel{Text: l, Class: "label-" + strings.ReplaceAll(l, " ", "-")})
		}
		for n, cr := range c.At {
			if cr == nil {
				continue
			}
			p := &trendPoint{Summary: cr.Summary(), Status: string(cr.Status)}
			for _, r := range cr.Runs {
				p.Runs = append(p.Runs, trendRun{Seed: r.Seed, Verdict: string(r.Verdict), Title: runTitle(r), Href: runHref(store, r.Dir)})
			}
			row.At[n] = p
		}
		v.Cells = append(v.Cells, row)
	}
	return v
}

// runTitle is a run's verdict and its story, reason or error.
func runTitle(r matrix.Run) string {
	s := string(r.Verdict)
	for _, why := range []string{r.Story, r.NotExercised, r.Error} {
		if why != "" {
			return s + ": " + why
		}
	}
	return s
}

// runHref is the link `check serve` gives a run directory (relative to
// the store): its report when it has one; "" for a directory outside the
// store.
func runHref(store, dir string) string {
	if dir == "" || strings.HasPrefix(dir, "/") || strings.Contains(dir, "..") {
		return ""
	}
	segs := strings.Split(dir, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	href := "/runs/" + strings.Join(segs, "/") + "/"
	if st, err := os.Stat(filepath.Join(store, filepath.FromSlash(dir), "report.html")); err == nil && st.Mode().IsRegular() {
		href += "report.html"
	}
	return href
}

var trendTemplate = template.Must(template.New("trend").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lockcheck trend</title><style>
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222}
table{border-collapse:collapse}th,td{border:1px solid #ddd;padding:4px 6px;vertical-align:top;text-align:left}
.muted{color:#777}.problem{color:#b71c1c}
.met{background:#e8f5e9}.missed{background:#ffebee}.none{background:#f5f5f5}.incomplete{background:#fff8e1}
.label{display:inline-block;margin:0 3px 2px 0;padding:0 6px;border-radius:8px;font-size:12px;color:#fff}
.label-new-miss{background:#c62828}.label-fixed{background:#2e7d32}.label-flaky{background:#ef6c00}
.seeds a,.seeds span{display:inline-block;margin:2px 3px 0 0;padding:0 5px;border-radius:3px;font-size:12px;color:#fff}
.s-valid{background:#2e7d32}.s-invalid{background:#c62828}.s-unknown{background:#f9a825}.s-not-exercised{background:#9e9e9e}
.s-error,.s-missing{background:#6a1b9a}.s-interrupted{background:#bdbdbd}
</style></head>
<body>
<h1>lockcheck trend <span class="muted">in {{.Store}}</span></h1>
<p><a href="/matrix/">all matrices</a> · <a href="/">all runs</a></p>
{{if .Problem}}<p class="problem">{{.Problem}}</p>{{end}}
{{if .Nights}}<table id="trend">
<tr><th>cell</th><th>labels</th>{{range .Nights}}<th><a href="{{.Href}}">{{.Name}}</a><br><span class="muted">{{.Started}} UTC, seeds {{.Seeds}}</span></th>{{end}}</tr>
{{range .Cells}}<tr class="cell"><th>{{.Name}}</th>
<td>{{range .Labels}}<span class="label {{.Class}}">{{.Text}}</span>{{end}}</td>
{{range .At}}{{if .}}<td class="{{.Status}}"><b>{{.Summary}}</b> <span class="muted">{{.Status}}</span>
<div class="seeds">{{range .Runs}}{{if .Href}}<a class="s-{{.Verdict}}" href="{{.Href}}" title="{{.Title}}">{{.Seed}}</a>{{else}}<span class="s-{{.Verdict}}" title="{{.Title}}">{{.Seed}}</span>{{end}}{{end}}</div></td>{{else}}<td class="muted">—</td>{{end}}{{end}}</tr>
{{end}}</table>
{{else}}<p class="muted">No stored matrices: run check matrix (or check matrix merge).</p>{{end}}
<p class="muted">Oldest night on the left; shards (--shard) are left out, their merge is the night.
new miss: met its expectation the night before it last ran, missed it then; fixed: the reverse;
flaky: at the same seeds and flags, a seed's verdict changed between two nights while the cell's status stayed,
or the verdicts changed more than once.</p>
</body></html>
`))
