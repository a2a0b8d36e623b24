package web_test

import (
	"bytes"
	"context"
	"image/color"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/cards"
	"troupe/cards/cardstest"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/web"
)

const evilName = `<img src=x onerror=alert(1)>`

// evilCard is a V2 card JSON named evilName, with a lore entry keyed by
// a script.
const evilCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"<img src=x onerror=alert(1)>",
"description":"a trap","first_mes":"<script>alert(3)</script>",
"character_book":{"entries":[{"id":7,"keys":["<script>alert(4)</script>"],"content":"<b>bold</b> lore","enabled":true}]}}}`

// cardFolder is a card folder with the project's own cards (one file of
// it a world-info file, which does not load as a card), their world, and
// a card named evilName; and its library.
func cardFolder(t *testing.T) (string, *cards.Library) {
	t.Helper()
	files := cardstest.OwnFiles(t)
	dir := filepath.Dir(files[0])
	if err := os.WriteFile(filepath.Join(dir, "evil.json"), []byte(evilCard), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := cards.LoadLibrary(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return dir, lib
}

// folderFiles lists every file under dir, relative.
func folderFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// upload posts a file to /cards/upload as a browser's form does.
func (b *browser) upload(name string, data []byte, fields map[string]string) (*http.Response, string) {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		b.t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	resp, err := b.c.Post(b.base+"/cards/upload", mw.FormDataContentType(), &body)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

// TestCardsPageListsTheLibrary: the library with each card's id, file and
// export link, the file that did not load and why, the worlds; a card's
// page with its own and its world's lore entries and keys; a card named
// like markup shows as text.
func TestCardsPageListsTheLibrary(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir, lib := cardFolder(t)
			st := testenv.OpenStore(t, b)
			_, ts := inspector(t, b, web.Options{Store: st, Cards: lib, CardsDir: dir})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			resp, body := br.get("/cards")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /cards: %d\n%s", resp.StatusCode, body)
			}
			for _, want := range []string{
				`<a href="/cards/own-v2">Wren</a>`, `href="/cards/own-chara/export"`, ">own.charx<", ">own-v3.json<",
				"own-harbor-worldinfo.json", "a world-info file (entries and no name)", // did not load, and why
				"<td>Harbor</td>", // the world
				`action="/cards/upload"`, `enctype="multipart/form-data"`, `name="csrf"`, "restart it",
				"&lt;img src=x onerror=alert(1)&gt;",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the cards page lacks %q", want)
				}
			}
			if strings.Contains(body, evilName) {
				t.Errorf("the card's name is in the page unescaped")
			}

			resp, body = br.get("/cards/own-v2")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /cards/own-v2: %d\n%s", resp.StatusCode, body)
			}
			for _, want := range []string{
				"The card&#39;s own lorebook", "<code>market</code>", "The fish market opens at four.", // the card's book
				"World Harbor", "<code>quay</code>, <code>pier</code>", "floods at spring tide", // its world's
				"No kept prompt of this card held a lore entry",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the card's page lacks %q", want)
				}
			}
			// Two replies kept their prompts: the market entry fired in
			// both, the world's quay entry in the newer one.
			s := seedStory(t, st, "console:local:lore", "console:lore", "to the market")
			market := models.PromptLore{Book: "Wren", UID: "3", Comment: "the " + xssImg + " market", Tokens: 12}
			quay := models.PromptLore{Book: "Harbor", UID: "9", Comment: "quay", Tokens: 20}
			head, err := st.Chat(context.Background(), s.Chat.ID)
			if err != nil {
				t.Fatal(err)
			}
			for i, lore := range [][]models.PromptLore{{market}, {market, quay, market}} {
				tr := models.PromptTrace{MessageID: models.NewID(), ChatID: s.Chat.ID, CardID: "own-v2", SpaceID: s.Chat.SpaceID, Character: "Wren", Lore: lore}
				if i == 1 {
					// The newer trace is the chat's last message's, so its
					// page shows it.
					tr.MessageID = head.HeadID
				}
				if err := st.RecordPromptTrace(context.Background(), models.PromptTraceWrite{Trace: tr, Keep: 10}); err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					fired, err := st.LoreFired(context.Background(), "own-v2", 200)
					if err != nil {
						t.Fatal(err)
					}
					if len(fired) != 2 || fired[0].UID != "3" || fired[0].Turns != 2 || fired[1].UID != "9" || fired[1].Turns != 1 || fired[1].LastReply != tr.MessageID {
						t.Errorf("lore fired = %+v, want the market entry in 2 turns, then the quay entry in the last", fired)
					}
				}
			}
			_, body = br.get("/cards/own-v2")
			for _, want := range []string{`id="lore-fired"`, "the &lt;img src=x onerror=alert(1)&gt; market", "<td>Harbor</td><td>1</td><td>20</td>", "<td>Wren</td><td>2</td><td>12</td>", `href="/chat/` + s.Chat.ID + `/reply/`} {
				if !strings.Contains(body, want) {
					t.Errorf("the card's page, after two traced turns, lacks %q", want)
				}
			}
			_, body = br.get("/chat/" + s.Chat.ID + "/reply/" + head.HeadID)
			for _, want := range []string{"Lore entries in the prompt", "the &lt;img src=x onerror=alert(1)&gt; market", "<td>Harbor</td><td>20</td>"} {
				if !strings.Contains(body, want) {
					t.Errorf("the reply's page lacks %q", want)
				}
			}
			_, body = br.get("/cards/evil")
			for _, want := range []string{"&lt;img src=x onerror=alert(1)&gt;", "<code>&lt;script&gt;alert(4)&lt;/script&gt;</code>", "&lt;b&gt;bold&lt;/b&gt; lore"} {
				if !strings.Contains(body, want) {
					t.Errorf("the evil card's page lacks %q", want)
				}
			}
			if strings.Contains(body, evilName) || strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>bold") {
				t.Errorf("the evil card's page holds its markup unescaped")
			}
			if resp, _ := br.get("/cards/no-such-card"); resp.StatusCode != http.StatusNotFound {
				t.Errorf("an unknown card: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// TestCardUploadAndExport: a PNG card uploaded through the form lands in
// the card folder under its id and is listed; a world file goes into the
// worlds folder; export gives back the file's bytes; garbage is refused
// with why and nothing written.
func TestCardUploadAndExport(t *testing.T) {
	b := testenv.Backends(t)[0]
	dir, lib := cardFolder(t)
	_, ts := inspector(t, b, web.Options{Cards: lib, CardsDir: dir})
	br := newBrowser(t, ts.URL)
	br.login(fullToken)
	csrf := br.csrf()

	keeper, err := os.ReadFile(filepath.Join("..", "examples", "cards", "lantern-keeper.json"))
	if err != nil {
		t.Fatal(err)
	}
	png := cardstest.PNG(t, cardstest.Picture(t, 8, 8, color.RGBA{G: 120, A: 255}), cardstest.CardChunk("chara", string(keeper)))

	before := folderFiles(t, dir)
	for _, bad := range []struct{ name, data string }{
		{"junk.png", "not a card at all"},
		{"list.json", `[1, 2, 3]`},
	} {
		resp, body := br.upload(bad.name, []byte(bad.data), map[string]string{"csrf": csrf})
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, bad.name+" was not imported: ") {
			t.Errorf("upload %s: %d, want 422 with why\n%s", bad.name, resp.StatusCode, body)
		}
		if strings.Contains(body, "troupe-upload-") {
			t.Errorf("upload %s: the error names the temporary file", bad.name)
		}
		if after := folderFiles(t, dir); !slices.Equal(after, before) {
			t.Errorf("upload %s wrote into the card folder: %v, was %v", bad.name, after, before)
		}
	}
	if resp, _ := br.upload("x.png", png, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("upload without CSRF: %d, want 403", resp.StatusCode)
	}

	resp, body := br.upload(`C:\cards\Lantern Keeper.png`, png, map[string]string{"csrf": csrf})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/cards?card=lantern-keeper" {
		t.Fatalf("upload the card: %d to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	got, err := os.ReadFile(filepath.Join(dir, "lantern-keeper.png"))
	if err != nil || !bytes.Equal(got, png) {
		t.Fatalf("the card folder's lantern-keeper.png: %v, same bytes %v", err, bytes.Equal(got, png))
	}
	_, body = br.get("/cards?card=lantern-keeper")
	if !strings.Contains(body, "Imported the card Maren (id lantern-keeper)") || !strings.Contains(body, `<a href="/cards/lantern-keeper">Maren</a>`) {
		t.Errorf("the uploaded card is not listed:\n%s", body)
	}
	// The same file again is a no-op; another card under its id is refused.
	if resp, _ := br.upload("lantern-keeper.png", png, map[string]string{"csrf": csrf}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the same card again: %d", resp.StatusCode)
	}
	other := cardstest.PNG(t, cardstest.Picture(t, 8, 8, color.RGBA{B: 120, A: 255}), cardstest.CardChunk("chara", string(cardstest.Own(t, "v2.json"))))
	if resp, body := br.upload("lantern-keeper.png", other, map[string]string{"csrf": csrf}); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "is taken by") {
		t.Errorf("another card under a taken id: %d\n%s", resp.StatusCode, body)
	}

	// A world-info file goes into the worlds folder, named as asked.
	world := cardstest.Own(t, "worlds/Harbor.json")
	resp, _ = br.upload("harbor.json", world, map[string]string{"csrf": csrf, "as": "Tides"})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/cards?world=Tides" {
		t.Errorf("upload a world: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := os.Stat(filepath.Join(dir, "worlds", "Tides.json")); err != nil {
		t.Errorf("the world was not written: %v", err)
	}
	if _, body := br.get("/cards?world=Tides"); !strings.Contains(body, "Imported the world Tides") || !strings.Contains(body, "<td>Tides</td>") {
		t.Errorf("the uploaded world is not listed")
	}

	resp, body = br.get("/cards/lantern-keeper/export")
	if resp.StatusCode != http.StatusOK || body != string(png) {
		t.Fatalf("export: %d, %d bytes, same as uploaded %v", resp.StatusCode, len(body), body == string(png))
	}
	if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); ct != "image/png" || cd != `attachment; filename=lantern-keeper.png` {
		t.Errorf("export headers: Content-Type %q, Content-Disposition %q", ct, cd)
	}
	resp, body = br.get("/cards/own-v3/export")
	if want := string(cardstest.Own(t, "v3.json")); resp.StatusCode != http.StatusOK || body != want || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("export a JSON card: %d %q, same bytes %v", resp.StatusCode, resp.Header.Get("Content-Type"), body == want)
	}
	if resp, _ := br.get("/cards/no-such-card/export"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("export an unknown card: %d", resp.StatusCode)
	}
}

