// Package containers builds the topologies of lockcheck's lock services
// from Docker containers (`check run --cluster docker`) instead of local
// processes: the same lock nodes and storage node, started from the images
// `make images` builds (lockcheck/redis, lockcheck/zookeeper) through
// testcontainers-go, on private networks with their ports published on
// 127.0.0.1 only. Workers stay local processes and reach the lock nodes
// through the same in-process Toxiproxy proxies as a local topology
// (clusters.Proxies), so client partitions are unchanged; server faults
// map to the engine: a pause is `docker pause` (the cgroup freezer), a kill
// is a container kill and start, a peer partition disconnects a container
// from its peer network, and a clock jump moves the clock shim inside the
// image through a bind-mounted offset file.
//
// Every container and network carries the labels org.lockcheck.run (the
// run id) and org.lockcheck.owner (the owning process, see
// clusters.OwnerRecord). Teardown removes what a run started; Look, before
// every run, removes what runs whose process is gone left behind, and never
// anything without those labels.
//
// It is the toolkit of the container forms, not their home: each service's
// container topology lives in the service's own folder (services/redis,
// services/zookeeper), embeds Stack and registers itself there
// (the Container field of its clusters.Service); the storage node's container comes from
// the package that registers it (RegisterStorage). It names no service.
// Ryuk, testcontainers' reaper, is disabled
// (its image cannot be pulled here): the labels do its job.
//
// containers may import clusters and history; it must not import checker,
// workloads, runner or a service's package.
package containers
