package history

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestServerReleaseValidate(t *testing.T) {
	tests := []struct {
		name string
		h    []string
		want string // "" when valid
	}{
		{"an observation", []string{"-1 info server-release 5"}, ""},
		{"an observation while a fault is open", []string{"-1 invoke pause 1", "-1 info server-release 2", "-1 info pause 3"}, ""},
		{"an observation while a worker's op is open", []string{"0 invoke acquire 1", "-1 info server-release 2", "0 ok acquire 3"}, ""},
		{"invoked", []string{"-1 invoke server-release 1"}, "server-release op of type invoke (an observation is a lone info op)"},
		{"ok", []string{"-1 ok server-release 1"}, "server-release op of type ok"},
		{"fail", []string{"-1 fail server-release 1"}, "server-release op of type fail"},
		{"on a worker", []string{"0 info server-release 1"}, "server-release is a nemesis op, recorded on process -1, not on process 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(ops(t, tt.h...))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate: %v, want %q", err, tt.want)
			}
		})
	}
}

func TestServerReleaseIsLone(t *testing.T) {
	for _, tt := range []struct {
		typ  Type
		f    string
		want bool
	}{
		{Info, FServerRelease, true},
		{Invoke, FServerRelease, false},
		{OK, FServerRelease, false},
		{Info, FServerExit, true},
		{Info, FEvent, true},
		{Info, FPause, false},
	} {
		op := Op{Type: tt.typ, F: tt.f}
		if got := op.IsLone(); got != tt.want {
			t.Errorf("%s %s: IsLone = %v, want %v", tt.typ, tt.f, got, tt.want)
		}
	}
	h := ops(t, "0 invoke acquire 1", "-1 info server-release 2", "0 ok acquire 3")
	pairs, err := h.Pairs()
	if err != nil || len(pairs) != 1 || pairs[0].Complete.Index != 2 {
		t.Fatalf("Pairs = %v, %v: want the acquire alone", pairs, err)
	}
}

func TestReleaseAt(t *testing.T) {
	for _, tt := range []struct {
		name   string
		op     Op
		want   time.Duration
		wantOK bool
	}{
		{"estimated instant", Op{F: FServerRelease, Time: 9, Value: &Value{Extra: &Extra{Release: &Release{How: ReleaseExpired, At: 4}}}}, 4, true},
		{"heard only", Op{F: FServerRelease, Time: 9, Value: &Value{Extra: &Extra{Release: &Release{How: ReleaseDeleted}}}}, 9, true},
		{"no release", Op{F: FServerRelease, Time: 9, Value: &Value{}}, 0, false},
		{"no value", Op{F: FServerRelease, Time: 9}, 0, false},
		{"another op", Op{F: FRelease, Time: 9, Value: &Value{Extra: &Extra{Release: &Release{At: 4}}}}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.op.ReleaseAt()
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("ReleaseAt = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestServerReleaseRoundTrip(t *testing.T) {
	st := time.Date(2026, 11, 26, 18, 0, 4, 20e6, time.UTC)
	h := History{
		{Index: 0, Time: 4100 * time.Millisecond, Process: NemesisProcess, Type: Info, F: FServerRelease, Key: "k0",
			Value: &Value{Owner: "p3-9f", Extra: &Extra{Nodes: []string{"lock0"}, Release: &Release{How: ReleaseExpired, ServerTime: st, At: 4020 * time.Millisecond}}}},
		{Index: 1, Time: 5 * time.Second, Process: NemesisProcess, Type: Info, F: FServerRelease,
			Value: &Value{Extra: &Extra{Release: &Release{How: ReleaseExpired, Probe: true, Lag: 3 * time.Millisecond}}}},
	}
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"server_time":"0001`) {
		t.Errorf("a zero server time is written: %s", buf.String())
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || !back[0].Value.Ext().Release.ServerTime.Equal(st) || back[0].Value.Ext().Release.At != 4020*time.Millisecond ||
		!back[1].Value.Ext().Release.Probe || back[1].Value.Ext().Release.Lag != 3*time.Millisecond {
		t.Fatalf("round trip: %+v", back)
	}
	if err := Validate(back); err != nil {
		t.Fatal(err)
	}
}

func TestRegisterFaultOpsRefusesServerRelease(t *testing.T) {
	for _, f := range []FaultOps{{Start: FServerRelease, End: "x-end"}, {Start: "x-start", End: FServerRelease}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterFaultOps(%+v) did not panic", f)
				}
			}()
			RegisterFaultOps(f)
		}()
	}
}
