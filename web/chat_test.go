package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/web"
)

const (
	xssImg    = `<img src=x onerror=alert(1)>`
	xssScript = `<script>alert(1)</script>`
)

// played is a chat seeded through the store as a turn of the bot writes
// one: a scene of two cards, a user line, a reply a /regen replaced and
// the reply that replaced it.
type played struct {
	chat                 models.Chat
	space                string
	user, first, regen   *models.Message
	leadName, secondName string
}

// playChat stores a scene: the lead card is named like an image tag, the
// user is named like a script, the first reply holds a script. Each
// beforeReply runs before a reply is stored (n counts the replies from 0),
// where a turn's recall is noted.
func playChat(t testing.TB, st *models.Store, beforeReply ...func(p played, n int)) played {
	t.Helper()
	ctx := context.Background()
	p := played{space: "discord:guild:" + models.NewID()}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.UpsertCard(ctx, models.Card{ID: "lead-card", Name: xssImg, Data: "{}"}))
	must(st.UpsertCard(ctx, models.Card{ID: "second-card", Name: "苏砚", Data: "{}"}))
	must(st.EnsureSpace(ctx, models.Space{ID: p.space, Platform: "discord", Kind: "guild", ExternalID: "g1"}))
	ch, err := st.CreateChannel(ctx, models.Channel{ID: "discord:chan:" + models.NewID(), Platform: "discord", ExternalID: "4242", SpaceID: p.space})
	must(err)
	chat, cast, err := st.StartScene(ctx, models.ChatStart{ChannelID: ch.ID, SpaceID: p.space, Name: "Night at the gate",
		Cast: []models.CastMember{{CardID: "lead-card"}, {CardID: "second-card"}}})
	must(err)
	p.leadName, p.secondName = cast[0].Name, cast[1].Name
	names := []string{p.leadName, p.secondName}
	p.user = &models.Message{Role: "user", AuthorID: "u1", AuthorName: xssScript, Content: "Open the gate, " + xssImg}
	must(st.AppendTurn(ctx, chat.ID, "", "", []*models.Message{p.user},
		&models.TurnRecord{SpaceID: p.space, NewTurn: true, Present: append([]string{xssScript}, names...), Cast: names}))
	p.chat = chat
	for _, f := range beforeReply {
		f(p, 0)
	}
	p.first = &models.Message{Role: "assistant", AuthorName: p.leadName, SpeakerCardID: "lead-card", Content: "First answer " + xssScript}
	must(st.AppendTurn(ctx, chat.ID, p.user.ID, p.user.ID, []*models.Message{p.first},
		&models.TurnRecord{SpaceID: p.space, Present: names, Cast: names}))
	// A /regen: a sibling of the first reply becomes the head.
	for _, f := range beforeReply {
		f(p, 1)
	}
	p.regen = &models.Message{Role: "assistant", AuthorName: p.leadName, SpeakerCardID: "lead-card", Content: "Second answer, the gate creaks"}
	must(st.AppendTurn(ctx, chat.ID, p.first.ID, p.user.ID, []*models.Message{p.regen},
		&models.TurnRecord{SpaceID: p.space, Present: names, Cast: names}))
	ledger := `{"place":"the north gate","flags":{"lamp":"` + xssScript + `"}}`
	must(st.InstallRecord(ctx, models.RecordInstall{ChatID: chat.ID, SpaceID: p.space, Ledger: &ledger,
		Views: map[string]string{p.secondName: `{"place":"苏砚 saw the gate"}`}}))
	_, err = st.InstallViews(ctx, chat.ID, p.user.ID, []models.ViewSummary{{Members: names, Content: "They met at the gate " + xssImg, Beats: 1}})
	must(err)
	p.chat, err = st.Chat(ctx, chat.ID)
	must(err)
	return p
}

