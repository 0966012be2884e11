package clusters_test

import (
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/clusters"
	_ "github.com/lockcheck/lockcheck/services"
)

// TestWhere: the services a capability applies to come from the
// registered services' own topologies, not from a list.
func TestWhere(t *testing.T) {
	promoters := clusters.ServicesWhere(true, func(tp clusters.Topology) bool { _, ok := tp.(clusters.Promoter); return ok })
	for _, want := range []string{"redis", "redis-sentinel", "redis-cluster"} {
		if !strings.Contains(" "+strings.Join(promoters, " ")+" ", " "+want+" ") {
			t.Errorf("services with replicas to promote %v lack %s", promoters, want)
		}
	}
	if strings.Contains(strings.Join(promoters, " "), "postgres") {
		t.Errorf("postgres has no replicas to promote: %v", promoters)
	}
	// Not replicated, the redis service is plain nodes: nothing to promote.
	if single := clusters.ServicesWhere(false, func(tp clusters.Topology) bool { _, ok := tp.(clusters.Promoter); return ok }); strings.Contains(" "+strings.Join(single, " ")+" ", " redis ") {
		t.Errorf("plain redis nodes counted as promotable: %v", single)
	}
	none := func(clusters.Topology) bool { return false }
	if got := clusters.Where(false, none); got != "" {
		t.Errorf("Where with no service = %q", got)
	}
	one := func(tp clusters.Topology) bool { _, ok := tp.(clusters.SessionKiller); return ok }
	if got := clusters.Where(false, one); !strings.HasPrefix(got, "(it applies to the ") || !strings.Contains(got, "postgres") || !strings.HasSuffix(got, " services)") {
		t.Errorf("Where = %q", got)
	}
}
