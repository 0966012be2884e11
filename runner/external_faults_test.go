package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestExternalFaults: the client's-side faults build on an external
// cluster, each with its class; the faults that need the servers do not.
func TestExternalFaults(t *testing.T) {
	got := make(map[string]string)
	var faults = map[string]ExternalFault{}
	for _, f := range ExternalFaults() {
		got[f.Name] = f.Class
		faults[f.Name] = f
	}
	for name, class := range map[string]string{"pause": history.ClassProcess, "partition": history.ClassNetwork, "reply-loss": history.ClassNetwork,
		"clock-client-rate": history.ClassClock, "crash": history.ClassProcess} {
		if got[name] != class {
			t.Errorf("%s: class %q, want it applied with class %q", name, got[name], class)
		}
	}
	for _, name := range []string{"failover", "clock", "starve-server", "partition-majority", "stall-disk"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s applies to an external cluster: it needs the servers", name)
		}
	}
	// The server faults a topology file's commands give, and the session
	// kill of the databases through their login.
	for name, needs := range map[string]string{"kill": "kill,start or restart", "restart-lose": "restart-without-data"} {
		if f, ok := faults[name]; !ok || strings.Join(f.Needs, ",") != needs || f.Services != nil {
			t.Errorf("%s: %+v, want it applied to every service with the commands %s", name, f, needs)
		}
	}
	// A leader's pause needs the leader known: not on Redis Cluster, whose
	// masters are many.
	if f := faults["pause-leader"]; strings.Join(f.Needs, ",") != "stop,continue" || !slices.Contains(f.Services, "redis") || slices.Contains(f.Services, "redis-cluster") {
		t.Errorf("pause-leader: %+v, want it with the stop and continue commands, on every service but redis-cluster", f)
	}
	if f := faults["session-kill"]; len(f.Needs) != 0 || !slices.Contains(f.Services, "postgres") || slices.Contains(f.Services, "redis") {
		t.Errorf("session-kill: %+v, want it applied to the databases with no command", f)
	}
	for _, name := range []string{"pause", "partition", "crash"} {
		if f := faults[name]; f.Needs != nil || f.Services != nil {
			t.Errorf("%s: %+v, want it applied to every service with no command", name, f)
		}
	}
	if len(got) < 10 {
		t.Errorf("only %v apply", got)
	}
}