// assertEscaped fails when a page holds the seeded markup raw rather than
// as text.
func assertEscaped(t *testing.T, page, body string) {
	t.Helper()
	for _, raw := range []string{xssImg, xssScript, "<script>alert"} {
		if strings.Contains(body, raw) {
			t.Errorf("%s holds %q unescaped", page, raw)
		}
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(body) {
		t.Errorf("%s has inline script", page)
	}
}

// TestChatPageShowsTheBranchTree: the chat page shows the branch with the
// reply a /regen replaced beside it, off the branch; presence per message;
// the relay summary; the chat's ledger and each member's; links to the
// memory and character pages and to each reply; the live hook; and the
// forget link only to a session that may change. Seeded markup is text.
func TestChatPageShowsTheBranchTree(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := testenv.OpenStore(t, b)
			p := playChat(t, st)
			_, ts := inspector(t, b, web.Options{Store: st})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			resp, body := br.get("/chat/" + p.chat.ID)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("chat page: %d\n%s", resp.StatusCode, body)
			}
			assertEscaped(t, "the chat page", body)
			want := []string{
				"Night at the gate",
				"Open the gate, &lt;img src=x onerror=alert(1)&gt;",
				"First answer &lt;script&gt;alert(1)&lt;/script&gt;",
				"Second answer, the gate creaks",
				"They met at the gate &lt;img",
				"the north gate",
				"苏砚 saw the gate",
				`data-live="/live/chat/` + p.chat.ID + `"`,
				`id="transcript"`,
				`href="/memory/lead-card/` + url.PathEscape(p.space) + `"`,
				`href="/character/` + url.PathEscape(p.space) + `/` + url.PathEscape("苏砚") + `"`,
				`href="/chat/` + p.chat.ID + `/reply/` + p.first.ID + `"`,
				`href="/chat/` + p.chat.ID + `/reply/` + p.regen.ID + `"`,
				`href="/chat/` + p.chat.ID + `/forget"`,
				"discord", "4242",
			}
			for _, w := range want {
				if !strings.Contains(body, w) {
					t.Errorf("the chat page lacks %q", w)
				}
			}
			// The branch: the user line, then the head reply; the replaced
			// reply stands under it, marked off the branch.
			user := strings.Index(body, `id="m-`+p.user.ID+`"`)
			head := strings.Index(body, "Second answer")
			first := strings.Index(body, "First answer")
			if user < 0 || head < 0 || first < 0 || !(user < head && head < first) {
				t.Errorf("order: user %d, head reply %d, replaced reply %d; want the replaced one after the head, beside it", user, head, first)
			}
			if off := regexp.MustCompile(`(?s)class="msg assistant off-branch">.{0,400}off-branch.{0,600}First answer`); !off.MatchString(body) {
				t.Errorf("the replaced reply is not marked off the branch")
			}
			if strings.Count(body, `class="msg assistant off-branch"`) != 1 {
				t.Errorf("want exactly one off-branch message")
			}
			// Presence: the user (named like a script) was present at the
			// user's line; the members' pages are linked.
			if !strings.Contains(body, "Present: ") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;</a>") {
				t.Errorf("presence of the user line not shown")
			}
			// A read-only session sees no forget, and may not forget.
			ro := newBrowser(t, ts.URL)
			ro.login(roToken)
			if _, body := ro.get("/chat/" + p.chat.ID); strings.Contains(body, "/forget") {
				t.Errorf("a read-only session is offered the forget")
			}
			if resp, _ := ro.post("/chat/"+p.chat.ID+"/forget", url.Values{"csrf": {ro.csrf()}}); resp.StatusCode != http.StatusForbidden {
				t.Errorf("a read-only forget: %d, want 403", resp.StatusCode)
			}
			if resp, _ := br.get("/chat/" + models.NewID()); resp.StatusCode != http.StatusNotFound {
				t.Errorf("an unknown chat: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// TestChatPageIsBounded: a long chat shows its newest messages, with a
// link to the ones before that leads back along the branch.
func TestChatPageIsBounded(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := testenv.OpenStore(t, b)
			p := playChat(t, st)
			ctx := context.Background()
			head := p.chat.HeadID
			var batch []*models.Message
			for i := range 240 {
				batch = append(batch, &models.Message{Role: "user", AuthorName: "Tess", Content: fmt.Sprintf("line %03d.", i)})
			}
			if err := st.AppendTurn(ctx, p.chat.ID, head, head, batch, nil); err != nil {
				t.Fatal(err)
			}
			_, ts := inspector(t, b, web.Options{Store: st})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			_, body := br.get("/chat/" + p.chat.ID)
			if n := strings.Count(body, `<li class="msg `); n > 110 {
				t.Errorf("the page shows %d messages of 243", n)
			}
			if !strings.Contains(body, "line 239.") || !strings.Contains(body, "line 140.") || strings.Contains(body, "line 139.") {
				t.Errorf("the first page is not the newest 100 messages")
			}
			m := regexp.MustCompile(`href="(/chat/[^"?]+\?from=[0-9A-Z]+)#transcript" rel="prev"`).FindStringSubmatch(body)
			if m == nil {
				t.Fatal("no link to the earlier messages")
			}
			_, body = br.get(m[1])
			if !strings.Contains(body, "line 139.") || !strings.Contains(body, "line 040.") || strings.Contains(body, "line 039.") || strings.Contains(body, "line 140.") {
				t.Errorf("the earlier page is not the 100 before")
			}
			if resp, _ := br.get("/chat/" + p.chat.ID + "?from=" + models.NewID()); resp.StatusCode != http.StatusNotFound {
				t.Errorf("a page from a message not in the chat: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// noteRecall keeps a recall record as a turn with recall.diagnostics does,
// under the head the recall ran at.
func noteRecall(t testing.TB, st *models.Store, chatID, head, character string, rep memory.RecallReport) {
	t.Helper()
	err := st.NoteRecall(context.Background(), models.RecallDone{Keep: 50,
		Diagnostic: &models.RecallDiagnostic{ChatID: chatID, MessageID: head, Character: character, Data: rep.JSON()}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReplyPageShowsRecall: a reply's page shows its text and its turn's
// recall — the picked items with their scores by component and why, and
// what was left out and why; a /regen's reply shows its own turn's; a chat
// without records says diagnostics were off.
func TestReplyPageShowsRecall(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := testenv.OpenStore(t, b)
			// The first turn recalled the oath, the /regen's the lamp; both
			// ran at the user's line, each before its reply was stored.
			p := playChat(t, st, func(p played, n int) {
				rep := memory.RecallReport{Character: p.leadName, Items: []memory.ReportItem{
					{ID: "P1", Kind: "perception", Text: "the oath at the well " + xssImg, Sources: []string{"terms", "vector"}, Importance: 0.7, Relevance: 0.91, Recency: 0.5, Retention: 0.88, Total: 0.83, Picked: true, Why: "relevant and important"},
					{ID: "B1", Kind: "belief", Text: "the guard lies", Importance: 0.2, Relevance: 0.1, Recency: 0.3, Retention: 0.4, Total: 0.17, Why: "below the threshold"},
				}}
				if n == 1 {
					rep.Items = []memory.ReportItem{{ID: "P2", Kind: "perception", Text: "the lamp went out", Importance: 0.5, Relevance: 0.6, Recency: 0.9, Retention: 1, Total: 0.66, Picked: true, Faded: true, Why: "recent"}}
				}
				noteRecall(t, st, p.chat.ID, p.user.ID, p.leadName, rep)
				time.Sleep(5 * time.Millisecond)
			})
			bare := playChat(t, st)
			_, ts := inspector(t, b, web.Options{Store: st})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			// A chat without records: diagnostics were off.
			resp, body := br.get("/chat/" + bare.chat.ID + "/reply/" + bare.first.ID)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("reply page: %d\n%s", resp.StatusCode, body)
			}
			if !strings.Contains(body, "Recall diagnostics were off") {
				t.Errorf("no record and no word that diagnostics were off")
			}
			assertEscaped(t, "the reply page", body)
			if !strings.Contains(body, "First answer &lt;script&gt;") || !strings.Contains(body, "off-branch") {
				t.Errorf("the replaced reply's page lacks its text or its off-branch mark")
			}
			_, body = br.get("/chat/" + p.chat.ID + "/reply/" + p.regen.ID)
			if !strings.Contains(body, "the lamp went out") || !strings.Contains(body, "recent") || !strings.Contains(body, "0.66") || !strings.Contains(body, "faded to its gist") {
				t.Errorf("the regen's reply page lacks its recall:\n%s", body)
			}
			if strings.Contains(body, "the oath at the well") {
				t.Errorf("the regen's reply shows the first turn's recall")
			}
			_, body = br.get("/chat/" + p.chat.ID + "/reply/" + p.first.ID)
			assertEscaped(t, "the reply page", body)
			picked, left, _ := strings.Cut(body, "Left out")
			for _, w := range []string{"the oath at the well &lt;img", "relevant and important", "0.83", "0.70", "0.91", "0.50", "0.88", "terms, vector"} {
				if !strings.Contains(picked, w) {
					t.Errorf("the picked item lacks %q", w)
				}
			}
			for _, w := range []string{"the guard lies", "below the threshold", "0.17"} {
				if !strings.Contains(left, w) {
					t.Errorf("the left-out item lacks %q", w)
				}
			}
			if strings.Contains(left, "the oath") || strings.Contains(picked, "the guard lies") {
				t.Errorf("picked and left out are mixed up")
			}
			// A user's line has no reply page; nor has another chat's reply.
			if resp, _ := br.get("/chat/" + p.chat.ID + "/reply/" + p.user.ID); resp.StatusCode != http.StatusNotFound {
				t.Errorf("a user line's reply page: %d, want 404", resp.StatusCode)
			}
			if resp, _ := br.get("/chat/" + p.chat.ID + "/reply/" + bare.first.ID); resp.StatusCode != http.StatusNotFound {
				t.Errorf("another chat's reply under this chat: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// consolidations records what a forget enqueues.
type consolidations struct {
	mu   sync.Mutex
	keys []string
}

func (c *consolidations) Consolidate(_ context.Context, card, space string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = append(c.keys, card+"|"+space)
	return nil
}

// TestForgetChatThroughTheForm: the chat page's forget asks first; the
// form forgets the chat as `troupe memory forget` does (each cast card's
// consolidation enqueued) and leads to the overview with a notice; the
// chat, its replies and its text are gone from every page.
func TestForgetChatThroughTheForm(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := testenv.OpenStore(t, b)
			p := playChat(t, st)
			q := &consolidations{}
			_, ts := inspector(t, b, web.Options{Store: st, Memory: memory.NewService(st, nil, memory.Config{}, nil), Queue: q})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			if _, body := br.get("/"); !strings.Contains(body, p.chat.ID) {
				t.Fatalf("the overview does not list the chat before the forget")
			}
			resp, body := br.get("/chat/" + p.chat.ID + "/forget")
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, "cannot be undone") || !strings.Contains(body, "its recaps") {
				t.Fatalf("confirmation: %d\n%s", resp.StatusCode, body)
			}
			assertEscaped(t, "the confirmation", body)
			m := csrfField.FindStringSubmatch(body)
			if m == nil || !strings.Contains(body, `action="/chat/`+p.chat.ID+`/forget"`) {
				t.Fatalf("the confirmation has no form with the CSRF field")
			}
			if resp, _ := br.post("/chat/"+p.chat.ID+"/forget", url.Values{}); resp.StatusCode != http.StatusForbidden {
				t.Errorf("a forget without CSRF: %d, want 403", resp.StatusCode)
			}
			if _, err := st.Chat(context.Background(), p.chat.ID); err != nil {
				t.Fatalf("the refused forget forgot: %v", err)
			}
			resp, _ = br.post("/chat/"+p.chat.ID+"/forget", url.Values{"csrf": {m[1]}})
			if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/?notice=") {
				t.Fatalf("forget: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			q.mu.Lock()
			got := strings.Join(q.keys, ",")
			q.mu.Unlock()
			if want := "lead-card|" + p.space + ",second-card|" + p.space; got != want {
				t.Errorf("consolidations enqueued: %q, want %q", got, want)
			}
			resp, body = br.get(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, "The chat was forgotten") {
				t.Errorf("the overview after the forget: %d, no notice", resp.StatusCode)
			}
			if strings.Contains(body, p.chat.ID) || strings.Contains(body, "Night at the gate") {
				t.Errorf("the overview still lists the forgotten chat")
			}
			for _, path := range []string{"/chat/" + p.chat.ID, "/chat/" + p.chat.ID + "/reply/" + p.regen.ID, "/chat/" + p.chat.ID + "/forget"} {
				resp, body := br.get(path)
				if resp.StatusCode != http.StatusNotFound {
					t.Errorf("%s after the forget: %d, want 404", path, resp.StatusCode)
				}
				for _, gone := range []string{"Second answer", "First answer", "Open the gate", "north gate", "They met"} {
					if strings.Contains(body, gone) {
						t.Errorf("%s after the forget shows %q", path, gone)
					}
				}
			}
			if resp, _ := br.post("/chat/"+p.chat.ID+"/forget", url.Values{"csrf": {m[1]}}); resp.StatusCode != http.StatusNotFound {
				t.Errorf("forgetting it again: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// sse opens a live stream with br's session; the caller reads events.
func sse(t *testing.T, br *browser, ctx context.Context, path string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, br.base+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := br.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// nextEvent reads the stream up to the next named event (comments are
// skipped) and returns its name and data.
func nextEvent(rd *bufio.Reader) (name, data string, err error) {
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && name != "":
			return name, data, nil
		}
	}
}

// TestLiveChatStream: the live stream of a chat is server-sent events; a
// turn appended through the store (as a bot in another process would)
// arrives as a `turn` event within seconds; a forget ends the stream with
// `gone`; one session holds at most a few streams.
func TestLiveChatStream(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := testenv.OpenStore(t, b)
			p := playChat(t, st)
			_, ts := inspector(t, b, web.Options{Store: st, Memory: memory.NewService(st, nil, memory.Config{}, nil), LivePoll: 50 * time.Millisecond})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			resp, rd := sse(t, br, ctx, "/live/chat/"+p.chat.ID)
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("live: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
				t.Fatalf("the stream did not open at once: %q %v", line, err)
			}
			u := &models.Message{Role: "user", AuthorName: "Tess", Content: "A new line."}
			if err := st.AppendTurn(context.Background(), p.chat.ID, p.chat.HeadID, p.chat.HeadID, []*models.Message{u}, nil); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			name, data, err := nextEvent(rd)
			if err != nil || name != "turn" || !strings.Contains(data, u.ID) {
				t.Fatalf("after a turn: event %q data %q (%v)", name, data, err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the turn event took %v", d)
			}
			// The page the stream reloads holds the new line in the
			// transcript it replaces.
			if _, body := br.get("/chat/" + p.chat.ID); !strings.Contains(body, "A new line.") {
				t.Errorf("the chat page lacks the new turn")
			}
			// A session holds at most 8 streams: this one and 7 more.
			for range 7 {
				if resp, _ := sse(t, br, ctx, "/live/chat/"+p.chat.ID); resp.StatusCode != http.StatusOK {
					t.Fatalf("stream within the bound: %d", resp.StatusCode)
				}
			}
			if resp, _ := sse(t, br, ctx, "/live/chat/"+p.chat.ID); resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("a ninth stream: %d, want 429", resp.StatusCode)
			}
			other := newBrowser(t, ts.URL)
			other.login(fullToken)
			if resp, _ := sse(t, other, ctx, "/live/chat/"+p.chat.ID); resp.StatusCode != http.StatusOK {
				t.Errorf("another session's stream: %d, want 200", resp.StatusCode)
			}
			// Forgetting the chat ends the stream.
			if _, err := memory.NewService(st, nil, memory.Config{}, nil).ForgetChat(context.Background(), p.chat.ID); err != nil {
				t.Fatal(err)
			}
			if name, _, err := nextEvent(rd); err != nil || name != "gone" {
				t.Errorf("after the forget: event %q (%v), want gone", name, err)
			}
			if resp, _ := sse(t, other, ctx, "/live/chat/"+models.NewID()); resp.StatusCode != http.StatusNotFound {
				t.Errorf("an unknown chat's stream: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// BenchmarkChatPage5000: the chat page of a scene of 5,000 messages:
// with its only relay summaries at the start (compaction failing all
// along: the summaries' walk is the whole chat), then with a compaction
// near the head, as a chat that plays normally has.
func BenchmarkChatPage5000(b *testing.B) {
	be := testenv.Backends(b)[0]
	st := testenv.OpenStore(b, be)
	ctx := context.Background()
	p := playChat(b, st)
	head := p.chat.HeadID
	for i := 0; i < 5000; i += 500 {
		var batch []*models.Message
		for j := range 500 {
			role := "user"
			if j%2 == 1 {
				role = "assistant"
			}
			batch = append(batch, &models.Message{Role: role, AuthorName: "Tess", Content: fmt.Sprintf("line %d: %s", i+j, strings.Repeat("words ", 40))})
		}
		if err := st.AppendTurn(ctx, p.chat.ID, head, head, batch, &models.TurnRecord{SpaceID: p.space, Present: []string{"Tess", p.leadName, p.secondName}}); err != nil {
			b.Fatal(err)
		}
		head = batch[len(batch)-1].ID
	}
	s, err := web.New(web.Options{Store: st, Token: fullToken})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(ts.URL+"/login", url.Values{"token": {fullToken}})
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	get := func(b *testing.B) {
		resp, err := c.Get(ts.URL + "/chat/" + p.chat.ID)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("chat page: %d", resp.StatusCode)
		}
	}
	b.Run("summary at the start", func(b *testing.B) {
		for b.Loop() {
			get(b)
		}
	})
	chat, err := st.Chat(ctx, p.chat.ID)
	if err != nil {
		b.Fatal(err)
	}
	sums, err := st.ActiveSummaries(ctx, chat)
	if err != nil || len(sums) != 1 {
		b.Fatalf("summaries: %v %v", sums, err)
	}
	tr, err := st.TranscriptPage(ctx, chat.ID, chat.HeadID, 20)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.InstallViews(ctx, chat.ID, tr.Messages[0].ID, []models.ViewSummary{{Members: []string{p.leadName, p.secondName}, PrevID: sums[0].ID, Content: "later", Beats: 40}}); err != nil {
		b.Fatal(err)
	}
	b.Run("summary near the head", func(b *testing.B) {
		for b.Loop() {
			get(b)
		}
	})
}
