package workloads

import (
	"sort"

	"github.com/lockcheck/lockcheck/internal/lookups"
	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Workload is what a critical section does with the protected resource
// (--workload), with what the controller and the checkers need to know of
// it. Each workload registers itself from its own file; no code compares
// workload names.
type Workload struct {
	// Name is the --workload value.
	Name string
	// Summary is the one line `check list` prints.
	Summary string
	// Listed marks a workload that only the designs listing it in
	// Design.Workloads run (it needs something of the lock itself, such as
	// its database transaction).
	Listed bool
	// InLock keeps the register in the lock's own transaction: the lock
	// fences it by itself, so the run is judged as a fenced one, and
	// --fencing (tokens for the external storage node) has nothing to do.
	InLock bool
	// Stock makes the resource a stock: the controller seeds every key's
	// stock before the workers start and reads it after they stop, and
	// the inventory checker compares the two (--stock, DefaultStock).
	Stock bool
	// Named puts the workload's name in a test's default name.
	Named bool
}

// DefaultStock is the initial stock per key of a Stock workload when
// --stock is not given.
const DefaultStock = 100

// workloadList holds the registered workloads; each workload's file adds
// its own from init, and nothing changes it afterwards.
var workloadList []Workload

// registerWorkload adds a workload to Workloads.
func registerWorkload(w Workload) { workloadList = append(workloadList, w) }

func init() {
	registerWorkload(Workload{Name: WorkloadRegister,
		Summary: "read the register on the storage node, think, write read+1 (the default)"})
	registerWorkload(Workload{Name: WorkloadInventory, Stock: true, Named: true,
		Summary: "sell one item of a stock on the storage node"})
}

// Workloads returns every known workload, the default (register) first and
// the others by name.
func Workloads() []Workload {
	out := append([]Workload(nil), workloadList...)
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Name == WorkloadRegister) != (out[j].Name == WorkloadRegister) {
			return out[i].Name == WorkloadRegister
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// FindWorkload returns the workload called name ("" is the register), or
// an error listing the known workloads.
func FindWorkload(name string) (Workload, error) {
	lookups.Count("workload")
	return findWorkload(name)
}

// findWorkload is FindWorkload without the count, for the worker side.
func findWorkload(name string) (Workload, error) {
	if name == "" {
		name = WorkloadRegister
	}
	var names []string
	for _, w := range Workloads() {
		if w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return Workload{}, suggest.Unknown("workload", name, names)
}

// Runs reports whether d runs workload w.
func (d Design) Runs(w Workload) bool {
	if len(d.Workloads) == 0 {
		return !w.Listed
	}
	for _, x := range d.Workloads {
		if x == w.Name {
			return true
		}
	}
	return false
}

// DesignsRunning returns the names of the designs that run w.
func DesignsRunning(w Workload) []string {
	var names []string
	for _, d := range Designs() {
		if d.Runs(w) {
			names = append(names, d.Name)
		}
	}
	return names
}