// TestCardUploadRefusals: a read-only session sees no upload form and may
// not upload; a form over the size limit is refused whole; with no card
// folder uploads are off.
func TestCardUploadRefusals(t *testing.T) {
	b := testenv.Backends(t)[0]
	dir, lib := cardFolder(t)
	_, ts := inspector(t, b, web.Options{Cards: lib, CardsDir: dir})
	before := folderFiles(t, dir)

	ro := newBrowser(t, ts.URL)
	ro.login(roToken)
	_, body := ro.get("/cards")
	if strings.Contains(body, `action="/cards/upload"`) || !strings.Contains(body, "may only look") {
		t.Errorf("a read-only session is shown the upload form")
	}
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no CSRF field on the read-only page")
	}
	if resp, _ := ro.upload("own-v3.json", cardstest.Own(t, "v3.json"), map[string]string{"csrf": m[1]}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a read-only upload: %d, want 403", resp.StatusCode)
	}

	br := newBrowser(t, ts.URL)
	br.login(fullToken)
	huge := bytes.Repeat([]byte("x"), 33<<20)
	if resp, _ := br.upload("huge.json", huge, map[string]string{"csrf": br.csrf()}); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 33 MB upload: %d, want 413", resp.StatusCode)
	}
	if after := folderFiles(t, dir); !slices.Equal(after, before) {
		t.Errorf("refused uploads wrote into the card folder: %v", after)
	}

	_, ts2 := inspector(t, b, web.Options{Cards: lib})
	br2 := newBrowser(t, ts2.URL)
	br2.login(fullToken)
	if _, body := br2.get("/cards"); strings.Contains(body, `action="/cards/upload"`) || !strings.Contains(body, "Uploads are off") {
		t.Errorf("without a card folder the upload form is shown")
	}
	if resp, _ := br2.upload("own-v3.json", cardstest.Own(t, "v3.json"), map[string]string{"csrf": br2.csrf()}); resp.StatusCode != http.StatusConflict {
		t.Errorf("an upload without a card folder: %d, want 409", resp.StatusCode)
	}
}
