package dockertest

import "testing"

// recorder is a testing.TB that records instead of stopping the test.
type recorder struct {
	testing.TB
	name           string
	fatal, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Name() string          { return r.name }
func (r *recorder) Fatalf(string, ...any) { r.fatal = true }
func (r *recorder) Skip(...any)           { r.skipped = true }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }

func TestSkip(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Skip skips every case")
	}
	for _, c := range []struct {
		name, env   string
		fatal, skip bool
	}{
		{"TestRunDockerRedisPause", "", false, false},
		{"TestRunDockerRedisPause", Deferred, false, true},
		{"TestRunDockerRedisPause", "other", false, false},
		{"TestComposeRedis", "", true, false},
	} {
		t.Setenv(Env, c.env)
		r := &recorder{TB: t, name: c.name}
		Skip(r)
		if r.fatal != c.fatal || r.skipped != c.skip {
			t.Errorf("%s with %s=%q: fatal %v skipped %v, want %v %v", c.name, Env, c.env, r.fatal, r.skipped, c.fatal, c.skip)
		}
	}
}
