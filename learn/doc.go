// Package learn is lockcheck's course on distributed locks: a ladder of
// lessons, each showing one failure at a time (a SETNX lock without a TTL,
// a lease and a pause, an unlock without an owner check, fencing, a
// Sentinel failover, RedLock and a clock jump, a ZooKeeper session expiry,
// an etcd lease expiry).
//
// A Lesson is a record: the question a student answers before seeing the
// run, its choices and answer, the explanation with its sources, and the
// cell that demonstrates it (the `check run` flags and seed). Each lesson
// ships the history of a real run of its cell (recorded/<id>/), embedded
// in the binary, so that a class can replay it offline in seconds. One
// file per lesson registers it.
//
// NewTimeline turns a recorded history into what the step-through player
// draws: per client, when the lock server held the lock for it and when it
// believed it held it, the faults, and the overlaps in red. WriteHTML
// writes the whole course as static pages (inline CSS and JS, no network).
//
// learn imports history, internal/suggest and the standard library only: checking a lesson's
// history (checker) and running its cell live (runner) is cmd/check's job.
package learn
