package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"troupe/belief"
	"troupe/config"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/web"
)

// story is a chat seeded through the real store: its turns recorded, one
// perception of Maren per turn.
type story struct {
	Chat        models.Chat
	Perceptions []string
}

// seedStory starts a chat of card maren in space and records one turn per
// line, each perceived by Maren with the line's text.
func seedStory(t testing.TB, st *models.Store, space, channel string, lines ...string) story {
	t.Helper()
	ctx := context.Background()
	if err := st.EnsureSpace(ctx, models.Space{ID: space, Platform: "console", Kind: "local", ExternalID: strings.ReplaceAll(space, ":", "-")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureChannel(ctx, models.Channel{ID: channel, Platform: "console", ExternalID: channel, SpaceID: space}); err != nil {
		t.Fatal(err)
	}
	if err := st.UpsertCard(ctx, models.Card{ID: "maren", Name: "Maren", Data: "{}"}); err != nil {
		t.Fatal(err)
	}
	chat, err := st.StartChat(ctx, channel, "maren", space, "The "+xssImg+" tavern", &models.Message{Role: "assistant", Content: "greeting"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append(append([]string(nil), lines...), "later") {
		chat, err = st.Chat(ctx, chat.ID)
		if err != nil {
			t.Fatal(err)
		}
		u := &models.Message{Role: "user", AuthorName: "Tess", Content: l}
		if err := st.AppendTurn(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{u}, &models.TurnRecord{SpaceID: space, NewTurn: true,
			Present: []string{"Maren", "Tess"}, Actors: []string{"Tess"}, Events: [][]models.PlainEvent{{{Kind: "line", Text: l}}}}); err != nil {
			t.Fatal(err)
		}
		r := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "ok"}
		if err := st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{r}, &models.TurnRecord{SpaceID: space, Present: []string{"Maren"}, Actors: []string{"Maren"}, Events: [][]models.PlainEvent{nil}}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := st.RecordBatch(ctx, chat.ID)
	if err != nil {
		t.Fatal(err)
	}
	inst := models.RecordInstall{ChatID: chat.ID, SpaceID: space,
		Characters: []models.Character{{ID: models.NewID(), SpaceID: space, Name: "Maren", Kind: models.CharacterCast, CardID: "maren"},
			{ID: models.NewID(), SpaceID: space, Name: xssImg, Kind: models.CharacterBackground, ChatID: chat.ID}}}
	var out story
	out.Chat = chat
	for i, e := range b.Events {
		inst.EventIDs = append(inst.EventIDs, e.ID)
		inst.Enrich = append(inst.Enrich, models.Event{ID: e.ID, Importance: 5, Day: 2, Minute: 600 + i})
		if i < len(lines) {
			id := models.NewID()
			out.Perceptions = append(out.Perceptions, id)
			inst.Perceptions = append(inst.Perceptions, models.Perception{ID: id, ChatID: chat.ID, SpaceID: space, Character: "Maren", EventID: e.ID,
				Mode: "heard", Text: lines[i], Gist: "gist of " + lines[i], Importance: 5, Seq: e.Seq, Day: 2, Minute: 600 + i})
		}
	}
	if len(b.Events) > 0 {
		e := b.Events[0]
		inst.Relationships = []models.Relationship{{ID: models.NewID(), SpaceID: space, FromName: "Maren", ToName: xssImg, Description: "distrusts " + xssScript,
			Since: e.Seq, ChatID: chat.ID, EventID: e.ID}}
		inst.Threads = []models.Thread{{ID: models.NewID(), ChatID: chat.ID, SpaceID: space, Kind: "mystery", Text: "Who rang the bell " + xssScript, Open: true, OpenedBy: e.ID, Seq: e.Seq}}
	}
	if err := st.InstallRecord(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if len(out.Perceptions) != len(lines) {
		t.Fatalf("recorded %d perceptions of %d lines", len(out.Perceptions), len(lines))
	}
	return out
}

// reflect installs beliefs of Maren in chat's space.
func reflect(t *testing.T, st *models.Store, chat models.Chat, bs ...belief.Belief) {
	t.Helper()
	if err := st.InstallReflection(context.Background(), models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
		Changes: belief.Changes{Created: bs}}); err != nil {
		t.Fatal(err)
	}
}

func memoryService(st *models.Store) *memory.Service {
	return memory.NewService(st, nil, memory.ConfigFrom(config.Default().Memory, "en"), slog.New(slog.DiscardHandler))
}

// assertEscaped fails when the page holds the seeded markup raw.
var baseField = regexp.MustCompile(`name="field" value="(\w+)">\s*<input type="hidden" name="base" value="([0-9a-f]+)">`)

// bases reads the edit form's base hash of each file.
func bases(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range baseField.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	if out["handbook"] == "" || out["resident"] == "" {
		t.Fatalf("the edit form has no base for each file:\n%s", body)
	}
	return out
}

// A card's memory in a space (a space whose id holds a slash): the
// handbook's provenance tags link to their chats when the chat exists and
// only then, recaps, manifest, the chats with their relay summaries and
// the resident as injected show, and the seeded markup stays text.
func TestMemoryPage(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			const space = "discord:channel:123/456"
			s := seedStory(t, st, space, "console:mem", "The bell rang twice.")
			ghost := models.NewID()
			hb := "# World facts (across chats)\n- Maren keeps a lantern " + xssScript + " [chat:" + s.Chat.ID + "]\n- An old rumor [chat:" + ghost + "]\n- A line of mine"
			rs := "# Earlier chats\n## Established facts\n- The bell rings " + xssImg + " [chat:" + s.Chat.ID + "]"
			if err := st.EditMemory(ctx, "maren", space, &hb, &rs, "test"); err != nil {
				t.Fatal(err)
			}
			if err := st.InstallRecap(ctx, models.Recap{ChatID: s.Chat.ID, CardID: "maren", ChatName: s.Chat.Name, Content: "Recap: the bell " + xssScript, Hash: "h1", Fingerprint: "f1"}); err != nil {
				t.Fatal(err)
			}
			chat, _ := st.Chat(ctx, s.Chat.ID)
			if _, err := st.InstallSummary(ctx, chat.ID, "", chat.HeadID, "Summary so far: the bell "+xssImg, 2); err != nil {
				t.Fatal(err)
			}
			_, ts := inspector(t, b, web.Options{Store: st, Memory: memoryService(st)})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			path := "/memory/maren/" + url.PathEscape(space)
			resp, body := br.get(path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("memory page: %d\n%s", resp.StatusCode, body)
			}
			for _, want := range []string{
				`<a href="/chat/` + s.Chat.ID + `" class="tag">[chat:` + s.Chat.ID + `]</a>`,
				`[chat:` + ghost + `]`, "A line of mine",
				"Maren keeps a lantern &lt;script&gt;alert(1)&lt;/script&gt;",
				"Recap: the bell &lt;script&gt;",
				"Summary so far: the bell &lt;img src=x onerror=alert(1)&gt;",
				"As injected", "The bell rings &lt;img",
				`<td class="mono">h1</td>`,
				`<a href="/character/` + url.PathEscape(space) + `/Maren">Maren</a>`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the memory page lacks %q", want)
				}
			}
			if strings.Contains(body, `href="/chat/`+ghost) {
				t.Errorf("a tag of a chat that does not exist is linked")
			}
			if i, j := strings.Index(body, `/Maren">Maren</a>`), strings.Index(body, `>&lt;img src=x onerror=alert(1)&gt;</a> <span class="muted">background`); i < 0 || j < i {
				t.Errorf("the cast character is not listed before the background one")
			}
			assertEscaped(t, "page", body)
			if resp, _ := br.get("/memory/nobody/" + url.PathEscape(space)); resp.StatusCode != http.StatusNotFound {
				t.Errorf("an unknown card: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// Editing on the hard path through the forms: a handbook line added in the
// form is in the store and on the page; what the CLI refuses (text that is
// not UTF-8, an empty summary) is shown next to its field with the
// person's text kept and changes nothing; a form over a file that changed
// since is refused; a read-only session gets no form and a 403.
func TestMemoryEditForms(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			const space = "console:local:edit"
			s := seedStory(t, st, space, "console:edit", "The bell rang twice.")
			hb := "# World facts (across chats)\n- The bell is brass [chat:" + s.Chat.ID + "]"
			if err := st.EditMemory(ctx, "maren", space, &hb, nil, "test"); err != nil {
				t.Fatal(err)
			}
			chat, _ := st.Chat(ctx, s.Chat.ID)
			if _, err := st.InstallSummary(ctx, chat.ID, "", chat.HeadID, "The old summary.", 2); err != nil {
				t.Fatal(err)
			}
			_, ts := inspector(t, b, web.Options{Store: st, Memory: memoryService(st)})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			csrf := br.csrf()
			path := "/memory/maren/" + url.PathEscape(space)
			resp, form := br.get(path + "/edit")
			if resp.StatusCode != http.StatusOK || !strings.Contains(form, "- The bell is brass [chat:"+s.Chat.ID+"]</textarea>") {
				t.Fatalf("edit form: %d\n%s", resp.StatusCode, form)
			}
			base := bases(t, form)
			handbook := func() string {
				m, err := st.LoadMemory(ctx, "maren", space)
				if err != nil {
					t.Fatal(err)
				}
				return m.Handbook
			}

			// Not UTF-8: refused inline, nothing changed.
			resp, body := br.post(path+"/edit", url.Values{"csrf": {csrf}, "field": {"handbook"}, "base": {base["handbook"]}, "text": {hb + "\n- bad \xff\xfe bytes"}})
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `id="problem-handbook">the text is not UTF-8 text</p>`) ||
				!strings.Contains(body, "- bad \uFFFD bytes</textarea>") {
				t.Errorf("a text that is not UTF-8: %d\n%s", resp.StatusCode, body)
			}
			if got := handbook(); got != hb {
				t.Errorf("the refused edit changed the handbook: %q", got)
			}

			// A new line: in the store, on the page.
			edited := strings.ReplaceAll(hb, "\n", "\r\n") + "\r\n- Tess owes Maren a favor " + xssScript + "\r\n"
			resp, _ = br.post(path+"/edit", url.Values{"csrf": {csrf}, "field": {"handbook"}, "base": {base["handbook"]}, "text": {edited}})
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != path+"?edited=handbook#handbook" {
				t.Fatalf("edit: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			want := hb + "\n- Tess owes Maren a favor " + xssScript
			if got := handbook(); got != want {
				t.Errorf("handbook after the edit %q, want %q", got, want)
			}
			_, page := br.get(path + "?edited=handbook")
			if !strings.Contains(page, "- Tess owes Maren a favor &lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "The handbook was replaced by hand") {
				t.Errorf("the page does not show the new line:\n%s", page)
			}
			assertEscaped(t, "page", page)

			// The old form's base is stale now: refused, the text kept.
			resp, body = br.post(path+"/edit", url.Values{"csrf": {csrf}, "field": {"handbook"}, "base": {base["handbook"]}, "text": {"- overwrite"}})
			if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "- overwrite</textarea>") || handbook() != want {
				t.Errorf("an edit over a changed handbook: %d", resp.StatusCode)
			}

			// The summary: empty is refused inline; a new text is stored.
			sumPath := path + "/summary/" + chat.ID
			resp, body = br.get(sumPath)
			m := regexp.MustCompile(`name="base" value="([0-9A-Z]+)"`).FindStringSubmatch(body)
			if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(body, "The old summary.</textarea>") {
				t.Fatalf("summary form: %d\n%s", resp.StatusCode, body)
			}
			resp, body = br.post(sumPath, url.Values{"csrf": {csrf}, "base": {m[1]}, "text": {"  \r\n "}})
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "cannot be deleted by hand") {
				t.Errorf("an empty summary: %d\n%s", resp.StatusCode, body)
			}
			summary := func() string {
				c, _ := st.Chat(ctx, chat.ID)
				ss, err := st.ActiveSummaries(ctx, c)
				if err != nil || len(ss) != 1 {
					t.Fatalf("summaries %v %v", ss, err)
				}
				return ss[0].Content
			}
			if got := summary(); got != "The old summary." {
				t.Errorf("the refused summary edit changed it: %q", got)
			}
			resp, _ = br.post(sumPath, url.Values{"csrf": {csrf}, "base": {m[1]}, "text": {"The new summary, by hand."}})
			if resp.StatusCode != http.StatusSeeOther || summary() != "The new summary, by hand." {
				t.Errorf("summary edit: %d, summary %q", resp.StatusCode, summary())
			}
			if _, page := br.get(path); !strings.Contains(page, "The new summary, by hand.") {
				t.Errorf("the page does not show the new summary")
			}

			// Read-only: no form, and a 403 on POST.
			ro := newBrowser(t, ts.URL)
			ro.login(roToken)
			roCSRF := ro.csrf()
			_, page = ro.get(path)
			if strings.Contains(page, path+"/edit") {
				t.Errorf("a read-only session is offered the edit form")
			}
			if resp, _ := ro.get(path + "/edit"); resp.StatusCode != http.StatusForbidden {
				t.Errorf("read-only edit form: %d, want 403", resp.StatusCode)
			}
			resp, _ = ro.post(path+"/edit", url.Values{"csrf": {roCSRF}, "field": {"handbook"}, "base": {base["handbook"]}, "text": {"- read-only was here"}})
			if resp.StatusCode != http.StatusForbidden || handbook() != want {
				t.Errorf("read-only edit: %d", resp.StatusCode)
			}
			// Without the CSRF field: refused.
			if resp, _ := br.post(path+"/edit", url.Values{"field": {"handbook"}, "text": {"- no csrf"}}); resp.StatusCode != http.StatusForbidden || handbook() != want {
				t.Errorf("an edit without CSRF: %d", resp.StatusCode)
			}
		})
	}
}
