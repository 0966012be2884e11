package conformance

import (
	"testing"
)

// newJudge returns a proc that only judges lines.
func newJudge() *proc {
	return &proc{report: &Report{}, answered: map[int64]bool{}}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		whole bool
		want  string // the broken rule, "" for none
	}{
		{"reply", []string{`{"id":1,"type":"ok"}`}, true, ""},
		{"event", []string{`{"event":"session","value":{"detail":"x"}}`}, true, ""},
		{"banner", []string{`worker ready`}, true, RuleStdoutOnly},
		{"interleaved", []string{`{"event":"session","va{"id":1,"type":"ok"}`}, true, RuleWholeLines},
		{"no newline", []string{`{"event":"session"}`}, false, RuleWholeLines},
		{"unknown id", []string{`{"id":7,"type":"ok"}`}, true, RuleReplies},
		{"twice", []string{`{"id":1,"type":"ok"}`, `{"id":1,"type":"ok"}`}, true, RuleReplies},
		{"neither", []string{`{"type":"ok"}`}, true, RuleStdoutOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newJudge()
			for _, l := range tt.lines {
				p.judge(l, tt.whole, 1)
			}
			var got string
			if len(p.report.Broken) > 0 {
				got = p.report.Broken[0].Rule
			}
			if got != tt.want {
				t.Errorf("broken %+v, want rule %q", p.report.Broken, tt.want)
			}
		})
	}
}

// FuzzJudge feeds arbitrary worker output to the judge: it must never
// panic, and a line is a reply, an event or a named break.
func FuzzJudge(f *testing.F) {
	for _, s := range []string{`{"id":1,"type":"ok"}`, `{"event":"x"}`, `hello`, `{"id":1}{"id":1}`, `[]`, `{"id":"1"}`} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, line string, whole bool) {
		p := newJudge()
		p.judge(line, whole, 1)
	})
}
