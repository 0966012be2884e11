package main

import (
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
)

// TestVerdictExit: a result's exit code is its verdict's, except that a
// checker that panicked makes it an error whatever the verdict.
func TestVerdictExit(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  checker.Result
		code int
		err  string
	}{
		{"valid", checker.Result{Valid: checker.Valid}, exitValid, ""},
		{"invalid", checker.Result{Valid: checker.Invalid}, exitInvalid, ""},
		{"unknown", checker.Result{Valid: checker.Unknown}, exitUnknown, ""},
		{"panicked, unknown", checker.Result{Valid: checker.Unknown, Panicked: "mutex: boom"}, exitError, "checker mutex: boom: the verdict is not to be trusted"},
		{"panicked, invalid", checker.Result{Valid: checker.Invalid, Panicked: "overlap: boom"}, exitError, "checker overlap: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, err := verdictExit(tc.res)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
