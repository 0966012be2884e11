// Package runner runs a test: it composes the test map (Test), starts the
// cluster and one worker process per slot, drives the workload, lets the
// nemesis loose on a seeded schedule, records the history as it happens,
// checks it, and keeps everything in the store directory.
//
// runner imports every other package; only cmd/check imports runner.
package runner
