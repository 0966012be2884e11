// Package lookups counts the lookups of lockcheck's registries (a lock
// design, a workload, a lock service, a nemesis list, a cluster kind, a
// container builder) by name. A run resolves its test map once (runner.Plan)
// and reads the plan after that; the counts let a test check that no step of
// a run looks a name up again.
//
// It imports nothing of lockcheck's; every registry may import it.
package lookups

import "sync"

var (
	mu     sync.Mutex
	counts = make(map[string]int)
)

// Count records one lookup in the registry called registry.
func Count(registry string) {
	mu.Lock()
	counts[registry]++
	mu.Unlock()
}

// Counts returns how many lookups each registry has had in this process.
func Counts() map[string]int {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]int, len(counts))
	for k, v := range counts {
		out[k] = v
	}
	return out
}

// Since returns, for each registry, how many lookups it has had since
// before (a snapshot from Counts); registries with none are left out.
func Since(before map[string]int) map[string]int {
	out := make(map[string]int)
	for k, v := range Counts() {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
