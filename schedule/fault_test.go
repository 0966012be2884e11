package schedule

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func intp(n int) *int { return &n }

func TestParseDur(t *testing.T) {
	lease := time.Second
	cases := []struct {
		in   string
		want time.Duration
		text string
	}{
		{"300ms", 300 * time.Millisecond, "300ms"},
		{"0s", 0, "0s"},
		{"90s", 90 * time.Second, "1m30s"},
		{"lease", time.Second, "lease"},
		{"session", time.Second, "lease"},
		{"lease+500ms", 1500 * time.Millisecond, "lease+500ms"},
		{"lease-200ms", 800 * time.Millisecond, "lease-200ms"},
		{"2xlease", 2 * time.Second, "2xlease"},
		{"0.5xlease+1s", 1500 * time.Millisecond, "0.5xlease+1s"},
		{"lease-2s", 0, "lease-2s"}, // never negative
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			d, err := ParseDur(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Of(lease); got != c.want {
				t.Errorf("Of(1s) = %s, want %s", got, c.want)
			}
			if d.String() != c.text {
				t.Errorf("String = %q, want %q", d.String(), c.text)
			}
		})
	}
	for _, bad := range []string{"", "-1s", "soon", "xlease", "0xlease", "2lease", "lease*2", "lease+", "lease+x", "lease+-1s", "25h", "lease+25h", "1001xlease"} {
		if _, err := ParseDur(bad); err == nil {
			t.Errorf("ParseDur(%q): no error", bad)
		}
	}
}

func TestParseFault(t *testing.T) {
	one := func(d string) *Dur { v, _ := ParseDur(d); return &v }
	cases := []struct {
		in   string
		want Fault
		text string // "" when String gives in back
	}{
		{"pause@grant+5ms:lease+1s", Fault{Kind: "pause", Trigger: Trigger{Event: EventGrant, Offset: Dur{Abs: 5 * time.Millisecond}}, Duration: one("lease+1s")}, ""},
		{"pause@grant", Fault{Kind: "pause", Trigger: Trigger{Event: EventGrant}}, ""},
		{"partition@cs#3:2s", Fault{Kind: "partition", Trigger: Trigger{Event: EventCS, Nth: 3}, Duration: one("2s")}, ""},
		{"partition@release/p4#2+1ms:2xlease*3", Fault{Kind: "partition", Trigger: Trigger{Event: EventRelease, Process: intp(4), Nth: 2, Offset: Dur{Abs: time.Millisecond}}, Duration: one("2xlease"), Repeat: 3}, ""},
		{"partition@release#2/p4+1ms", Fault{Kind: "partition", Trigger: Trigger{Event: EventRelease, Process: intp(4), Nth: 2, Offset: Dur{Abs: time.Millisecond}}}, "partition@release/p4#2+1ms"},
		{"kill@5s:3s", Fault{Kind: "kill", Trigger: Trigger{Event: EventAt, Offset: Dur{Abs: 5 * time.Second}}, Duration: one("3s")}, "kill@at+5s:3s"},
		{"kill@at+lease", Fault{Kind: "kill", Trigger: Trigger{Event: EventAt, Offset: Dur{Leases: 1}}}, ""},
		{"pause@lease-left<200ms:lease", Fault{Kind: "pause", Trigger: Trigger{Event: EventLeaseLeft, Below: Dur{Abs: 200 * time.Millisecond}}, Duration: one("lease")}, ""},
		{"pause@rival+lease+500ms", Fault{Kind: "pause", Trigger: Trigger{Event: EventRival, Offset: Dur{Leases: 1, Abs: 500 * time.Millisecond}}}, ""},
		{"pause@server-release#1", Fault{Kind: "pause", Trigger: Trigger{Event: EventServerRelease, Nth: 1}}, "pause@server-release"},
		{"pause@grant*1", Fault{Kind: "pause", Trigger: Trigger{Event: EventGrant}, Repeat: 1}, "pause@grant"},
		{"pause@write:lease", Fault{Kind: "pause", Trigger: Trigger{Event: EventWrite}, Duration: one("lease")}, ""},
		{"kill@renewal/p1#2", Fault{Kind: "kill", Trigger: Trigger{Event: EventRenewal, Process: intp(1), Nth: 2}}, ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			f, err := ParseFault(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if f.String() != c.want.String() {
				t.Errorf("parsed %q as %s, want %s", c.in, f, c.want)
			}
			text := c.text
			if text == "" {
				text = c.in
			}
			if f.String() != text {
				t.Errorf("String = %q, want %q", f.String(), text)
			}
			if (f.Trigger.Process == nil) != (c.want.Trigger.Process == nil) || f.Repeat != c.want.Repeat || f.Trigger.Nth != c.want.Trigger.Nth {
				t.Errorf("parsed %+v, want %+v", f, c.want)
			}
		})
	}
}

