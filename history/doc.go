// Package history holds the record of a lockcheck run: operations (Op), their
// completion types, and the JSON Lines format they are stored in.
//
// A history is append-only. Every operation a worker performs is recorded as
// an invoke, followed by exactly one completion: ok (it took effect), fail (it
// certainly did not), or info (unknown: it may take effect at any later time).
// Nemesis operations use process -1 and are recorded as invoke/info pairs.
//
// history is a leaf package: it imports only the standard library, so any
// stored history can be read and re-checked offline.
package history
