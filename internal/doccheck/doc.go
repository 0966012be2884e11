// Package doccheck holds no code, only a test that keeps the manual whole:
// every relative link in README.md and docs/*.md resolves to a file of the
// repository (and, for a link to a markdown page with an anchor, to one of
// that page's headings), README.md stays under 200 lines, and no tracked
// file cites notes that live outside the repository.
package doccheck
