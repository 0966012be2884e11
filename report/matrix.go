package report

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/matrix"
)

// The matrix pages of `check serve`:
//
//   - GET /matrix/ lists the stored matrices (store/matrix/<time>/matrix.json),
//     newest first;
//   - GET /matrix/<time> shows one as a grid (rows x columns), each cell its
//     tally, status and one link per run to that run's report (or its
//     directory when it has none), and marks
//     the cells whose outcome changed since the previous matrix with the
//     same cells.

// matrixPage serves /matrix/ and /matrix/<name>.
func (s *server) matrixPage(w http.ResponseWriter, r *http.Request, name string) {
	all, err := matrix.List(s.store)
	problem := ""
	if err != nil {
		problem = err.Error()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if name == "" {
		data := struct {
			Store, Problem string
			Matrices       []matrixRow
		}{Store: s.store, Problem: problem}
		for _, m := range all {
			data.Matrices = append(data.Matrices, newMatrixRow(m, matrix.Previous(all, m)))
		}
		execute(w, matrixListTemplate, data)
		return
	}
	for _, m := range all {
		if m.Dir == matrix.StoreDir+"/"+name {
			execute(w, matrixTemplate, newMatrixView(s.store, m, matrix.Previous(all, m)))
			return
		}
	}
	http.NotFound(w, r)
}

// execute renders a page, noting a template error in a comment.
func execute(w http.ResponseWriter, t *template.Template, data any) {
	if err := t.Execute(w, data); err != nil {
		fmt.Fprintf(w, "<!-- %s -->", template.HTMLEscapeString(err.Error()))
	}
}

// matrixHref is the URL of a stored matrix's page.
func matrixHref(m *matrix.Matrix) string {
	return "/matrix/" + url.PathEscape(strings.TrimPrefix(m.Dir, matrix.StoreDir+"/"))
}

// matrixRow is one line of the matrix list.
type matrixRow struct {
	Href, Name, Command, Started, Seeds string
	Cells, Runs, Missed, Changed        int
	WallS                               float64
	Previous                            string
}

func newMatrixRow(m, prev *matrix.Matrix) matrixRow {
	row := matrixRow{Href: matrixHref(m), Name: strings.TrimPrefix(m.Dir, matrix.StoreDir+"/"),
		Command: strings.Join(m.Command, " "), Started: m.Started.UTC().Format("2006-01-02 15:04:05"),
		Seeds: m.Seeds, Cells: len(m.Cells), Missed: len(m.Missed()), WallS: m.WallS}
	for _, c := range m.Cells {
		row.Runs += len(c.Runs)
	}
	if prev != nil {
		row.Previous = matrixHref(prev)
		row.Changed = len(matrix.Changes(prev, m))
	}
	return row
}

// matrixView is one matrix as a grid.
type matrixView struct {
	matrixRow
	Columns []string
	Rows    []matrixGridRow
	Misses  []matrix.CellResult
}

// matrixGridRow is one row of the grid; a nil cell is an empty one.
type matrixGridRow struct {
	Name  string
	Cells []*matrixCellView
}

// matrixCellView is one cell of the grid.
type matrixCellView struct {
	Summary, Status, Expect, Flags, Why string
	// Was is the previous matrix's summary of the cell, when the cell
	// changed since then.
	Was  string
	Runs []matrixRunLink
}

// matrixRunLink links one run.
type matrixRunLink struct {
	Seed             uint64
	Verdict, Href    string
	Title            string
	HasDir, Detected bool
}

func newMatrixView(store string, m, prev *matrix.Matrix) matrixView {
	v := matrixView{matrixRow: newMatrixRow(m, prev), Misses: m.Missed()}
	changes := matrix.Changes(prev, m)
	col := make(map[string]int)
	row := make(map[string]int)
	for _, c := range m.Cells {
		if _, ok := col[c.Column]; !ok {
			col[c.Column] = len(v.Columns)
			v.Columns = append(v.Columns, c.Column)
		}
	}
	for _, c := range m.Cells {
		i, ok := row[c.Row]
		if !ok {
			i = len(v.Rows)
			row[c.Row] = i
			v.Rows = append(v.Rows, matrixGridRow{Name: c.Row, Cells: make([]*matrixCellView, len(v.Columns))})
		}
		cv := &matrixCellView{Summary: c.Summary(), Status: string(c.Status), Expect: string(c.Expect),
			Flags: strings.Join(c.Args, " "), Why: c.Why, Was: changes[c.Key()]}
		for _, r := range c.Runs {
			link := matrixRunLink{Seed: r.Seed, Verdict: string(r.Verdict), Detected: matrix.Detected(c.Expect, r)}
			link.Title = string(r.Verdict)
			switch {
			case r.Story != "":
				link.Title += ": " + r.Story
			case r.NotExercised != "":
				link.Title += ": " + r.NotExercised
			case r.Error != "":
				link.Title += ": " + r.Error
			}
			if r.Dir != "" && !strings.HasPrefix(r.Dir, "/") && !strings.Contains(r.Dir, "..") {
				link.HasDir = true
				link.Href = "/runs/" + escapePath(r.Dir) + "/"
				if isFile(filepath.Join(store, filepath.FromSlash(r.Dir), "report.html")) {
					link.Href += "report.html"
				}
			}
			cv.Runs = append(cv.Runs, link)
		}
		v.Rows[i].Cells[col[c.Column]] = cv
	}
	return v
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// matrixCSS styles the matrix pages (on top of serverCSS).
const matrixCSS = `
.grid td{min-width:120px}
.cell.met{background:#e8f5e9}.cell.missed{background:#ffebee}.cell.none{background:#f5f5f5}.cell.incomplete{background:#fff8e1}
.cell.changed{outline:3px solid #f9a825;outline-offset:-3px}
.was{font-size:12px;color:#b26a00}
.seeds a,.seeds span{display:inline-block;margin:2px 3px 0 0;padding:0 5px;border-radius:3px;font-size:12px;color:#fff}
.s-valid{background:#2e7d32}.s-invalid{background:#c62828}.s-unknown{background:#f9a825}.s-not-exercised{background:#9e9e9e}
.s-error{background:#6a1b9a}.s-interrupted{background:#bdbdbd}.s-missing{background:#fff;color:#c62828;border:1px dashed #c62828}
.status{font-size:12px;color:#555}
`

var matrixListTemplate = template.Must(template.New("matrices").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lockcheck matrices</title><style>` + serverCSS + matrixCSS + `</style></head>
<body>
<h1>lockcheck matrices <span class="muted">in {{.Store}}</span></h1>
<p><a href="/">all runs</a></p>
{{if .Problem}}<p class="problem">{{.Problem}}</p>{{end}}
<table id="matrices">
<tr><th>started (UTC)</th><th>matrix</th><th>cells</th><th>runs</th><th>seeds</th><th>missed</th><th>changed since the previous</th><th>wall</th><th>command</th></tr>
{{range .Matrices}}<tr class="matrix">
<td>{{.Started}}</td><td><a href="{{.Href}}">{{.Name}}</a></td><td>{{.Cells}}</td><td>{{.Runs}}</td><td>{{.Seeds}}</td>
<td>{{if .Missed}}<span class="v invalid">{{.Missed}} missed</span>{{else}}<span class="v valid">all met</span>{{end}}</td>
<td>{{if .Previous}}{{if .Changed}}<a href="{{.Href}}">{{.Changed}} cells</a>{{else}}none{{end}} (<a href="{{.Previous}}">previous</a>){{else}}<span class="muted">no previous matrix with these cells</span>{{end}}</td>
<td>{{printf "%.0f s" .WallS}}</td><td><code>{{.Command}}</code></td></tr>
{{else}}<tr><td colspan="9" class="muted">No matrices: run check matrix.</td></tr>
{{end}}</table>
</body></html>
`))

var matrixTemplate = template.Must(template.New("matrix").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lockcheck matrix {{.Name}}</title><style>` + serverCSS + matrixCSS + `</style></head>
<body>
<h1>matrix {{.Name}}</h1>
<p><a href="/matrix/">all matrices</a> · <a href="/trend">trend across nights</a> · <a href="/">all runs</a>{{if .Previous}} · <a href="{{.Previous}}">previous matrix with these cells</a>{{end}}</p>
<p>started {{.Started}} UTC · {{.Cells}} cells · {{.Runs}} runs · seeds {{.Seeds}} · {{printf "%.0f" .WallS}} s ·
{{if .Missed}}<span class="v invalid">{{.Missed}} missed</span>{{else}}<span class="v valid">every cell met its expectation</span>{{end}}
{{if .Previous}} · {{.Changed}} cells changed since the previous matrix (outlined){{end}}</p>
<p><code>{{.Command}}</code></p>
<table class="grid" id="grid">
<tr><th></th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><th>{{.Name}}</th>{{range .Cells}}{{if .}}<td class="cell {{.Status}}{{if .Was}} changed{{end}}" title="{{.Flags}}">
<b>{{.Summary}}</b> <span class="status">{{.Status}}</span>
{{if .Was}}<br><span class="was">was {{.Was}}</span>{{end}}
<div class="seeds">{{range .Runs}}{{if .HasDir}}<a class="s-{{.Verdict}}" href="{{.Href}}" title="{{.Title}}">{{.Seed}}</a>{{else}}<span class="s-{{.Verdict}}" title="{{.Title}}">{{.Seed}}</span>{{end}}{{end}}</div>
</td>{{else}}<td class="muted">—</td>{{end}}{{end}}</tr>
{{end}}</table>
{{if .Misses}}<h2>missed</h2><ul>{{range .Misses}}<li>{{.Name}} ({{.Expect}}): {{.Why}}</li>{{end}}</ul>{{end}}
<p class="muted">Seed links: green valid, red invalid, yellow unknown, grey not exercised, purple error. S: valid on every exercised run; U, L: invalid (L: stuck lock) on at least 90 % of them; D: no expectation; an error run misses any cell.</p>
</body></html>
`))
