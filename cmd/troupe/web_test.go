package main

import (
	"bytes"
	"context"
	"image/color"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"troupe/cards/cardstest"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/web/webtest"
)

// TestInspectorEndToEnd plays a story with `troupe chat` through the fakes
// and looks at it with `troupe web` in a real headless Chromium: the
// reply's prompt holds the recalled item with its reason, a resident line
// edited in the browser reaches the next turn's prompt, a belief deleted
// there is gone, a page updates live when a turn lands, a forgotten chat is
// gone from the pages, and a PNG card uploaded there plays. The overview
// counts the model calls by kind. With
// TROUPE_SCREENSHOTS set to a folder it saves the README's screenshots
// there.
func TestInspectorEndToEnd(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			browser := webtest.StartBrowser(t)
			webtest.FailOnDialogs(t, browser)
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Scribe{}
			fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				// /reflect forms a belief; everything else is the scribe's.
				switch {
				case memorytest.IsReflection(req):
					return openaitest.Answer{Text: memorytest.Reflection(req)}
				case memorytest.IsBeliefCheck(req):
					return openaitest.Answer{Text: `{"compatible": true, "against": []}`}
				}
				return scribe.Respond(req)
			})
			const token = "inspector-token-for-the-test"
			addr := freeAddr(t)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "error"
			vals["TROUPE_RECORDER_BATCH"] = "1"
			vals["TROUPE_RECALL_DIAGNOSTICS"] = "true"
			vals["TROUPE_WEB_TOKEN"] = token
			vals["TROUPE_WEB_LISTEN"] = addr
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			troupe := func(stdin string, args ...string) string {
				t.Helper()
				var out, errOut bytes.Buffer
				if err := run(ctx, args, strings.NewReader(stdin), &out, &errOut, testEnv(vals)); err != nil {
					t.Fatalf("troupe %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
				}
				return out.String()
			}
			chat := []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "30s"}
			// The fact is told in one chat and asked about in the next, so
			// it comes back through recall, not the transcript.
			troupe("I buried the brass compass under the old oak.\n*I wait.*\n*I wait longer.*\n/reflect\n/new\n", chat...)
			troupe("Where is the brass compass?\n", chat...)

			// troupe web over the same database.
			wctx, stopWeb := context.WithCancel(ctx)
			webDone := make(chan error, 1)
			go func() {
				var out bytes.Buffer
				webDone <- run(wctx, []string{"web"}, strings.NewReader(""), &out, &out, testEnv(vals))
			}()
			defer func() {
				stopWeb()
				if err := <-webDone; err != nil {
					t.Errorf("troupe web: %v", err)
				}
			}()
			base := "http://" + addr
			waitHTTP(t, base+"/login")
			webtest.Login(t, browser, base, token)
			shots := os.Getenv("TROUPE_SCREENSHOTS")

			// The overview lists the chat; its page shows the story.
			overview := webtest.Open(t, browser, base, "/")
			if !strings.Contains(overview, "lantern-keeper") {
				t.Fatalf("overview:\n%s", overview)
			}
			// Each troupe chat wrote its model calls by kind as it closed:
			// the four turns' replies and the memory jobs' scribe calls.
			for _, kind := range []string{"\nchat\t4\t0\t", "\nrecord\t", "\nrecap\t1\t0\t"} {
				if !strings.Contains(overview, kind) {
					t.Errorf("the overview's model traffic lacks %q:\n%s", kind, overview)
				}
			}
			chatPath := webtest.Value(t, browser, "the chat's link", chatdpAttr(`a[href^="/chat/"]`, "href"))
			page := webtest.Open(t, browser, base, chatPath)
			if !strings.Contains(page, "brass compass") {
				t.Fatalf("chat page lacks the story:\n%s", page)
			}
			if shots != "" {
				webtest.Screenshot(t, browser, filepath.Join(shots, "inspector-chat.png"))
			}

			// The last reply's prompt holds the recalled perception, with
			// why it was picked.
			replies := webtest.Value(t, browser, "the reply links", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('a[href*="/reply/"]')).map(a => a.getAttribute("href"))`))
			if len(replies) == 0 {
				t.Fatalf("no reply links on the chat page")
			}
			reply := webtest.Open(t, browser, base, replies[len(replies)-1])
			if !strings.Contains(reply, "The prompt it was built from") || !strings.Contains(reply, "brass compass under the old oak") {
				t.Fatalf("the reply's prompt lacks the recalled perception:\n%s", reply)
			}
			why := webtest.Value(t, browser, "the recalled item's reason", chromedp.Evaluate[string](`(document.querySelector("table.prompt-items tbody tr td:nth-child(3)") || {}).textContent || ""`))
			if strings.TrimSpace(why) == "" {
				t.Errorf("the prompt's recalled item has no reason:\n%s", reply)
			}
			if shots != "" {
				webtest.Screenshot(t, browser, filepath.Join(shots, "inspector-prompt.png"))
				webtest.Open(t, browser, base, "/character/console%3Alocal%3AAda/Maren")
				webtest.Screenshot(t, browser, filepath.Join(shots, "inspector-character.png"))
			}

			// A line of the resident written in the browser reaches the
			// next turn's prompt (the resident is what the prompt carries
			// of the handbook's cross-chat memory).
			webtest.Open(t, browser, base, "/memory/lantern-keeper/console%3Alocal%3AAda/edit")
			webtest.Run(t, browser, "edit the resident",
				chromedp.WaitVisible(chromedp.ID("text-resident")),
				chromedp.SendKeys(chromedp.ID("text-resident"), "\nThe spare wick is kept in the blue tin."),
				chromedp.Submit(chromedp.ID("text-resident")),
			)
			webtest.Run(t, browser, "the saved edit's page", chromedp.WaitVisible(chromedp.ID("manifest")))
			memPage := webtest.Open(t, browser, base, "/memory/lantern-keeper/console%3Alocal%3AAda")
			if !strings.Contains(memPage, "blue tin") {
				t.Fatalf("the memory page lacks the edited line:\n%s", memPage)
			}
			before := len(fake.Requests())
			troupe("Where is the spare wick?\n", chat...)
			found := false
			for _, req := range fake.Requests()[before:] {
				for _, m := range req.Messages {
					found = found || req.Stream && strings.Contains(m.Content, "blue tin")
				}
			}
			if !found {
				t.Errorf("the next turn's prompt lacks the resident line edited in the browser")
			}

			// A belief deleted in the browser, after its confirmation, is
			// gone from the character's page and from the store.
			webtest.Open(t, browser, base, "/character/console%3Alocal%3AAda/Maren")
			beliefID := webtest.Value(t, browser, "a belief's id", chromedp.Evaluate[string](`((document.querySelector('div.card[id^="belief-"]') || {}).id || "").slice(7)`))
			if beliefID == "" {
				t.Fatalf("/reflect formed no belief to delete:\n%s", webtest.Open(t, browser, base, "/character/console%3Alocal%3AAda/Maren"))
			}
			webtest.Run(t, browser, "ask to delete the belief",
				chromedp.Click(chromedp.CSS(`#belief-`+beliefID+` form[action$="/delete"] button`)),
				// The confirmation is its own page: its form carries confirm=yes.
				chromedp.WaitVisible(chromedp.CSS(`form:has(input[name="confirm"]) button`)),
				chromedp.Click(chromedp.CSS(`form:has(input[name="confirm"]) button`)),
				chromedp.WaitVisible(chromedp.ID("beliefs")),
			)
			if page := webtest.Open(t, browser, base, "/character/console%3Alocal%3AAda/Maren"); strings.Contains(page, beliefID) {
				t.Errorf("the deleted belief is still on the character's page")
			}
			if shown := troupe("", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada", "--json"); strings.Contains(shown, beliefID) {
				t.Errorf("the deleted belief %s is still in the store", beliefID)
			}

			// Live: the open chat page shows a turn that lands meanwhile.
			webtest.Open(t, browser, base, "/")
			current := webtest.Value(t, browser, "the current chat", chatdpAttr(`a[href^="/chat/"]`, "href"))
			webtest.Open(t, browser, base, current)
			troupe("The gulls are loud tonight.\n", chat...)
			webtest.Value(t, browser, "see the new turn without reloading",
				chromedp.Poll[bool](`document.querySelector("main").textContent.includes("The gulls are loud tonight.")`, chromedp.WithPollingTimeout(20*time.Second)))

			// Forget the chat the fact was told in: it and its words are
			// gone from every page.
			webtest.Open(t, browser, base, "/")
			links := webtest.Value(t, browser, "the chat links", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('a[href^="/chat/"]')).map(a => a.getAttribute("href"))`))
			chatPath = ""
			for _, l := range links {
				if strings.Contains(webtest.Open(t, browser, base, l), "I buried the brass compass") {
					chatPath = l
				}
			}
			if chatPath == "" {
				t.Fatalf("no chat page shows the first story among %q", links)
			}
			first := strings.TrimPrefix(chatPath, "/chat/")
			webtest.Open(t, browser, base, chatPath+"/forget")
			webtest.Run(t, browser, "confirm the forget", chromedp.Submit(chromedp.CSS(`form[action$="/forget"] button`)))
			webtest.Run(t, browser, "the overview after the forget", chromedp.WaitVisible(chromedp.ID("spaces")))
			// The manifest names a forgotten chat (its id, no words) until
			// the consolidation the forget queued runs: troupe web's worker
			// runs it.
			for _, path := range []string{"/", "/memory/lantern-keeper/console%3Alocal%3AAda", "/search?space=console%3Alocal%3AAda&q=compass"} {
				text := webtest.Open(t, browser, base, path)
				for wait := time.Now().Add(30 * time.Second); strings.Contains(text, first) && !strings.Contains(text, "old oak") && time.Now().Before(wait); {
					time.Sleep(500 * time.Millisecond)
					text = webtest.Open(t, browser, base, path)
				}
				if strings.Contains(text, first) || strings.Contains(text, "old oak") {
					t.Errorf("%s still shows the forgotten chat:\n%s", path, text)
				}
			}
			if text := webtest.Open(t, browser, base, chatPath); !regexp.MustCompile(`404|Nothing here`).MatchString(text) {
				t.Errorf("the forgotten chat's page: %s", text)
			}

			// A PNG card uploaded through the browser plays.
			tea, err := os.ReadFile(filepath.Join("..", "..", "examples", "cards", "tea-house.json"))
			if err != nil {
				t.Fatal(err)
			}
			png := filepath.Join(t.TempDir(), "Tea House.png")
			if err := os.WriteFile(png, cardstest.PNG(t, cardstest.Picture(t, 8, 8, color.RGBA{R: 200, A: 255}), cardstest.CardChunk("chara", string(tea))), 0o644); err != nil {
				t.Fatal(err)
			}
			webtest.Open(t, browser, base, "/cards")
			webtest.Run(t, browser, "upload the PNG card",
				chromedp.SendKeys(chromedp.ID("card-file"), png),
				chromedp.Click(chromedp.CSS(`form.upload button[type="submit"]`)),
				chromedp.WaitVisible(chromedp.CSS(`.notice`)),
			)
			uploaded, err := filepath.Glob(filepath.Join(vals["TROUPE_CARDS_DIR"], "*.png"))
			if err != nil || len(uploaded) != 1 {
				t.Fatalf("the upload wrote %q (%v), want one PNG in the card folder", uploaded, err)
			}
			before = len(fake.Requests())
			troupe("掌柜的，来一壶茶。\n", "chat", "--card", uploaded[0], "--user", "Ada", "--drain-timeout", "30s")
			played := false
			for _, req := range fake.Requests()[before:] {
				played = played || req.Stream && len(req.Messages) > 0 && strings.Contains(req.Messages[0].Content, "半盏茶馆")
			}
			if !played {
				t.Errorf("no turn was played with the uploaded card's description")
			}
		})
	}
}

// chatdpAttr reads an attribute of the first element matching sel.
func chatdpAttr(sel, attr string) chromedp.Action[string] {
	return chromedp.Evaluate[string](`(document.querySelector(` + jsString(sel) + `) || {getAttribute: () => ""}).getAttribute(` + jsString(attr) + `) || ""`)
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// waitHTTP waits until url answers.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer in 30 s", url)
}
