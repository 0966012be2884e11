// Package scenarios holds named scenarios: the failure stories lockcheck
// reproduces on demand, each as the `check run` flags that tell it. A
// scenario is data, so `check list` can show it and `check run --scenario`
// expands it to flags, which the user's own flags then override.
//
// scenarios imports only the standard library and internal/suggest (the
// "did you mean" of an unknown scenario name).
package scenarios
