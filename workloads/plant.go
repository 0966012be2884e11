package workloads

import "os"

// PlantEnv names the environment variable that plants a bug in `check
// worker` for a test to catch; its value names the bug (PlantIgnoreLoss).
// Unset, the worker is as shipped.
const PlantEnv = "LOCKCHECK_PLANT"

// PlantIgnoreLoss, in PlantEnv, makes the worker ignore every loss its lock
// client reports: it never asks the client whether it still holds the lock
// (Validator) before an access, so after an etcd session's lease ended, a
// ZooKeeper session was lost or RedLock's validity ran out it goes on
// writing. Its lock client's events still reach the history, so the
// windows checker classes such a holder's window "wrote after it was told".
const PlantIgnoreLoss = "ignore-loss"

// plantedIgnoreLoss reports whether this worker is planted with
// PlantIgnoreLoss.
func plantedIgnoreLoss() bool { return os.Getenv(PlantEnv) == PlantIgnoreLoss }

// PlantDropLock, in PlantEnv, makes the worker of every odd process let
// its lock go the moment it is granted (it releases it at once) and go on
// as if it held it; its release then lets nothing go. With two workers or
// more, and no fault at all, it holds the lock beside the next real holder:
// the double holder `check shrink` must cut down to no fault and two
// workers.
const PlantDropLock = "drop-lock"

// plantedDropLock reports whether process is planted with PlantDropLock.
func plantedDropLock(process int) bool {
	return os.Getenv(PlantEnv) == PlantDropLock && process%2 == 1
}
