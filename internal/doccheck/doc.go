// Package doccheck holds no code, only tests that keep the manual whole:
// every relative link in README.md and docs/*.md resolves to a file of the
// repository (and, for a link to a markdown page with an anchor, to one of
// that page's headings), README.md stays under 200 lines, no tracked file
// cites notes that live outside the repository, and docs/architecture.md's
// package table has a row for every Go package whose imports cell names
// every lockcheck package it imports.
package doccheck
