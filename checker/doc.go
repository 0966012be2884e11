// Package checker decides, from a recorded history alone, whether a lock
// provided mutual exclusion, and explains every violation it finds in plain
// English.
//
// A Checker reads a history.History and returns a Result whose Valid is
// Valid, Unknown or Invalid. Unknown is never a pass: it means a check could
// not finish (a Porcupine timeout, a malformed history, a cancelled context).
// Checkers compose by priority (Valid < Unknown < Invalid) with Compose; a
// checker that panics becomes Unknown. Advisory wraps a checker whose result
// is reported but does not decide the verdict.
//
// The built-in checkers, all assembled by Default:
//
//   - mutex: is there an order of acquire, release and crash, each at an
//     instant in its real interval, that fits an owner-aware mutex? Per
//     lock key; decided directly where the history has a lock client's
//     shape, by Porcupine elsewhere.
//   - resource: the same question for the critical sections' read-modify-
//     write on the protected register, plus a direct scan that names lost
//     updates.
//   - inventory: for inventory histories (with seed ops), instead of
//     resource: sales against the seeded stock (oversold items) and the
//     final stock against stock minus sales (lost decrements), naming the
//     sales that read the same stock.
//   - fencing: fencing tokens increase in grant order and no write with a
//     stale token was accepted; refused stale writes are reported as fenced.
//   - overlap: a sweep over hold intervals that names every double holder
//     and every release that deleted another holder's key.
//   - liveness: at least one grant, and no lock left free but ungranted for
//     longer than a bound while acquires failed.
//   - stats: counts and latencies; always valid.
//   - exercise: whether a faulted run's faults could have produced the
//     anomaly it looks for (a pause longer than the lease of a holder, a
//     clock jump where a lock was held, ...: one rule per nemesis kind); a
//     run whose faults all missed is Unknown with Result.NotExercised set,
//     never Valid. A run with no faults is exempt.
//
// Watch is the double-holder and stale-write sweeps made incremental: it
// takes the ops one by one as they are recorded, so a controller can stop a
// run at its first anomaly.
//
// With Options.NoLock (a design that takes no lock) mutex and overlap are
// left out: such a design is judged by what it did to the resource.
//
// Checking scales with the run. Lock histories carry structure that fixes
// most of the order: every grant has one owner, and the part of a hold from
// its acquire's return to its release's invocation is certainly held, so on
// a key where each process acquires, releases, acquires ... (and an op in
// doubt is its process's last, as the controller's retirement makes it),
// the mutex model holds iff no two such certain parts overlap: one sort,
// O(n log n), with no search (lockorder.go). Likewise every accepted
// critical section writes more than it read, so the register's values fix
// the order of the critical sections (regorder.go). Only keys of another
// shape (third-party histories whose processes go on after an op in doubt,
// or release what they never acquired) are searched by Porcupine, cut at
// instants where no operation is in flight and the model state is known,
// always within Options.Timeout; a search that does not finish is Unknown,
// never Valid.
//
// checker imports only history, porcupine and the standard library, so any
// stored history can be re-checked offline.
package checker
