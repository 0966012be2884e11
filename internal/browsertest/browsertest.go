// Package browsertest starts Debian's headless Chromium for the tests that
// drive a page (chromedp), and skips them, saying why, where it is not
// installed.
//
// It imports chromedp and the standard library only.
package browsertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's Chromium, which scripts/deps.sh installs
// (its browser group).
const ChromiumPath = "/usr/bin/chromium"

// Start starts a headless Chromium with its own profile in a temporary
// directory and returns a context for chromedp actions on its first tab,
// bounded by limit (a bound on events, to be generous on a loaded
// machine), and skips tb when Chromium is not installed. The browser is
// stopped when tb ends.
func Start(tb testing.TB, limit time.Duration) context.Context {
	tb.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		tb.Skipf("%s is missing (%v): install Debian's chromium (scripts/deps.sh browser, or apt-get install chromium) to run this browser test", ChromiumPath, err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(tb.TempDir()),
		// Chromium keeps its singleton socket in a directory of its own
		// under TMPDIR and leaves it there: give it one the test removes.
		chromedp.Env("TMPDIR="+tb.TempDir()),
	)
	tb.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	tb.Cleanup(cancelCtx)
	if err := chromedp.Do(ctx); err != nil { // start the browser (no timeout on this first call)
		tb.Fatalf("start %s: %v", ChromiumPath, err)
	}
	tctx, cancel := context.WithTimeout(ctx, limit)
	tb.Cleanup(cancel)
	return tctx
}
