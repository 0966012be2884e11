package shrink

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/schedule"
)

func faults(t *testing.T, specs ...string) []schedule.Fault {
	t.Helper()
	var out []schedule.Fault
	for _, s := range specs {
		f, err := schedule.ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func whats(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.What)
	}
	return out
}

func TestCandidatesOrder(t *testing.T) {
	fs := faults(t, "pause@at+2s:3s", "partition@at+6s:3s", "kill@at+10s:3s")
	c := Case{Faults: fs, Workers: 10, Keys: 2, Time: 30 * time.Second}
	grant := faults(t, "partition@grant+7ms:3s")[0]
	h := Hints{Culprit: 1, Triggered: map[int]schedule.Fault{1: grant}}
	got := whats(Candidates(c, Trial{FirstAnomaly: 3 * time.Second}, h))
	want := []string{
		"no fault",
		"only partition@at+6s:3s", "only kill@at+10s:3s", "only pause@at+2s:3s",
		"without partition@at+6s:3s", "without kill@at+10s:3s", "without pause@at+2s:3s",
		"partition@at+6s:3s as partition@grant+7ms:3s",
		"2 workers", "1 key",
		"pause@at+2s:3s for 1.5s", "partition@at+6s:3s for 1.5s", "kill@at+10s:3s for 1.5s",
		"--time 15s", // the kill at 10 s for 3 s, and 2 s to spare
	}
	if !slices.Equal(got, want) {
		t.Errorf("candidates:\n got  %q\n want %q", got, want)
	}
	// The culprit alone keeps its event trigger as fault 0.
	only := Candidates(c, Trial{}, h)[1]
	if len(only.Case.Faults) != 1 || only.Hints.Triggered[0].String() != grant.String() || only.Hints.Culprit != 0 {
		t.Errorf("only the culprit: %+v", only)
	}
	// Without fault 0, the trigger of fault 1 is fault 0's.
	without := Candidates(c, Trial{}, h)[6]
	if without.What != "without pause@at+2s:3s" || without.Hints.Triggered[0].String() != grant.String() || without.Hints.Culprit != 0 {
		t.Errorf("without the first: %+v", without)
	}
}

func TestCandidatesOfASmallCase(t *testing.T) {
	c := Case{Faults: faults(t, "pause@grant+5ms:lease+1s*3", "kill@at+1s:150ms"), Workers: 2, Keys: 1, Time: 10 * time.Second}
	got := whats(Candidates(c, Trial{FirstAnomaly: 4 * time.Second}, Hints{Culprit: -1}))
	want := []string{"no fault", "only kill@at+1s:150ms", "only pause@grant+5ms:lease+1s*3", "pause@grant+5ms:lease+1s*3 once"}
	if !slices.Equal(got, want) {
		t.Errorf("candidates:\n got  %q\n want %q (a lease-relative or 150 ms fault is not halved; --time 10s is short enough)", got, want)
	}
	if got := Candidates(Case{Workers: 2, Keys: 1, Time: time.Second}, Trial{}, Hints{}); len(got) != 0 {
		t.Errorf("a case with nothing to cut: %q", whats(got))
	}
}

