// Command check is lockcheck's command line: `check run` tests a lock design
// under a nemesis, `check analyze` re-checks a stored run, `check list`
// names the lock designs and nemeses, and `check worker` is the worker
// process the controller starts (see docs/worker-protocol.md).
//
// Exit codes: 0 valid, 1 invalid, 2 unknown or not exercised, 3 error (bad input, setup
// failure), 130 interrupted.
package main
