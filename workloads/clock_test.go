package workloads

import (
	"path/filepath"
	"testing"
	"time"
)

func TestClockSetting(t *testing.T) {
	real := time.Unix(1000, 0)
	tests := []struct {
		name string
		s    ClockSetting
		want time.Time
	}{
		{"zero is real", ClockSetting{}, real},
		{"ahead", ClockSetting{Offset: 5 * time.Second}, real.Add(5 * time.Second)},
		{"behind", ClockSetting{Offset: -2 * time.Second}, real.Add(-2 * time.Second)},
		{"twice as fast", ClockSetting{Rate: 2, Since: real.Add(-3 * time.Second)}, real.Add(3 * time.Second)},
		{"half as fast", ClockSetting{Rate: 0.5, Since: real.Add(-4 * time.Second)}, real.Add(-2 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.at(real); !got.Equal(tt.want) {
				t.Errorf("at = %v, want %v", got, tt.want)
			}
			back, err := ParseClockSetting(tt.s.String())
			if err != nil {
				t.Fatal(err)
			}
			if got := back.at(real); !got.Equal(tt.want) {
				t.Errorf("after a round trip at = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock")
	c := NewClock(path)
	if d := time.Until(c.Now()); d > time.Second || d < -time.Second {
		t.Fatalf("missing file: clock off by %s, want the real clock", d)
	}
	if err := WriteClockSetting(path, ClockSetting{Offset: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(c.Now()); d < 59*time.Minute {
		t.Fatalf("clock ahead by %s, want an hour", d)
	}
}

func TestParseClockSettingErrors(t *testing.T) {
	for _, in := range []string{"", "1 2", "x 1 0", "0 -1 0", "0 1 y"} {
		if _, err := ParseClockSetting(in); err == nil {
			t.Errorf("ParseClockSetting(%q) = nil error", in)
		}
	}
}

func FuzzParseClockSetting(f *testing.F) {
	f.Add("0 1 0\n")
	f.Add("-5000000000 0.5 1700000000000000000")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseClockSetting(in)
		if err != nil {
			return
		}
		if _, err := ParseClockSetting(s.String()); err != nil {
			t.Fatalf("round trip of %q: %v", in, err)
		}
	})
}