func TestShrinkKeepsWhatFails(t *testing.T) {
	// The anomaly needs the pause, at an event trigger, for a second or
	// more, and two workers.
	fails := func(c Case) bool {
		for _, f := range c.Faults {
			if f.Kind == "pause" && f.Trigger.Event == schedule.EventGrant && f.Duration.Of(0) >= time.Second && c.Workers >= 2 {
				return true
			}
		}
		return false
	}
	var tried []string
	tester := func(_ context.Context, c Case, count, need int) (Trial, error) {
		tried = append(tried, strings.Join(c.Args(), " "))
		if fails(c) {
			return Trial{Hits: count, Runs: count, FirstAnomaly: 2 * time.Second}, nil
		}
		return Trial{Hits: 0, Runs: count - need + 1}, nil
	}
	start := Case{Faults: faults(t, "kill@at+1s:3s", "pause@at+5s:3s", "partition@at+9s:3s"), Workers: 10, Keys: 1, Time: 30 * time.Second}
	hints := Hints{Culprit: 1, Triggered: map[int]schedule.Fault{1: faults(t, "pause@grant+5ms:3s")[0]}}
	var progress strings.Builder
	res, err := Shrink(context.Background(), start, Trial{}, hints, tester, Options{Count: 10, Need: 9, Budget: time.Minute, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	want := "pause@grant+5ms:1.5s"
	if got := schedule.Join(res.Best.Faults); got != want || res.Best.Workers != 2 || res.Best.Time != 6*time.Second || res.Trial.Hits != 10 {
		t.Fatalf("smallest %+v (%s), trial %+v; want %s, 2 workers, --time 6s\n%s", res.Best, got, res.Trial, want, progress.String())
	}
	if res.Stopped != "" || res.Kept == 0 || res.Tried != len(tried) {
		t.Errorf("result %+v after %d tries", res, len(tried))
	}
	none := 0
	for _, s := range tried {
		if strings.HasPrefix(s, "--nemesis none ") {
			none++
		}
	}
	if none != 1 {
		t.Errorf("no fault tried %d times: once at 10 workers and 30 s covers the smaller cases\n%s", none, progress.String())
	}
	seen := make(map[string]bool)
	for _, s := range tried {
		if seen[s] {
			t.Errorf("tried %q twice", s)
		}
		seen[s] = true
	}
	if !strings.Contains(progress.String(), "shrink: 1. no fault: 0 of 2: dropped\n") {
		t.Errorf("progress:\n%s", progress.String())
	}
}

func TestShrinkStopsAtItsBudget(t *testing.T) {
	slow := func(ctx context.Context, c Case, count, need int) (Trial, error) {
		time.Sleep(30 * time.Millisecond)
		return Trial{Hits: count, Runs: count}, nil
	}
	start := Case{Faults: faults(t, "pause@at+1s:3s", "kill@at+5s:3s", "partition@at+9s:3s"), Workers: 10, Keys: 4, Time: time.Minute}
	res, err := Shrink(context.Background(), start, Trial{}, Hints{Culprit: -1}, slow, Options{Count: 3, Need: 3, Budget: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stopped, "budget") || res.Tried == 0 || res.Tried > 3 {
		t.Errorf("result %+v: want a stop at the budget after a try or two", res)
	}
}

func TestEventTrigger(t *testing.T) {
	ms := time.Millisecond
	h := history.History{
		{Index: 0, Time: 100 * ms, Process: 1, Type: history.OK, F: history.FAcquire, Key: "k"},
		{Index: 1, Time: 200 * ms, Process: 2, Type: history.OK, F: history.FAcquire, Key: "j"},
		{Index: 2, Time: 300 * ms, Process: 3, Type: history.OK, F: history.FAcquire, Key: "k"},
		{Index: 3, Time: 305 * ms, Process: history.NemesisProcess, Type: history.Invoke, F: history.FPause},
		{Index: 4, Time: 306 * ms, Process: history.NemesisProcess, Type: history.Info, F: history.FPause,
			Value: &history.Value{Extra: &history.Extra{Targets: []int{1}, Hit: &history.Hit{Holder: true, Key: "k"}}}},
		{Index: 5, Time: 400 * ms, Process: history.NemesisProcess, Type: history.Info, F: "kill",
			Value: &history.Value{Extra: &history.Extra{Hit: &history.Hit{Holders: 2}}}},
	}
	pause := faults(t, "pause@at+1s:3s")[0]
	got, ok := EventTrigger(h, pause, schedule.Fired{Start: 4})
	if !ok || got.String() != "pause@grant+206ms:3s" {
		t.Errorf("pause of process 1: %s %v, want its grant at 100 ms, 206 ms before", got, ok)
	}
	kill := faults(t, "kill@at+1s:3s")[0]
	if got, ok := EventTrigger(h, kill, schedule.Fired{Start: 5}); !ok || got.String() != "kill@grant+100ms:3s" {
		t.Errorf("kill of a node: %s %v, want the latest grant, 100 ms before", got, ok)
	}
	for _, f := range []schedule.Fired{{Start: 9}, {Start: -1}, {Start: 4, Error: "no holder"}} {
		if _, ok := EventTrigger(h, pause, f); ok {
			t.Errorf("%+v: want none", f)
		}
	}
}

func TestFromRecordFindsTheCulprit(t *testing.T) {
	fs := faults(t, "pause@at+1s:1s", "kill@at+3s:1s", "partition@at+6s:1s")
	rec := schedule.Record{Lease: time.Second}
	for i, f := range fs {
		rec.Faults = append(rec.Faults, schedule.Applied{Fault: f, Spec: f.String(), Random: true,
			Fired: []schedule.Fired{{Event: -1, Start: 99, InForce: time.Duration(1+3*i) * time.Second}}})
	}
	c, h := FromRecord(rec, nil, 10, 1, 30*time.Second, 5*time.Second)
	if h.Culprit != 1 || len(c.Faults) != 3 || c.Workers != 10 || h.FirstAnomaly != 5*time.Second {
		t.Errorf("case %+v, hints %+v: want the kill (in force at 4 s) as the culprit of an anomaly at 5 s", c, h)
	}
	if _, h := FromRecord(rec, nil, 10, 1, 30*time.Second, 0); h.Culprit != 2 {
		t.Errorf("no first anomaly: culprit %d, want the last fault", h.Culprit)
	}
}

func TestSentence(t *testing.T) {
	lease := time.Second
	cases := []struct {
		c    Case
		want string
	}{
		{Case{Workers: 2, Keys: 1}, "no fault, 2 workers: double-holder in 10 of 10"},
		{Case{Faults: faults(t, "pause@grant+5ms:2s"), Workers: 2, Keys: 1}, "one pause of the holder 5ms after its grant, for 2s (lease + 1s), 2 workers: double-holder in 10 of 10"},
		{Case{Faults: faults(t, "pause@grant:lease+200ms*3"), Workers: 10, Keys: 4}, "3 pause of the holder as it was granted the lock, for lease + 200ms, 10 workers, 4 keys: double-holder in 10 of 10"},
		{Case{Faults: faults(t, "kill@at+4s:500ms", "partition@cs+1ms:1s"), Workers: 3, Keys: 1}, "one kill 4s into the run, for 500ms (lease - 500ms), then one partition of the holder 1ms after it entered its critical section, for 1s (the lease), 3 workers: double-holder in 10 of 10"},
		{Case{Faults: faults(t, "pause@lease-left<100ms", "pause@rival", "pause@release+1ms", "pause@server-release"), Workers: 2, Keys: 1},
			"one pause of the holder with less than 100ms of its lease left, then one pause of the holder as a rival asked for its lock, then one pause of the holder 1ms after it began its release, then one pause of the holder as the server let its lock go, 2 workers: double-holder in 10 of 10"},
	}
	for _, c := range cases {
		if got := Sentence(c.c, Trial{Hits: 10, Runs: 10}, "double-holder", lease); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
