package workloads

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClockSetting is how far and how fast a worker's client clock is off: the
// clock reads real + Offset + (real - Since) x (Rate - 1). A zero setting is
// the real clock.
type ClockSetting struct {
	// Offset is added to the real time (negative: the clock is behind).
	Offset time.Duration
	// Rate is how fast the clock runs against the real one from Since on: 2
	// runs twice as fast, 0.5 half as fast; 0 means 1.
	Rate float64
	// Since is when the rate took effect.
	Since time.Time
}

// at returns what a clock with this setting reads when the real time is real.
func (s ClockSetting) at(real time.Time) time.Time {
	t := real.Add(s.Offset)
	if s.Rate != 0 && s.Rate != 1 && !s.Since.IsZero() {
		t = t.Add(time.Duration(float64(real.Sub(s.Since)) * (s.Rate - 1)))
	}
	return t
}

// String renders the setting as the clock file holds it:
// "offset_ns rate since_unix_ns".
func (s ClockSetting) String() string {
	rate := s.Rate
	if rate == 0 {
		rate = 1
	}
	var since int64
	if !s.Since.IsZero() {
		since = s.Since.UnixNano()
	}
	return fmt.Sprintf("%d %s %d\n", int64(s.Offset), strconv.FormatFloat(rate, 'g', -1, 64), since)
}

// ParseClockSetting parses the clock file's one line.
func ParseClockSetting(text string) (ClockSetting, error) {
	f := strings.Fields(text)
	if len(f) != 3 {
		return ClockSetting{}, fmt.Errorf("clock setting %q: want \"offset_ns rate since_unix_ns\"", strings.TrimSpace(text))
	}
	off, err1 := strconv.ParseInt(f[0], 10, 64)
	rate, err2 := strconv.ParseFloat(f[1], 64)
	since, err3 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return ClockSetting{}, fmt.Errorf("clock setting %q: %w", strings.TrimSpace(text), err)
	}
	if rate <= 0 || rate > 1000 {
		return ClockSetting{}, fmt.Errorf("clock setting %q: rate %g: want more than 0, at most 1000", strings.TrimSpace(text), rate)
	}
	s := ClockSetting{Offset: time.Duration(off), Rate: rate}
	if since != 0 {
		s.Since = time.Unix(0, since)
	}
	return s, nil
}

// WriteClockSetting replaces the clock file at path with s, atomically (a
// reader sees the old setting or the new one).
func WriteClockSetting(path string, s ClockSetting) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".clock-")
	if err != nil {
		return fmt.Errorf("write clock %s: %w", path, err)
	}
	_, err = tmp.WriteString(s.String())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write clock %s: %w", path, err)
	}
	return nil
}

// Clock is the wall clock a worker's lock client does lease arithmetic with
// (RedLock's validity time, SETNX+GETSET's expiry timestamps). It is the
// real clock shifted by the setting in a file that the clock-client nemesis
// writes; Go programs read time through the vDSO, not libc, so an
// LD_PRELOAD shim cannot skew them. Only lease arithmetic uses Clock:
// timeouts and sleeps stay on the real monotonic clock, as a skewed wall
// clock would leave them.
type Clock struct {
	path string
}

// NewClock returns the clock of the file at path; "" is the real clock.
func NewClock(path string) *Clock { return &Clock{path: path} }

// Now returns the clock's current time. A missing or unreadable file reads
// as the real clock.
func (c *Clock) Now() time.Time {
	real := time.Now()
	if c == nil || c.path == "" {
		return real
	}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return real
	}
	s, err := ParseClockSetting(string(b))
	if err != nil {
		return real
	}
	return s.at(real)
}
