// Package topofile reads the topology file of `check run --external
// FILE`: the lock servers someone else runs, by name, role and address,
// the control commands that kill, start, stop and continue them, and the
// environment variables a database login comes from. It checks what it
// can without the service (YAML shape, names, addresses, command
// placeholders, durations); the runner checks the rest against the
// design's service (its roles, its login).
//
// It imports clusters (the control words and the external config it
// fills) and sigs.k8s.io/yaml.
package topofile
