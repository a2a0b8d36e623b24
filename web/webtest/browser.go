// Package webtest drives the inspector's pages in a real headless Chromium
// (Debian's chromium, which scripts/test installs and names in
// TROUPE_TEST_CHROMIUM) with chromedp, for the web package's tests and the
// command's end-to-end ones.
package webtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"troupe/models/testenv"
)

// Step bounds one step of a browser test.
const Step = 30 * time.Second

// StartBrowser runs a headless Chromium for the test and returns the
// context of its first tab, which the test's end closes. Without a
// Chromium it fails when the test services are there (TROUPE_TEST_SERVICES=1:
// scripts/test installs it) and skips otherwise.
func StartBrowser(t *testing.T) context.Context {
	t.Helper()
	bin := os.Getenv("TROUPE_TEST_CHROMIUM")
	if bin == "" {
		bin, _ = exec.LookPath("chromium")
	}
	if bin == "" {
		if testenv.Available() {
			t.Fatal("the test services are there (TROUPE_TEST_SERVICES=1) but no Chromium: set TROUPE_TEST_CHROMIUM (scripts/test installs Debian's chromium)")
		}
		t.Skip("no Chromium: set TROUPE_TEST_CHROMIUM, or run scripts/test, which installs Debian's chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first run starts the browser; it must not carry a timeout, which
	// would end the browser with it.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx, chromedp.Navigate("about:blank")) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start Chromium (%s): %v", bin, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Chromium (%s) did not start in a minute", bin)
	}
	return ctx
}

// Run runs browser steps, each bounded, and fails the test on an error.
func Run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, Step)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// Value runs one browser action that gives a value.
func Value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, Step)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
	return v
}

// Dialogs records the JavaScript dialogs (alert, confirm, prompt) the tab
// opened, each dismissed at once so the page goes on.
type Dialogs struct {
	mu   sync.Mutex
	seen []string
}

func (d *Dialogs) List() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

// WatchDialogs starts recording the dialogs of ctx's tab.
func WatchDialogs(ctx context.Context) *Dialogs {
	d := &Dialogs{}
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			d.mu.Lock()
			d.seen = append(d.seen, string(ev.Type)+": "+ev.Message)
			d.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return d
}

// FailOnDialogs fails the test, at its end, if any JavaScript dialog
// opened in ctx's tab; its list says which so far, for checks sooner.
func FailOnDialogs(t *testing.T, ctx context.Context) *Dialogs {
	t.Helper()
	d := WatchDialogs(ctx)
	t.Cleanup(func() {
		if seen := d.List(); len(seen) > 0 {
			t.Errorf("JavaScript dialogs opened: %q", seen)
		}
	})
	return d
}

// Login logs in through the login form at base: types the token
// and submits, then waits for a page with the main navigation.
func Login(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	Run(t, ctx, "log in",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="main"]`)),
	)
}

// Screenshot saves the whole page of ctx's tab as a PNG at path.
func Screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png := Value(t, ctx, "screenshot", chromedp.FullScreenshot(100))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Open navigates to base+path and returns the main element's visible text.
func Open(t *testing.T, ctx context.Context, base, path string) string {
	t.Helper()
	Run(t, ctx, "open "+path, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS("main")))
	return Value(t, ctx, "read "+path, chromedp.Text(chromedp.CSS("main")))
}
