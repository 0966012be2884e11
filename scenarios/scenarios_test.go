package scenarios

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		args []string
		want string
		name string
		err  string
	}{
		{[]string{"--lock", "x"}, "--lock x", "", ""},
		{[]string{"--scenario", "zk-session-expiry", "--seed", "3"}, "--lock zk-ephemeral", "zk-session-expiry", ""},
		{[]string{"--seed", "3", "--scenario=redis-pause", "--fencing"}, "--lock redis-set-px", "redis-pause", ""},
		{[]string{"--scenario"}, "", "", "needs a name"},
		{[]string{"--scenario", "nope"}, "", "", `unknown scenario "nope" (known: `},
	}
	for _, tt := range tests {
		got, name, err := Expand(tt.args)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		joined := strings.Join(got, " ")
		if err != nil || name != tt.name || !strings.HasPrefix(joined, tt.want) {
			t.Errorf("%v: got %q %q %v", tt.args, joined, name, err)
		}
		// The user's flags come after the scenario's, so they win.
		if tt.name != "" && !strings.HasSuffix(joined, strings.Join(tt.args[len(tt.args)-1:], " ")) {
			t.Errorf("%v: user flags must come last: %q", tt.args, joined)
		}
	}
}

func TestScenariosParse(t *testing.T) {
	for _, s := range All() {
		if len(s.Args)%2 != 0 || s.Summary == "" || s.Expect == "" {
			t.Errorf("%s: args must be flag/value pairs and it needs a summary and an expectation", s.Name)
		}
	}
}
