package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Dur is a duration that may be relative to the design's lease (or session
// timeout): Leases times the lease, plus Abs. "lease+500ms" is {1, 500ms},
// "2xlease" is {2, 0}, "300ms" is {0, 300ms}. It is what a trigger's offset
// and a fault's duration are written in, so that one schedule fits a run
// with any --lease.
type Dur struct {
	// Leases is how many leases the duration has (0 for an absolute one).
	Leases float64
	// Abs is the absolute part, added to the leases (it may be negative
	// when Leases is not 0: "lease-200ms").
	Abs time.Duration
}

// maxDur bounds every duration a schedule names: a fault or an offset
// longer than a day is a typo.
const maxDur = 24 * time.Hour

// Of returns d for a run whose lease is lease; never less than 0.
func (d Dur) Of(lease time.Duration) time.Duration {
	return max(0, time.Duration(d.Leases*float64(lease))+d.Abs)
}

// IsZero reports whether d is zero.
func (d Dur) IsZero() bool { return d.Leases == 0 && d.Abs == 0 }

// String returns d as ParseDur reads it: "5ms", "lease", "lease+1s",
// "2xlease-200ms".
func (d Dur) String() string {
	if d.Leases == 0 {
		return shortDur(d.Abs)
	}
	s := "lease"
	if d.Leases != 1 {
		s = strconv.FormatFloat(d.Leases, 'f', -1, 64) + "xlease"
	}
	switch {
	case d.Abs > 0:
		s += "+" + shortDur(d.Abs)
	case d.Abs < 0:
		s += "-" + shortDur(-d.Abs)
	}
	return s
}

// shortDur formats d without zero units: 2s, 1m30s, 24h.
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParseDur reads a duration: a Go duration ("300ms", "2s"), or one
// relative to the lease: "lease", "session" (the same), "2xlease",
// "0.5xlease", "lease+500ms", "lease-200ms". A negative total for every
// lease is an error, as is one longer than a day.
func ParseDur(s string) (Dur, error) {
	if s == "" {
		return Dur{}, fmt.Errorf("empty duration (want e.g. 300ms, lease, lease+500ms or 2xlease)")
	}
	i := strings.Index(s, "lease")
	word := "lease"
	if j := strings.Index(s, "session"); j >= 0 && (i < 0 || j < i) {
		i, word = j, "session"
	}
	if i < 0 {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return Dur{}, fmt.Errorf("duration %q: want a duration such as 300ms, or one of the lease such as lease+500ms or 2xlease", s)
		}
		if d > maxDur {
			return Dur{}, fmt.Errorf("duration %q: longer than %s", s, shortDur(maxDur))
		}
		return Dur{Abs: d}, nil
	}
	d := Dur{Leases: 1}
	if mult := s[:i]; mult != "" {
		n, ok := strings.CutSuffix(mult, "x")
		f, err := strconv.ParseFloat(n, 64)
		if !ok || err != nil || f <= 0 || f > 1000 {
			return Dur{}, fmt.Errorf("duration %q: %q before %s is not a multiple such as 2x (want NUMBERx%s, 0 < NUMBER <= 1000)", s, mult, word, word)
		}
		d.Leases = f
	}
	rest := s[i+len(word):]
	if rest == "" {
		return d, nil
	}
	sign := time.Duration(1)
	switch rest[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return Dur{}, fmt.Errorf("duration %q: want %s+DURATION or %s-DURATION after %s", s, word, word, word)
	}
	a, err := time.ParseDuration(rest[1:])
	if err != nil || a < 0 || rest[1] == '-' || rest[1] == '+' {
		return Dur{}, fmt.Errorf("duration %q: %q is not a duration such as 500ms", s, rest[1:])
	}
	if a > maxDur {
		return Dur{}, fmt.Errorf("duration %q: longer than %s", s, shortDur(maxDur))
	}
	d.Abs = sign * a
	return d, nil
}

// MarshalText writes d as String does, so that a schedule file reads as
// the --nemesis flag is written.
func (d Dur) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads d as ParseDur does.
func (d *Dur) UnmarshalText(b []byte) error {
	v, err := ParseDur(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
