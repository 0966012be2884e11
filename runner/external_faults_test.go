package runner

import (
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestExternalFaults: the client's-side faults build on an external
// cluster, each with its class; the faults that need the servers do not.
func TestExternalFaults(t *testing.T) {
	got := make(map[string]string)
	for _, f := range ExternalFaults() {
		got[f.Name] = f.Class
	}
	for name, class := range map[string]string{"pause": history.ClassProcess, "partition": history.ClassNetwork, "reply-loss": history.ClassNetwork,
		"clock-client-rate": history.ClassClock, "crash": history.ClassProcess} {
		if got[name] != class {
			t.Errorf("%s: class %q, want it applied with class %q", name, got[name], class)
		}
	}
	for _, name := range []string{"kill", "failover", "clock", "restart-lose", "session-kill", "starve-server", "partition-majority"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s applies to an external cluster: it needs the servers", name)
		}
	}
	if len(got) < 10 {
		t.Errorf("only %v apply", got)
	}
}
