package suggest

import (
	"slices"
	"testing"
)

var designs = []string{"redis-setnx-expire", "redis-set-px", "redis-set-px-del", "redlock", "redsync", "zk-ephemeral", "zk-sequential", "etcd-mutex", "pg-advisory"}

func TestClosest(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		known      []string
	}{
		{"redis-setpx", "redis-set-px", designs},
		{"redis-set-px", "redis-set-px", designs},
		{"REDIS_SET_PX", "redis-set-px", designs},
		{"redis-set-pxdel", "redis-set-px-del", designs},
		{"redlok", "redlock", designs},
		{"rdelock", "redlock", designs}, // a swap of neighbours is one edit
		{"etcd", "etcd-mutex", designs}, // the only one that contains it
		{"zk", "", designs},             // too short to match within
		{"zk-e", "zk-ephemeral", designs},
		{"redis", "", designs}, // within several: no guess
		{"postgres", "", designs},
		{"", "", designs},
		{"lok", "lock", []string{"lock", "nemesis", "time"}},
		{"tme", "time", []string{"lock", "nemesis", "time"}},
		{"x", "", []string{"lock"}},
		{"pause", "pause", []string{"pause", "partition"}},
		{"paus", "pause", []string{"pause", "partition"}},
		{"partiton", "partition", []string{"pause", "partition", "partition-ring"}},
		{"ab", "", []string{"cd"}},
		{"abcdefghij", "", []string{"a"}},                // a known name of under 3 letters is no part
		{"redlock-lock", "redlock", []string{"redlock"}}, // a known name within the typed one
		{"ab", "abc", []string{"abc"}},                   // one edit
	} {
		if got := Closest(tt.name, tt.known); got != tt.want {
			t.Errorf("Closest(%q, %v) = %q, want %q", tt.name, tt.known, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"abc", "acb", 1}, {"ca", "abc", 3}, {"flaw", "lawn", 2},
	} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := distance(tt.b, tt.a); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestUnknown(t *testing.T) {
	err := Unknown("lock", "redis-setpx", []string{"redis-set-px", "redlock"})
	if got, want := err.Error(), `unknown lock "redis-setpx"; did you mean "redis-set-px"? (known: redis-set-px, redlock)`; got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
	err = Unknown("nemesis", "flood", []string{"pause", "kill"})
	if got, want := err.Error(), `unknown nemesis "flood" (known: pause, kill)`; got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
}

// FuzzClosest: whatever a user types, Closest returns "" or a known name,
// and a known name typed exactly is itself.
func FuzzClosest(f *testing.F) {
	for _, s := range []string{"redis-setpx", "", "zk", "ЖЖ-ж", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := Closest(name, designs)
		if got != "" && !slices.Contains(designs, got) {
			t.Fatalf("Closest(%q) = %q, not a known name", name, got)
		}
		if slices.Contains(designs, name) && got != name {
			t.Fatalf("Closest(%q) = %q, want itself", name, got)
		}
	})
}
