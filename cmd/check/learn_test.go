package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/learn"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/workloads"
)

// TestLearnLessonVerdicts replays each lesson's recorded history through
// the default checkers, with the options of its recorded run, and asserts
// the verdict the lesson teaches and the anomaly it shows; then `check
// learn ID` prints that verdict and exits with its code.
func TestLearnLessonVerdicts(t *testing.T) {
	for _, l := range learn.All() {
		t.Run(l.ID, func(t *testing.T) {
			res, h, err := replayLesson(context.Background(), l)
			if err != nil {
				t.Fatal(err)
			}
			if got := verdictWord(res.Valid); got != l.Want || res.NotExercised != "" || res.Panicked != "" {
				t.Errorf("recorded history (%d ops): verdict %s (not exercised %q, panicked %q), want %s: %s",
					len(h), got, res.NotExercised, res.Panicked, l.Want, anomalyCounts(res))
			}
			shown := false
			for _, a := range res.Anomalies {
				shown = shown || a.Kind == l.Shows
			}
			if !shown {
				t.Errorf("recorded history shows no %s anomaly: %s", l.Shows, anomalyCounts(res))
			}
			code, out, stderr := run("learn", l.ID)
			if want := exitCode(validity(l.Want)); code != want || stderr != "" {
				t.Errorf("check learn %s: exit %d, stderr %q; want exit %d", l.ID, code, stderr, want)
			}
			if !strings.Contains(out, "\n"+l.Want+": ") {
				t.Errorf("check learn %s does not print the verdict line %q:\n%s", l.ID, l.Want+": ", out)
			}
			// The taught anomaly's story comes first, right after the
			// line that starts the replay, and within a 24-line screen;
			// each Also kind's story follows; nothing points to a file a
			// replay does not have, and no authoring note shows.
			lines := strings.Split(out, "\n")
			first := -1
			for i, line := range lines {
				if strings.HasPrefix(line, "  [") {
					first = i
					break
				}
			}
			if first < 0 || first >= 24 || !strings.HasPrefix(lines[first], "  ["+l.Shows) || !strings.HasPrefix(lines[first-1], "The run, replayed") {
				t.Errorf("check learn %s: the first story (line %d) is not the taught %s right after the replay's line:\n%s", l.ID, first+1, l.Shows, out)
			}
			for _, kind := range l.Also {
				if !strings.Contains(out, "\n  ["+kind) {
					t.Errorf("check learn %s shows no %s story", l.ID, kind)
				}
			}
			for _, bad := range []string{"results.json", "(The cell:"} {
				if strings.Contains(out, bad) {
					t.Errorf("check learn %s prints %q", l.ID, bad)
				}
			}
			words := strings.Join(strings.Fields(out), " ") // the lesson's text is wrapped
			for _, want := range []string{"Lesson ", l.Question, "The answer: ", l.Choices[l.Answer], l.Sources[0].URL} {
				if !strings.Contains(words, want) {
					t.Errorf("check learn %s does not print %q:\n%s", l.ID, want, out)
				}
			}
		})
	}
}

// TestLearnList: `check learn` lists every lesson, numbered, with its
// question, and exits 0; a lesson is found by its number too.
func TestLearnList(t *testing.T) {
	code, out, stderr := run("learn")
	if code != exitValid || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, l := range learn.All() {
		for _, want := range []string{l.ID, l.Title, l.Question} {
			if !strings.Contains(out, want) {
				t.Errorf("the list lacks %q:\n%s", want, out)
			}
		}
	}
	if code, out, _ := run("learn", "1"); code == exitError || !strings.Contains(out, "Lesson 1: ") {
		t.Errorf("check learn 1: exit %d:\n%s", code, out)
	}
}

// TestLearnErrors: bad uses exit 3 with one line.
func TestLearnErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"learn", "ttl-paus"}, `check: no lesson "ttl-paus": did you mean ttl-pause?`},
		{[]string{"learn", "--live"}, "check: --live runs one lesson"},
		{[]string{"learn", "ttl-pause", "--html", "x"}, "check: --html writes the whole course"},
		{[]string{"learn", "ttl-pause", "fencing"}, `check: unexpected argument "fencing"`},
		{[]string{"learn", "ttl-pause", "--seed", "3"}, "check: --seed and --store go with --live"},
		{[]string{"learn", "--bogus"}, "check: "},
	} {
		code, _, stderr := run(c.args...)
		if code != exitError || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 3 and one line starting %q", c.args, code, stderr, c.want)
		}
	}
}

// TestLearnHTML: `check learn --html DIR` writes the index and one page
// per lesson, each page with the checkers' verdict of its recorded run and
// the taught anomaly's story before the run's player.
func TestLearnHTML(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "course")
	code, out, stderr := run("learn", "--html", dir)
	if code != exitValid || stderr != "" || !strings.Contains(out, filepath.Join(dir, "index.html")) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	for _, l := range learn.All() {
		b, err := os.ReadFile(filepath.Join(dir, l.ID+".html"))
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		if want := "What the run shows: " + l.Want + ":"; !strings.Contains(page, want) {
			t.Errorf("%s.html lacks %q", l.ID, want)
		}
		// The taught story is in the quiz's section, before the run.
		taught, run := strings.Index(page, `<p class="taught">[`+l.Shows), strings.Index(page, `<section id="run">`)
		if taught < 0 || taught > run {
			t.Errorf("%s.html: the taught %s story at %d, the run at %d", l.ID, l.Shows, taught, run)
		}
	}
}

// TestLearnFixCells: a lesson's cure is a cell that names a design that
// exists, differs from the lesson's own cell, and says what it had when
// measured; the new lessons all have one.
func TestLearnFixCells(t *testing.T) {
	withFix := 0
	for _, l := range learn.All() {
		f := l.Fix
		if f.Why == "" {
			continue
		}
		withFix++
		args, _, err := scenarios.Expand(f.Cell.Args)
		if err != nil {
			t.Errorf("%s: the cure's cell: %v", l.ID, err)
			continue
		}
		lock := ""
		for i, a := range args {
			if a == "--lock" && i+1 < len(args) {
				lock = args[i+1]
			}
		}
		if _, err := workloads.FindDesign(lock); err != nil {
			t.Errorf("%s: the cure's design %q: %v", l.ID, lock, err)
		}
		if f.Cell.Command() == l.Cell.Command() || (f.Want != "valid" && f.Want != "invalid") {
			t.Errorf("%s: the cure %q (%s) is the lesson's own cell or has no measured verdict", l.ID, f.Cell.Command(), f.Want)
		}
		if code, out, _ := run("learn", l.ID); !strings.Contains(strings.Join(strings.Fields(out), " "), "The cure, to run: "+f.Cell.Command()) {
			t.Errorf("check learn %s (exit %d) does not print its cure", l.ID, code)
		}
	}
	if withFix < 5 {
		t.Errorf("%d lessons have a cure, want at least the five new ones that have one", withFix)
	}
}
