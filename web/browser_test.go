package web_test

import (
	"context"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"troupe/cards"
	"troupe/cards/cardstest"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/web"
	"troupe/web/webtest"
)

// The browser harness lives in web/webtest (the command's end-to-end tests
// use it too); these are its short names here.

const browserStep = webtest.Step

func startBrowser(t *testing.T) context.Context { t.Helper(); return webtest.StartBrowser(t) }

func browserRun(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	webtest.Run(t, ctx, what, steps...)
}

func browserValue[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	return webtest.Value(t, ctx, what, a)
}

func watchDialogs(ctx context.Context) *webtest.Dialogs { return webtest.WatchDialogs(ctx) }

func failOnDialogs(t *testing.T, ctx context.Context) *webtest.Dialogs {
	t.Helper()
	return webtest.FailOnDialogs(t, ctx)
}

func browserLogin(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	webtest.Login(t, ctx, base, token)
}

func saveScreenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	webtest.Screenshot(t, ctx, path)
}

func browserOpen(t *testing.T, ctx context.Context, base, path string) string {
	t.Helper()
	return webtest.Open(t, ctx, base, path)
}

// TestBrowserHarnessSeesDialogs: the dialog watch the security tests rely
// on does see an alert, and dismisses it so the page goes on.
func TestBrowserHarnessSeesDialogs(t *testing.T) {
	ctx := startBrowser(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><p id="after">before</p><script>alert("harness"); document.getElementById("after").textContent = "after";</script>`))
	}))
	defer ts.Close()
	d := watchDialogs(ctx)
	browserRun(t, ctx, "open the alerting page", chromedp.Navigate(ts.URL), chromedp.WaitVisible(chromedp.ID("after")))
	deadline := time.Now().Add(10 * time.Second)
	for len(d.List()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := d.List(); !slices.Equal(got, []string{"alert: harness"}) {
		t.Errorf("dialogs seen: %q, want the one alert", got)
	}
	sctx, cancel := context.WithTimeout(ctx, browserStep)
	defer cancel()
	if _, err := chromedp.Run(sctx, chromedp.Poll[bool](`document.getElementById("after").textContent === "after"`)); err != nil {
		t.Errorf("the page did not go on after the dialog: %v", err)
	}
}

// TestBrowserLogin: the login form opens a session with the token; a
// wrong token shows why and opens none.
func TestBrowserLogin(t *testing.T) {
	ctx := startBrowser(t)
	failOnDialogs(t, ctx)
	b := testenv.Backends(t)[0]
	_, ts := inspector(t, b, web.Options{})

	browserRun(t, ctx, "wrong token",
		chromedp.Navigate(ts.URL+"/cards"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "not-the-token-at-all"),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS(`.problem[role="alert"]`)),
	)
	if msg := browserValue(t, ctx, "read the error", chromedp.Text(chromedp.CSS(".problem"))); !strings.Contains(msg, "That is not the token.") {
		t.Errorf("wrong token shows %q", msg)
	}
	if text := browserValue(t, ctx, "read the page", chromedp.Text(chromedp.CSS("body"))); strings.Contains(text, "Log out") {
		t.Errorf("a wrong token opened a session")
	}

	// The right token, from a page asked for before logging in: back there.
	browserRun(t, ctx, "log in",
		chromedp.Navigate(ts.URL+"/cards"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), fullToken),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="main"]`)),
	)
	if loc := browserValue(t, ctx, "location", chromedp.Location()); loc != ts.URL+"/cards" {
		t.Errorf("after login the browser is at %q, want the page it asked for", loc)
	}
	if h1 := browserValue(t, ctx, "read the title", chromedp.Text(chromedp.CSS("h1"))); h1 != "Cards" {
		t.Errorf("after login the page says %q", h1)
	}
	// The session cookie is HttpOnly: the page's script cannot read it.
	if c := browserValue(t, ctx, "read cookies", chromedp.Evaluate[string](`document.cookie`)); strings.Contains(c, "troupe_session") {
		t.Errorf("the page's script reads the session cookie: %q", c)
	}
}

