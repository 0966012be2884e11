package learn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	// The faults register their history ops (history.RegisterFaultOps),
	// which Validate knows only once they have: a recorded run holds the
	// ops of its faults, reply-loss's among them.
	_ "github.com/lockcheck/lockcheck/nemesis"
)

// TestLessons checks every lesson record: a question with its answer among
// the choices, sources as links, a cell with a seed, a recorded history
// that decodes, and a timeline that shows the lesson's trouble in red
// (an overlap, or a lock held for a dead client).
func TestLessons(t *testing.T) {
	all := All()
	if len(all) < 3 {
		t.Fatalf("%d lessons, want at least 3", len(all))
	}
	for i, l := range all {
		t.Run(l.ID, func(t *testing.T) {
			if l.Order != i+1 {
				t.Errorf("order %d at place %d: the ladder has a gap", l.Order, i+1)
			}
			if l.Title == "" || l.Setup == "" || !strings.HasSuffix(l.Question, "?") || l.Explanation == "" {
				t.Errorf("title, setup, question (ending in ?) and explanation are required: %+v", l)
			}
			if len(l.Choices) < 2 || l.Answer < 0 || l.Answer >= len(l.Choices) {
				t.Errorf("answer %d of %d choices", l.Answer, len(l.Choices))
			}
			if len(l.Sources) == 0 {
				t.Error("no sources")
			}
			for _, s := range l.Sources {
				if s.Title == "" || !(strings.HasPrefix(s.URL, "https://") || strings.HasPrefix(s.URL, "http://")) {
					t.Errorf("source %+v: want a title and a web link", s)
				}
			}
			if len(l.Cell.Args) == 0 || !strings.Contains(l.Cell.Command(), "--seed ") {
				t.Errorf("cell %+v: want check run flags", l.Cell)
			}
			if l.Want != "valid" && l.Want != "invalid" {
				t.Errorf("want %q: valid or invalid", l.Want)
			}
			h, err := l.History()
			if err != nil {
				t.Fatal(err)
			}
			if err := history.Validate(h); err != nil {
				t.Errorf("recorded history: %v", err)
			}
			tl, err := l.Timeline()
			if err != nil {
				t.Fatal(err)
			}
			if len(tl.Red) == 0 {
				t.Errorf("the timeline shows nothing in red")
			}
			if tl.Lease <= 0 || tl.End <= 0 || len(tl.Clients) == 0 {
				t.Errorf("timeline: lease %v, end %v, %d clients", tl.Lease, tl.End, len(tl.Clients))
			}
		})
	}
}

func TestFind(t *testing.T) {
	l, err := Find("2")
	if err != nil || l.Order != 2 {
		t.Errorf(`Find("2") = %s, %v; want the second lesson`, l.ID, err)
	}
	if l2, err := Find(l.ID); err != nil || l2.ID != l.ID {
		t.Errorf("Find(%q) = %s, %v", l.ID, l2.ID, err)
	}
	if _, err := Find("ttl-paus"); err == nil || !strings.Contains(err.Error(), "did you mean ttl-pause") {
		t.Errorf(`Find("ttl-paus") error %v, want a did-you-mean`, err)
	}
}

// TestTimeline checks the bands of a small history: process 0 is granted
// the lock and paused, the server expires its key, process 1 is granted
// it and releases it, and process 0 resumes and releases; the server's
// release of process 1's key is not observed, so its band is inferred.
func TestTimeline(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	h := history.History{
		{Time: ms(100), Process: 0, Type: history.Invoke, F: history.FAcquire, Key: "k0"},
		{Time: ms(1000), Process: 0, Type: history.OK, F: history.FAcquire, Key: "k0", Value: &history.Value{Owner: "a", Token: 1}},
		{Time: ms(1100), Process: history.NemesisProcess, Type: history.Invoke, F: "pause"},
		{Time: ms(1100), Process: history.NemesisProcess, Type: history.Info, F: "pause", Value: &history.Value{Extra: &history.Extra{Targets: []int{0}}}},
		{Time: ms(1500), Process: 1, Type: history.Invoke, F: history.FAcquire, Key: "k0"},
		{Time: ms(2050), Process: history.NemesisProcess, Type: history.Info, F: history.FServerRelease, Key: "k0",
			Value: &history.Value{Owner: "a", Extra: &history.Extra{Release: &history.Release{How: history.ReleaseExpired, At: ms(2000)}}}},
		{Time: ms(2100), Process: 1, Type: history.OK, F: history.FAcquire, Key: "k0", Value: &history.Value{Owner: "b", Token: 2}},
		{Time: ms(2500), Process: 1, Type: history.Invoke, F: history.FRelease, Key: "k0", Value: &history.Value{Owner: "b", Token: 2}},
		{Time: ms(2600), Process: 1, Type: history.OK, F: history.FRelease, Key: "k0", Value: &history.Value{Released: history.Bool(true)}},
		{Time: ms(4000), Process: history.NemesisProcess, Type: history.Invoke, F: "resume"},
		{Time: ms(4000), Process: history.NemesisProcess, Type: history.Info, F: "resume", Value: &history.Value{Extra: &history.Extra{Targets: []int{0}}}},
		{Time: ms(4100), Process: 0, Type: history.Invoke, F: history.FRelease, Key: "k0", Value: &history.Value{Owner: "a", Token: 1}},
		{Time: ms(4200), Process: 0, Type: history.OK, F: history.FRelease, Key: "k0", Value: &history.Value{Released: history.Bool(false)}},
	}
	for i := range h {
		h[i].Index = i
	}
	tl := NewTimeline(h, time.Second)
	if len(tl.Clients) != 2 {
		t.Fatalf("%d clients, want 2", len(tl.Clients))
	}
	span := func(s Span) [2]float64 { return [2]float64{s.From, s.To} }
	p0, p1 := tl.Clients[0], tl.Clients[1]
	if got := span(p0.Server[0]); got != [2]float64{1, 2} || p0.Server[0].Inferred {
		t.Errorf("p0 server band %v (inferred %v), want [1 2] observed", got, p0.Server[0].Inferred)
	}
	if got := span(p0.Believe[0]); got != [2]float64{1, 4.1} {
		t.Errorf("p0 believe band %v, want [1 4.1]", got)
	}
	if got := span(p1.Server[0]); got != [2]float64{2.1, 2.6} || p1.Server[0].Inferred {
		t.Errorf("p1 server band %v (inferred %v), want [2.1 2.6] ended by its release", got, p1.Server[0].Inferred)
	}
	if len(tl.Red) != 1 || span(tl.Red[0]) != [2]float64{2.1, 2.5} || tl.Red[0].Kind != "overlap" {
		t.Errorf("red %+v, want one overlap 2.1-2.5", tl.Red)
	}
	if len(tl.Faults) != 1 || span(tl.Faults[0]) != [2]float64{1.1, 4} || tl.Faults[0].Processes[0] != 0 {
		t.Errorf("faults %+v, want the pause of p0 1.1-4", tl.Faults)
	}
	// Without the observer's op, p0's server band is the lease, inferred.
	h2 := append(history.History{}, h[:5]...)
	h2 = append(h2, h[6:]...)
	tl = NewTimeline(h2, time.Second)
	if s := tl.Clients[0].Server[0]; span(s) != [2]float64{1, 2} || !s.Inferred || !strings.Contains(s.Label, "inferred") {
		t.Errorf("unobserved p0 server band %+v, want [1 2] inferred", s)
	}
}

