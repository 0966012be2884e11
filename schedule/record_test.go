package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRecordRoundTrip(t *testing.T) {
	f, err := ParseFault("pause@grant/p3#2+5ms:lease+1s*2")
	if err != nil {
		t.Fatal(err)
	}
	d := Dur{Abs: 3 * time.Second}
	random := Fault{Kind: "kill", Trigger: Trigger{Event: EventAt, Offset: Dur{Abs: 4200 * time.Millisecond}}, Duration: &d}
	rec := Record{Lease: time.Second, Duration: 3 * time.Second, Faults: []Applied{
		{Fault: f, Spec: f.String(), Fired: []Fired{{Event: 10, EventF: "grant", Process: 3, Key: "k0", Due: time.Second, InForce: time.Second + time.Millisecond, Late: time.Millisecond, Start: 13, End: 40, Ended: 3 * time.Second}}, Busy: 4},
		{Fault: random, Spec: random.String(), Random: true},
	}}
	path := filepath.Join(t.TempDir(), FileName)
	if err := rec.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if Join(got.Replay()) != "pause@grant/p3#2+5ms:lease+1s*2,kill@at+4.2s:3s" {
		t.Errorf("replay of the loaded record: %s", Join(got.Replay()))
	}
	if got.Faults[0].Fired[0] != rec.Faults[0].Fired[0] || got.Faults[0].Busy != 4 || !got.Faults[1].Random {
		t.Errorf("loaded %+v, wrote %+v", got, rec)
	}
}

func TestDecodeByHand(t *testing.T) {
	rec, err := Decode([]byte(`{"faults": [{"spec": "pause@grant+5ms:lease+1s"}, {"kind": "partition", "trigger": {"event": "cs", "nth": 3}, "duration": "2s"}]}`), "hand.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := Join(rec.Replay()); got != "pause@grant+5ms:lease+1s,partition@cs#3:2s" {
		t.Errorf("got %s", got)
	}
	for _, c := range []struct{ in, says string }{
		{`{"faults": []}`, "no faults"},
		{`{"faults": [{}]}`, "neither a kind nor a spec"},
		{`{"faults": [{"spec": "pause@grnt"}]}`, "fault 1"},
		{`{"faults": [{"kind": "pause", "trigger": {"event": "grant"}, "duration": "soon"}]}`, "duration"},
		{`{"faults": [{"kind": "pause", "trigger": {"event": "nope"}}]}`, "unknown event"},
		{`{"fault": []}`, "unknown field"},
		{`[`, "hand.json"},
	} {
		if _, err := Decode([]byte(c.in), "hand.json"); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Decode(%s): %v, want an error saying %q", c.in, err, c.says)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// FuzzDecodeSchedule: a schedule file is user input; whatever Decode
// accepts replays as faults that Parse accepts, and nothing panics.
func FuzzDecodeSchedule(f *testing.F) {
	f.Add([]byte(`{"faults": [{"spec": "pause@grant+5ms:lease+1s"}]}`))
	f.Add([]byte(`{"lease": 1000000000, "faults": [{"kind": "partition", "trigger": {"event": "cs", "nth": 3, "process": 2}, "duration": "2xlease", "repeat": 2}]}`))
	f.Add([]byte(`{"faults": [{"kind": "kill", "trigger": {"event": "at", "offset": "5s"}, "random": true, "fired": [{"event": -1}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := Decode(b, "fuzz")
		if err != nil {
			return
		}
		if _, err := Parse(Join(rec.Replay())); err != nil {
			t.Fatalf("decoded %s, whose replay %q does not parse: %v", b, Join(rec.Replay()), err)
		}
	})
}
