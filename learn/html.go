package learn

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
)

// Finding is what the checkers said of a lesson's recorded history, for
// its page: the verdict and the anomalies' stories as the lesson tells them.
type Finding struct {
	Verdict string
	Told    Told
}

//go:embed assets
var assets embed.FS

// pageData is what a lesson page's template reads.
type pageData struct {
	Lesson     Lesson
	Paragraphs []string
	Timeline   Timeline
	Finding    *Finding
	Prev, Next *Lesson
	Count      int
	Command    string
	// Max is the scrubber's range: the history's end in milliseconds.
	Max int64
	CSS template.CSS
	JS  template.JS
}

// WriteHTML writes the course as static pages into dir: index.html and one
// page per lesson (ID.html) with its step-through player and quiz. Every
// page is self-contained (inline CSS and script, no request to anywhere),
// so a teacher can host the directory as it is or open it from disk.
// found, which may be nil, holds the checkers' findings by lesson ID.
func WriteHTML(dir string, found map[string]Finding) error {
	tmpl, err := template.ParseFS(assets, "assets/*.tmpl")
	if err != nil {
		return fmt.Errorf("learn: templates: %w", err)
	}
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return err
	}
	js, err := assets.ReadFile("assets/player.js")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	all := All()
	write := func(name, tmplName string, data any) error {
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, tmplName, data); err != nil {
			return fmt.Errorf("learn: %s: %w", name, err)
		}
		return os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
	}
	if err := write("index.html", "index.html.tmpl", struct {
		Lessons []Lesson
		CSS     template.CSS
	}{all, template.CSS(css)}); err != nil {
		return err
	}
	for i, l := range all {
		tl, err := l.Timeline()
		if err != nil {
			return err
		}
		d := pageData{Lesson: l, Paragraphs: strings.Split(l.Explanation, "\n\n"), Timeline: tl, Count: len(all),
			Command: l.Cell.Command(), Max: int64(tl.End*1000 + 0.5), CSS: template.CSS(css), JS: template.JS(js)}
		if f, ok := found[l.ID]; ok {
			d.Finding = &f
		}
		if i > 0 {
			d.Prev = &all[i-1]
		}
		if i+1 < len(all) {
			d.Next = &all[i+1]
		}
		if err := write(l.ID+".html", "lesson.html.tmpl", d); err != nil {
			return err
		}
	}
	return nil
}
