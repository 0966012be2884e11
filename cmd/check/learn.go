package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/learn"
	"github.com/lockcheck/lockcheck/runner"
)

// cmdLearn is `check learn`: with no argument it lists the lessons; with a
// lesson (its id or number) it prints the lesson, replays its recorded
// history through the checkers (or, with --live, runs its cell on real
// servers as `check run` does) and gives the answer; with --html DIR it
// writes the whole course as static pages. A lesson's exit code is its
// run's verdict's, as for `check analyze`.
func cmdLearn(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("learn", stderr)
	htmlDir := fs.String("html", "", "write the whole course as static pages (index.html and one page per lesson, no network needed) into `DIR`")
	live := fs.Bool("live", false, "run the lesson's cell on real servers, as check run does, instead of replaying its recorded history")
	seed := fs.Uint64("seed", 0, "with --live: the run's seed (default: the seed of the recorded run)")
	store := fs.String("store", "store", "with --live: store directory")
	if help, err := parseFlags(fs, args); help || err != nil {
		return helpOrError(help, err)
	}
	// The lesson may come before or after the flags.
	var id string
	if fs.NArg() > 0 {
		id = fs.Arg(0)
		if help, err := parseFlags(fs, fs.Args()[1:]); help || err != nil {
			return helpOrError(help, err)
		}
		if fs.NArg() > 0 {
			return exitError, fmt.Errorf("unexpected argument %q: check learn takes one lesson", fs.Arg(0))
		}
	}
	switch {
	case !*live && (flagGiven(fs, "seed") || flagGiven(fs, "store")):
		return exitError, errors.New("--seed and --store go with --live: a replay uses the recorded run")
	case *htmlDir != "" && (id != "" || *live):
		return exitError, errors.New("--html writes the whole course: give no lesson and no --live")
	case *htmlDir != "":
		return learnHTML(*htmlDir, stdout)
	case id == "" && *live:
		return exitError, errors.New("--live runs one lesson: check learn ID --live (check learn lists them)")
	case id == "":
		listLessons(stdout)
		return exitValid, nil
	}
	l, err := learn.Find(id)
	if err != nil {
		return exitError, err
	}
	printLesson(stdout, l)
	var code int
	if *live {
		s := l.Cell.Seed
		if flagGiven(fs, "seed") {
			s = *seed
		}
		runArgs := append(append([]string{}, l.Cell.Args...), "--seed", strconv.FormatUint(s, 10), "--store", *store)
		fmt.Fprintf(stdout, "\nThe run, live: check run %s\n", strings.Join(runArgs, " "))
		code, err = cmdRun(runArgs, stdout, stderr)
		if err != nil {
			return code, err
		}
		if want := exitCode(validity(l.Want)); code != want {
			fmt.Fprintf(stdout, "This run did not show what the lesson teaches (%s): faults strike at random instants; run it again, or with another --seed. The recorded run did.\n", l.Want)
		}
	} else {
		res, h, err := replayLesson(context.Background(), l)
		if err != nil {
			return exitError, err
		}
		fmt.Fprintf(stdout, "\nThe run, replayed from its recording (%d ops of %s --seed %d; --live runs it again on real servers):\n",
			len(h), "check run "+strings.Join(l.Cell.Args, " "), l.Cell.Seed)
		told := l.Tell(res.Anomalies)
		for _, s := range append([]string{told.Taught}, told.More...) {
			wrapText(stdout, "  ", "    ", s)
		}
		fmt.Fprintln(stdout)
		printVerdicts(stdout, res)
		fmt.Fprintf(stdout, "%s: %s\n", verdictText(res), anomalyCounts(res))
		if code, err = verdictExit(res); err != nil {
			return code, err
		}
	}
	printAnswer(stdout, l)
	return code, nil
}

// validity is the checker's verdict named by a lesson's Want.
func validity(want string) checker.Validity {
	switch want {
	case "valid":
		return checker.Valid
	case "invalid":
		return checker.Invalid
	}
	return checker.Unknown
}