// TestWriteHTML writes the course and checks that every page is there,
// self-contained (no src= or stylesheet link to fetch) and carries its
// lesson's question and timeline.
func TestWriteHTML(t *testing.T) {
	dir := t.TempDir()
	found := map[string]Finding{"ttl-pause": {Verdict: "invalid", Told: Told{Taught: "processes 0 and 1 both held lock k0", More: []string{"… and 2 more double holders like it"}}}}
	if err := WriteHTML(dir, found); err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{"index"}, ids()...) {
		b, err := os.ReadFile(filepath.Join(dir, name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		for _, bad := range []string{" src=", `rel="stylesheet"`, "@import"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s.html contains %q: pages must not fetch anything", name, bad)
			}
		}
		if name == "index" {
			continue
		}
		l, _ := Find(name)
		if !strings.Contains(page, `id="timeline"`) || !strings.Contains(page, escaped(l.Question)) {
			t.Errorf("%s.html lacks its timeline or question", name)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ttl-pause.html"))
	page := string(b)
	taught, more, run := strings.Index(page, "processes 0 and 1 both held lock k0"), strings.Index(page, "… and 2 more double holders"), strings.Index(page, `<section id="run">`)
	if taught < 0 || more < 0 || !(taught < run && run < more) {
		t.Errorf("ttl-pause.html: taught story at %d, the rest at %d, the run at %d: want the taught story before the run, the rest after", taught, more, run)
	}
}

// TestTimelineDoubt: an acquire that got no answer leaves a mark on its
// client's lane, so a process retired after one is not an empty lane.
func TestTimelineDoubt(t *testing.T) {
	h := history.History{
		{Time: 100 * time.Millisecond, Process: 4, Type: history.Invoke, F: history.FAcquire, Key: "k0"},
		{Time: 900 * time.Millisecond, Process: 4, Type: history.Info, F: history.FAcquire, Key: "k0", Error: "i/o timeout"},
	}
	tl := NewTimeline(h, time.Second)
	if len(tl.Clients) != 1 || len(tl.Clients[0].Marks) != 1 {
		t.Fatalf("%+v", tl.Clients)
	}
	if m := tl.Clients[0].Marks[0]; m.Kind != "doubt" || m.At != 0.9 || !strings.Contains(m.Label, "i/o timeout") {
		t.Errorf("mark %+v, want a doubt at 0.9 s naming the error", m)
	}
}

func ids() []string {
	var out []string
	for _, l := range All() {
		out = append(out, l.ID)
	}
	return out
}

// escaped is s escaped as html/template does in text.
func escaped(s string) string {
	return strings.NewReplacer("'", "&#39;", `"`, "&#34;", "&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestTimelineRedLock checks the RedLock lesson's lanes: one per master,
// and, since lock2's key for client 0 went when its clock jumped (the
// observer heard it then, though the jumped clock put the expiry later),
// client 0's majority ended before client 1 was granted the lock: the
// overlap is of beliefs, not of what the servers held.
func TestTimelineRedLock(t *testing.T) {
	l, err := Find("redlock-clock-jump")
	if err != nil {
		t.Fatal(err)
	}
	tl, err := l.Timeline()
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Nodes) != 5 {
		t.Fatalf("%d lock node lanes, want 5", len(tl.Nodes))
	}
	if len(tl.Red) == 0 {
		t.Fatal("no overlap")
	}
	red := tl.Red[0]
	for _, c := range tl.Clients {
		for _, s := range c.Server {
			if s.From < red.From && s.To > red.From {
				t.Errorf("client %d's majority %.2f-%.2f s outlives the start of the overlap at %.2f s", c.Process, s.From, s.To, red.From)
			}
		}
	}
}
