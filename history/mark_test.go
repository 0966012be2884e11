package history

import (
	"slices"
	"testing"
)

// TestIsMark: a worker's write and renewal marks are marks; every other
// event, and an op that is no event, is not.
func TestIsMark(t *testing.T) {
	ev := func(f, detail string) Op {
		return Op{Type: Info, F: f, Value: &Value{Extra: &Extra{Detail: detail}}}
	}
	cases := []struct {
		name string
		op   Op
		want bool
	}{
		{"write", ev(FEvent, "write sent: k0 (token 3)"), true},
		{"renewal", ev(FEvent, "renewal sent: lease 0x1f kept alive (TTL 2 s)"), true},
		{"a refused renewal", ev(FEvent, "renewal of k0 refused: the lock is lost"), false},
		{"a session event", ev(FEvent, "session 0x1 expired"), false},
		{"a failpoint", ev(FEvent, "failpoint setnx-expire: between SETNX and PEXPIRE"), false},
		{"not an event", ev(FCS, "write sent: k0"), false},
		{"no value", Op{Type: Info, F: FEvent}, false},
		{"no extra", Op{Type: Info, F: FEvent, Value: &Value{}}, false},
	}
	for _, c := range cases {
		if got := c.op.IsMark(); got != c.want {
			t.Errorf("%s: IsMark = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMarkName: a mark's detail names its mark; any other detail none; and
// Marks lists every name MarkName gives.
func TestMarkName(t *testing.T) {
	cases := []struct{ detail, want string }{
		{"write sent: k0 (token 3)", MarkWrite},
		{"renewal sent: k0 (owner a1)", MarkRenewal},
		{"renewal of k0 refused", ""},
		{"a write sent: k0", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := MarkName(c.detail); got != c.want {
			t.Errorf("MarkName(%q) = %q, want %q", c.detail, got, c.want)
		}
	}
	if got, want := Marks(), []string{MarkWrite, MarkRenewal}; !slices.Equal(got, want) {
		t.Errorf("Marks() = %v, want %v", got, want)
	}
}

// TestPairUnheard: a pair got no reply when it ended info, or when its
// application went on without one (Extra.Unheard); not otherwise.
func TestPairUnheard(t *testing.T) {
	inv := &Op{Type: Invoke, F: FRelease, Key: "k"}
	done := func(typ Type, v *Value) *Op { return &Op{Type: typ, F: FRelease, Key: "k", Value: v} }
	cases := []struct {
		name string
		pr   Pair
		want bool
	}{
		{"info", Pair{Invoke: inv, Complete: done(Info, nil)}, true},
		{"open at the end", Pair{Invoke: inv}, true},
		{"ok, unheard", Pair{Invoke: inv, Complete: done(OK, &Value{Extra: &Extra{Unheard: true}})}, true},
		{"ok", Pair{Invoke: inv, Complete: done(OK, &Value{Extra: &Extra{Detail: "released"}})}, false},
		{"ok, no value", Pair{Invoke: inv, Complete: done(OK, nil)}, false},
		{"ok, no extra", Pair{Invoke: inv, Complete: done(OK, &Value{})}, false},
		{"fail", Pair{Invoke: inv, Complete: done(Fail, nil)}, false},
	}
	for _, c := range cases {
		if got := c.pr.Unheard(); got != c.want {
			t.Errorf("%s: Unheard = %v, want %v", c.name, got, c.want)
		}
	}
}
