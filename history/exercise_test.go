package history

import (
	"strings"
	"testing"
	"time"
)

func TestRegisterExerciseRule(t *testing.T) {
	wide := ExerciseRule{Nemesis: "test-wide", F: "test-op", Shape: ExerciseNode}
	narrow := ExerciseRule{Nemesis: "test-narrow", F: "test-op", Shape: ExerciseNode,
		Matches: func(f Fault) bool { return strings.Contains(f.Detail, "narrow") }}
	other := ExerciseRule{Nemesis: "test-other-op", F: "test-other", Shape: ExerciseNode,
		Matches: func(Fault) bool { return true }}
	for _, r := range []ExerciseRule{wide, narrow, other} {
		RegisterExerciseRule(r)
	}
	var names []string
	for _, r := range ExerciseRules() {
		if strings.HasPrefix(r.Nemesis, "test-") {
			names = append(names, r.Nemesis)
		}
	}
	if strings.Join(names, ",") != "test-wide,test-narrow,test-other-op" {
		t.Errorf("ExerciseRules = %v, want the three in registration order", names)
	}
	cases := []struct {
		name, f, detail string
		want            bool
	}{
		{"test-wide", "test-op", "a narrow one", true},    // the narrow kind claims it
		{"test-wide", "test-op", "a wide one", false},     // nobody else matches it
		{"test-narrow", "test-op", "a narrow one", false}, // its own Matches does not count
		{"test-wide", "test-none", "a narrow one", false}, // another start op
	}
	for _, c := range cases {
		if got := ClaimedByAnother(c.name, c.f, Fault{F: c.f, Detail: c.detail}); got != c.want {
			t.Errorf("ClaimedByAnother(%s, %s, %q) = %v, want %v", c.name, c.f, c.detail, got, c.want)
		}
	}
	for _, bad := range []ExerciseRule{
		{F: "x", Shape: ExerciseNode},
		{Nemesis: "x", Shape: ExerciseNode},
		{Nemesis: "x", F: "x"},
		wide, // twice
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterExerciseRule(%+v) did not panic", bad)
				}
			}()
			RegisterExerciseRule(bad)
		}()
	}
}

func TestFaultWords(t *testing.T) {
	if w := FaultWordsOf("test-words"); w.Noun != "" || w.Why != nil {
		t.Errorf("words of an unregistered fault: %+v", w)
	}
	RegisterFaultWords(FaultWords{F: "test-words", Noun: "test fault"})
	if w := FaultWordsOf("test-words"); w.Noun != "test fault" {
		t.Errorf("FaultWordsOf = %+v", w)
	}
	for _, bad := range []FaultWords{{Noun: "no op"}, {F: "test-words"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterFaultWords(%+v) did not panic", bad)
				}
			}()
			RegisterFaultWords(bad)
		}()
	}
}

func TestWords(t *testing.T) {
	cases := []struct{ got, want string }{
		{Secs(2310 * time.Millisecond), "2.31 s"},
		{Secs(0), "0.00 s"},
		{SecsShort(300 * time.Millisecond), "300 ms"},
		{SecsShort(999 * time.Millisecond), "999 ms"},
		{SecsShort(time.Second), "1 s"},
		{SecsShort(1500 * time.Millisecond), "1.5 s"},
		{SecsShort(2250 * time.Millisecond), "2.25 s"},
		{JoinAnd(nil), ""},
		{JoinAnd([]string{"a"}), "a"},
		{JoinAnd([]string{"a", "b"}), "a and b"},
		{JoinAnd([]string{"a", "b", "c"}), "a, b and c"},
		{Procs([]int{3}), "process 3"},
		{Procs([]int{3, 1}), "processes 3 and 1"},
		{Procs([]int{3, 1, 2}), "processes 3, 1 and 2"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