// TestBrowserMarkupRendersAsText: a card and a chat named like markup that
// runs script, and a reply holding a script, show as text in Chromium on
// the overview and the cards pages: no dialog fires and no element is made
// of them.
func TestBrowserMarkupRendersAsText(t *testing.T) {
	ctx := startBrowser(t)
	failOnDialogs(t, ctx)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := testenv.OpenStore(t, b)
			bg := context.Background()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(st.EnsureSpace(bg, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}))
			_, err := st.EnsureChannel(bg, models.Channel{ID: "ch-evil", Platform: "console", ExternalID: "ch-evil", SpaceID: "console:local:ada"})
			must(err)
			must(st.UpsertCard(bg, models.Card{ID: "evil", Name: evilName, Data: "{}"}))
			chat, err := st.StartChat(bg, "ch-evil", "evil", "console:local:ada", evilName, &models.Message{Role: "assistant", Content: "greeting"})
			must(err)
			user := &models.Message{Role: "user", Content: "hello"}
			reply := &models.Message{Role: "assistant", Content: "<script>alert(2)</script>", SpeakerCardID: "evil"}
			must(st.Append(bg, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{user}))
			must(st.Append(bg, chat.ID, user.ID, user.ID, []*models.Message{reply}))

			dir, _ := cardFolder(t)
			// A file that does not load, named like markup too.
			must(os.WriteFile(filepath.Join(dir, evilName+".json"), []byte(`{"oops`), 0o644))
			lib, err := cards.LoadLibrary(dir, "")
			must(err)
			_, ts := inspector(t, b, web.Options{Store: st, Cards: lib, CardsDir: dir})
			browserLogin(t, ctx, ts.URL, fullToken)

			noMarkup := func(path string) {
				t.Helper()
				if n := browserValue(t, ctx, "count images", chromedp.Evaluate[int](`document.images.length`)); n != 0 {
					t.Errorf("%s: %d <img> elements made of seeded text", path, n)
				}
				if n := browserValue(t, ctx, "count scripts", chromedp.Evaluate[int](`document.scripts.length`)); n != 1 {
					t.Errorf("%s: %d <script> elements, want only app.js", path, n)
				}
			}
			text := browserOpen(t, ctx, ts.URL, "/")
			if !strings.Contains(text, evilName) {
				t.Errorf("the overview does not show the chat's name as text:\n%s", text)
			}
			noMarkup("/")
			text = browserOpen(t, ctx, ts.URL, "/cards")
			if !strings.Contains(text, evilName) || !strings.Contains(text, evilName+".json") {
				t.Errorf("the cards page does not show the card's name and the failed file as text:\n%s", text)
			}
			noMarkup("/cards")
			text = browserOpen(t, ctx, ts.URL, "/cards/evil")
			if !strings.Contains(text, evilName) || !strings.Contains(text, "<script>alert(4)</script>") {
				t.Errorf("the card's page does not show its name and lore key as text:\n%s", text)
			}
			noMarkup("/cards/evil")
			// The chat page, once there is one, shows the reply as text.
			text = browserOpen(t, ctx, ts.URL, "/chat/"+chat.ID)
			if !strings.Contains(text, "Nothing here") && !strings.Contains(text, "<script>alert(2)</script>") {
				t.Errorf("the chat page does not show the reply as text:\n%s", text)
			}
			noMarkup("/chat/" + chat.ID)
		})
	}
}

// TestBrowserUploadCard: a PNG card chosen in the upload form's file input
// and sent lands in the card folder and is listed; a file that is no card
// shows why on the page.
func TestBrowserUploadCard(t *testing.T) {
	ctx := startBrowser(t)
	failOnDialogs(t, ctx)
	b := testenv.Backends(t)[0]
	dir, lib := cardFolder(t)
	_, ts := inspector(t, b, web.Options{Cards: lib, CardsDir: dir})
	keeper, err := os.ReadFile(filepath.Join("..", "examples", "cards", "lantern-keeper.json"))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	card := filepath.Join(src, "Lantern Keeper.png")
	junk := filepath.Join(src, "junk.png")
	if err := os.WriteFile(card, cardstest.PNG(t, cardstest.Picture(t, 8, 8, color.RGBA{G: 120, A: 255}), cardstest.CardChunk("chara", string(keeper))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("no card"), 0o644); err != nil {
		t.Fatal(err)
	}
	browserLogin(t, ctx, ts.URL, fullToken)

	upload := func(file, wait string) string {
		browserRun(t, ctx, "upload "+filepath.Base(file),
			chromedp.Navigate(ts.URL+"/cards"),
			chromedp.SendKeys(chromedp.ID("card-file"), file),
			chromedp.Click(chromedp.CSS(`form.upload button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(wait)),
		)
		return browserValue(t, ctx, "read the page", chromedp.Text(chromedp.CSS("main")))
	}
	text := upload(junk, `.problem[role="alert"]`)
	if !strings.Contains(text, "junk.png was not imported") {
		t.Errorf("a junk upload shows:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "junk.png")); err == nil {
		t.Errorf("the junk file was written")
	}
	text = upload(card, `.notice`)
	if !strings.Contains(text, "Imported the card Maren (id lantern-keeper)") {
		t.Errorf("the card upload shows:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "lantern-keeper.png")); err != nil {
		t.Errorf("the card was not written: %v", err)
	}
	if shots := os.Getenv("TROUPE_SCREENSHOTS"); shots != "" {
		saveScreenshot(t, ctx, filepath.Join(shots, "cards.png"))
	}
}