// replayLesson checks the lesson's recorded history with the default
// checkers, their options resolved from the recorded run's test map as
// `check analyze` does.
func replayLesson(ctx context.Context, l learn.Lesson) (checker.Result, history.History, error) {
	h, err := l.History()
	if err != nil {
		return checker.Result{}, nil, err
	}
	b, err := l.TestJSON()
	if err != nil {
		return checker.Result{}, nil, err
	}
	var t runner.Test
	if err := json.Unmarshal(b, &t); err != nil {
		return checker.Result{}, nil, fmt.Errorf("lesson %s: test.json: %w", l.ID, err)
	}
	plan, err := runner.Resolve(withDefaults(t))
	if err != nil {
		return checker.Result{}, nil, fmt.Errorf("lesson %s: %w", l.ID, err)
	}
	return checker.Default(plan.CheckOptions()).Check(ctx, h), h, nil
}

func listLessons(w io.Writer) {
	fmt.Fprintln(w, "A course on distributed locks, one failure at a time. check learn ID (or its number) replays a lesson's")
	fmt.Fprintln(w, "recorded run, --live runs it on real servers, --html DIR writes the course as web pages.")
	fmt.Fprintln(w)
	for _, l := range learn.All() {
		fmt.Fprintf(w, "%2d. %-22s %s\n", l.Order, l.ID, l.Title)
		fmt.Fprintf(w, "    %s\n", l.Question)
	}
}

func printLesson(w io.Writer, l learn.Lesson) {
	fmt.Fprintf(w, "Lesson %d: %s\n\n", l.Order, l.Title)
	wrapText(w, "", "", l.Setup)
	fmt.Fprintln(w)
	wrapText(w, "", "", "Predict: "+l.Question)
	for i, c := range l.Choices {
		wrapText(w, fmt.Sprintf("  %c) ", 'a'+i), "     ", c)
	}
}

func printAnswer(w io.Writer, l learn.Lesson) {
	fmt.Fprintln(w)
	wrapText(w, "", "", fmt.Sprintf("The answer: %c) %s", 'a'+l.Answer, l.Choices[l.Answer]))
	for _, p := range strings.Split(l.Explanation, "\n\n") {
		fmt.Fprintln(w)
		wrapText(w, "", "", p)
	}
	if f := l.Fix; f.Why != "" {
		fmt.Fprintln(w)
		wrapText(w, "", "", fmt.Sprintf("The cure, to run: %s (%s when measured). %s", f.Cell.Command(), f.Want, f.Why))
	}
	fmt.Fprintln(w, "\nSources:")
	for _, s := range l.Sources {
		fmt.Fprintf(w, "  %s\n    %s\n", s.Title, s.URL)
	}
}

// wrapText prints text in lines of at most 100 columns, the first line
// after prefix, the others after indent.
func wrapText(w io.Writer, prefix, indent, text string) {
	line, empty := prefix, true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > 100 {
			fmt.Fprintln(w, line)
			line = indent + word
			continue
		}
		if !empty {
			line += " "
		}
		line, empty = line+word, false
	}
	if !empty {
		fmt.Fprintln(w, line)
	}
}

// learnHTML writes the course into dir, each lesson page with what the
// checkers found in its recorded history.
func learnHTML(dir string, stdout io.Writer) (int, error) {
	found := make(map[string]learn.Finding)
	for _, l := range learn.All() {
		res, _, err := replayLesson(context.Background(), l)
		if err != nil {
			return exitError, err
		}
		found[l.ID] = learn.Finding{Verdict: verdictText(res) + ": " + anomalyCounts(res), Told: l.Tell(res.Anomalies)}
	}
	if err := learn.WriteHTML(dir, found); err != nil {
		return exitError, err
	}
	fmt.Fprintf(stdout, "wrote %d lessons: %s\n", len(found), filepath.Join(dir, "index.html"))
	return exitValid, nil
}
