package clusters

import (
	"os"
	"strings"
)

// OwnerRecord returns a one-line record of this process (pid, start time
// and boot id) that OwnerGone can later test, so a resource tagged with it
// (a temporary directory, a container label) can be swept once the process
// that made it is gone, even after a SIGKILL.
func OwnerRecord() (string, error) {
	o, err := processOwner(os.Getpid())
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(o.String()), nil
}

// OwnerGone reports whether the process record names is certainly gone:
// another boot, no such pid, or the pid reused by a later process. A record
// that does not parse is not gone: whatever it tags is not ours to remove.
func OwnerGone(record string) bool {
	o, err := parseOwner(record)
	if err != nil {
		return false
	}
	return !o.alive()
}