func TestParseFaultErrors(t *testing.T) {
	cases := []struct{ in, says string }{
		{"pause@", "unknown event"},
		{"@grant", "KIND@EVENT"},
		{"paws@grant", "unknown nemesis"},
		{"pause@grnt", `did you mean "grant"`},
		{"pause@grant:soon", "duration"},
		{"pause@grant*0", "repeat"},
		{"pause@grant*x", "repeat"},
		{"pause@grant#0", "#N"},
		{"pause@grant#1#2", "twice"},
		{"pause@grant/3", "/pN"},
		{"pause@grant/p1/p2", "twice"},
		{"pause@grant+soon", "offset"},
		{"pause@lease-left", "needs a bound"},
		{"pause@lease-left<0s", "more than 0"},
		{"pause@lease-left<x", "lease-left bound"},
		{"kill@at#2", "takes no /p or #"},
		{"kill@5s+1s", "time trigger"},
		{"kill@25h", "want 0 to"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			_, err := ParseFault(c.in)
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), c.in) {
				t.Errorf("error %q: want it to name %q and say %q", err, c.in, c.says)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is more than one line", err)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	s, err := Parse("pause,partition@grant:2s,pause@cs,partition")
	if err != nil {
		t.Fatal(err)
	}
	var timed, kinds []string
	for _, k := range s.Timed {
		timed = append(timed, k.Name)
	}
	for _, k := range s.Kinds {
		kinds = append(kinds, k.Name)
	}
	if strings.Join(timed, ",") != "pause,partition" || strings.Join(kinds, ",") != "pause,partition" || len(s.Faults) != 2 {
		t.Errorf("timed %v, kinds %v, faults %v", timed, kinds, s.Faults)
	}
	if s, err := Parse("kill@5s"); err != nil || len(s.Timed) != 0 || len(s.Kinds) != 1 {
		t.Errorf("kill@5s: %+v, %v", s, err)
	}
	for _, spec := range []string{"", "none"} {
		if s, err := Parse(spec); err != nil || len(s.Kinds) != 0 {
			t.Errorf("%q: %+v, %v", spec, s, err)
		}
	}
	for _, bad := range []string{"none,pause@grant", "pause@grant,none", "pause,paws", "pause@grant,paws@cs"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if got := Join(nil); got != "none" {
		t.Errorf("Join of none = %q", got)
	}
}

// TestWorkerReports: the marks a run asks its workers for are those its
// triggers name, each once, in the order they first come.
func TestWorkerReports(t *testing.T) {
	cases := []struct {
		spec string
		want []string
	}{
		{"pause", nil},
		{"pause@grant,partition@cs,kill@failpoint", nil},
		{"pause@write", []string{"write"}},
		{"pause@renewal,kill@write,partition@renewal#2", []string{"renewal", "write"}},
	}
	for _, c := range cases {
		s, err := Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := WorkerReports(s.Faults); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.spec, got, c.want)
		}
	}
}

func TestAtInvocation(t *testing.T) {
	cases := []struct {
		spec  string
		event string
		want  bool
	}{
		{"pause", EventCS, false},
		{"partition@cs", EventCS, true},
		{"partition@cs#1000000", EventCS, true},
		{"partition@cs+1ms", EventCS, false},
		{"partition@cs+lease-1s", EventCS, true}, // no offset with a lease of 1s
		{"pause@grant,reply-loss@release", EventCS, false},
		{"pause@grant,reply-loss@release", EventRelease, true},
		{"pause@grant+5ms,partition@cs+2ms,pause@cs", EventCS, true},
	}
	for _, c := range cases {
		s, err := Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := AtInvocation(s.Faults, c.event, time.Second); got != c.want {
			t.Errorf("%s at %s: %v, want %v", c.spec, c.event, got, c.want)
		}
	}
}

// FuzzParseFault: whatever ParseFault accepts, its String reads back as the
// same fault, and nothing it is given makes it panic.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"pause@grant+5ms:lease+1s", "partition@release/p4#2+1ms:2xlease*3", "kill@5s:3s",
		"pause@lease-left<200ms:lease", "pause@rival+lease-1ms", "x@y", "pause@grant#", "pause@@", "pause@grant:0.5xlease-3ms*2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseFault(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Errorf("error of %q is more than one line: %q", s, err)
			}
			return
		}
		b, err := ParseFault(a.String())
		if err != nil {
			t.Fatalf("%q parsed as %q, which does not parse: %v", s, a.String(), err)
		}
		if a.String() != b.String() {
			t.Fatalf("%q -> %q -> %q", s, a.String(), b.String())
		}
	})
}
