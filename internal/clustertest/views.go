package clustertest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// AwaitViews waits up to wait until, for every node n, view(n) (the nodes
// n no longer reaches, as n itself says, sorted) is want[n], and returns
// what the nodes said last.
func AwaitViews(ctx context.Context, wait time.Duration, nodes []string, view func(n string) ([]string, error),
	want map[string][]string) (map[string][]string, error) {
	got := make(map[string][]string)
	err := clusters.Poll(ctx, wait, func() error {
		for _, n := range nodes {
			v, err := view(n)
			if err != nil {
				return err
			}
			got[n] = v
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			return fmt.Errorf("views %v, want %v", got, want)
		}
		return nil
	}, "the servers' views")
	return got, err
}

// AllReach is the view of nodes that all reach one another.
func AllReach(nodes []string) map[string][]string {
	none := make(map[string][]string)
	for _, n := range nodes {
		none[n] = nil
	}
	return none
}
