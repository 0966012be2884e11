// Package report presents lockcheck runs to people: Write renders one run
// as report.html, a single self-contained page (verdict, anomaly stories,
// a timeline of who held the lock when, latency and throughput plots, and
// counts); Progress prints a live status line while a run is in progress;
// NewServer is the web UI of `check serve`, an index of the runs in a
// store with their files, and the stored matrices of `check matrix` as
// grids (matrix.go).
//
// Every page is one file that opens from disk with no network: CSS, the
// small zoom script and every SVG are generated inline, and no page names
// an external URL.
//
// report imports history, checker, matrix (to read stored matrices) and
// the standard library only (chromedp in tests). It reads test.json and results.json of stored runs as plain
// JSON, so it does not import runner.
package report
