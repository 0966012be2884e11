package learn

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Lesson is one step of the course: a question to predict, the run that
// answers it, and why.
type Lesson struct {
	// ID names the lesson on the command line (check learn ID) and its
	// page (ID.html) and recorded run (recorded/ID/).
	ID string
	// Order places the lesson on the ladder, from 1.
	Order int
	// Title is the lesson's heading.
	Title string
	// Setup tells what the run does, in two or three sentences, before the
	// question.
	Setup string
	// Question is what the student predicts before the run.
	Question string
	// Choices are the answers offered; Answer is the index of the right one.
	Choices []string
	Answer  int
	// Explanation says why, in paragraphs separated by blank lines.
	Explanation string
	// Sources are where the explanation comes from.
	Sources []Source
	// Cell is the run that demonstrates the lesson.
	Cell Cell
	// Want is the verdict the checkers give the recorded history: "valid"
	// or "invalid".
	Want string
	// Shows is the anomaly kind the recorded history must hold (a checker
	// Anomaly's Kind: double-holder, stuck-lock, stale-write-rejected, ...).
	Shows string
	// Fix is the lesson's fenced or fixed counterpart, a run the student
	// can make to see the cure (its Cell, the verdict it had when
	// measured, and why); a zero Fix has none.
	Fix Fix
	// Also are further anomaly kinds whose first story the lesson shows
	// after the taught one (Tell), the rest being only counted.
	Also []string
}

// Source is a reference of a lesson's explanation.
type Source struct {
	Title string
	URL   string
}

// Fix is the counterpart of a lesson: the same failure with the cure.
type Fix struct {
	Cell Cell
	// Want is the verdict the counterpart had when measured ("valid").
	Want string
	// Why says what makes it safe, in a sentence.
	Why string
}

// Cell is a `check run` invocation: its flags (without --seed) and seed.
type Cell struct {
	Args []string
	Seed uint64
}

// Command returns the cell as a command line.
func (c Cell) Command() string {
	return fmt.Sprintf("check run %s --seed %d", strings.Join(c.Args, " "), c.Seed)
}

// recorded holds each lesson's run: recorded/<id>/history.jsonl and the
// run's test.json (its test map, from which the checkers' options come).
//
//go:embed recorded
var recorded embed.FS

// History returns the lesson's recorded history.
func (l Lesson) History() (history.History, error) {
	b, err := recorded.ReadFile(path.Join("recorded", l.ID, "history.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("lesson %s: %w", l.ID, err)
	}
	h, err := history.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("lesson %s: recorded history: %w", l.ID, err)
	}
	return h, nil
}

// TestJSON returns the test.json of the lesson's recorded run.
func (l Lesson) TestJSON() ([]byte, error) {
	b, err := recorded.ReadFile(path.Join("recorded", l.ID, "test.json"))
	if err != nil {
		return nil, fmt.Errorf("lesson %s: %w", l.ID, err)
	}
	return b, nil
}

// lessons is the course, filled by each lesson file's init.
var lessons []Lesson

// register adds a lesson at init; a duplicate id or order is a
// programming error.
func register(l Lesson) {
	for _, o := range lessons {
		if o.ID == l.ID || o.Order == l.Order {
			panic(fmt.Sprintf("learn: lesson %s (order %d) registered twice", l.ID, l.Order))
		}
	}
	lessons = append(lessons, l)
}

// All returns the lessons in course order.
func All() []Lesson {
	out := append([]Lesson(nil), lessons...)
	sort.Slice(out, func(i, j int) bool { return out[i].Order < out[j].Order })
	return out
}

// Find returns the lesson named id, which may also be its number on the
// ladder ("3").
func Find(id string) (Lesson, error) {
	var ids []string
	for _, l := range All() {
		if l.ID == id || fmt.Sprint(l.Order) == id {
			return l, nil
		}
		ids = append(ids, l.ID)
	}
	if near := suggest.Closest(id, ids); near != "" {
		return Lesson{}, fmt.Errorf("no lesson %q: did you mean %s? (check learn lists them)", id, near)
	}
	return Lesson{}, fmt.Errorf("no lesson %q (lessons: %s; check learn lists them)", id, strings.Join(ids, ", "))
}

// Timeline returns the step-through timeline of the lesson's recorded
// history, its server bands inferred from the recorded run's lease where
// the history does not show the server's release.
func (l Lesson) Timeline() (Timeline, error) {
	h, err := l.History()
	if err != nil {
		return Timeline{}, err
	}
	b, err := l.TestJSON()
	if err != nil {
		return Timeline{}, err
	}
	var t struct {
		Lease time.Duration `json:"lease"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return Timeline{}, fmt.Errorf("lesson %s: test.json: %w", l.ID, err)
	}
	return NewTimeline(h, t.Lease), nil
}
