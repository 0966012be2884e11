package main

// mechanism is one of the short names (M1, M2, ...) that scenario and
// nemesis summaries, docs/verdicts.md and the README use for how a lock
// loses mutual exclusion; docs/concepts.md defines each in full.
type mechanism struct {
	code, what string
}

// mechanisms lists the mechanisms in order. M9 was never given.
var mechanisms = []mechanism{
	{"M1", "the lease or session ran out while its holder was stopped, cut off or slow; another took the lock and the first wrote on"},
	{"M2", "a failover promoted a replica that never received the grant"},
	{"M3", "the server's wall clock jumped and expired a held key early"},
	{"M4", "a holder whose lease ran out deleted its successor's key with a plain DEL"},
	{"M5", "a client whose clock ran fast or ahead judged a live lock expired"},
	{"M6", "a crash between SETNX and EXPIRE left a key that never expires (a stuck lock)"},
	{"M7", "the renewal watchdog stopped or fell behind while the work it protects went on"},
	{"M8", "the database ended the holder's session, and with it the lock, while the holder worked on"},
	{"M10", "sessions timed on a monotonic clock: a wall-clock jump expires nothing (why the services whose sessions run on the server stay safe)"},
}
