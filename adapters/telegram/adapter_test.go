package telegram

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/bot"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/models"
)

func TestDMConversation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()

	h.tg.SendText(alice, "/start")
	card, _ := h.lib.Default()
	greeting := card.Greeting("Alice")
	h.waitText(alice.ID, greeting[:40])

	h.tg.SendText(alice, "Hello there")
	h.waitText(alice.ID, `You said "Hello there"`)

	if got := h.texts(alice.ID); len(got) != 2 || got[0] != strings.TrimSpace(greeting) {
		t.Errorf("bot messages: got %q, want the greeting then the reply", got)
	}
	if n := len(h.chatCalls("sendChatAction", alice.ID)); n == 0 {
		t.Error("no typing action was sent")
	}
	if n := len(h.tg.Calls("deleteWebhook")); n != 1 {
		t.Errorf("deleteWebhook calls: got %d, want 1 (polling mode)", n)
	}
	var names []string
	for _, c := range h.tg.Commands() {
		names = append(names, c.Command)
	}
	var want []string
	for _, c := range bot.Commands {
		want = append(want, c.Name)
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("published commands: got %v, want %v", names, want)
	}
	msgs := h.messages(alice.ID)
	if len(msgs) != 3 {
		t.Fatalf("stored messages: got %d, want 3 (greeting, user, reply)", len(msgs))
	}
	if msgs[1].Role != "user" || msgs[1].Content != "Hello there" || msgs[1].AuthorID != "1001" || msgs[1].AuthorName != "Alice" {
		t.Errorf("stored user message: got %+v", msgs[1])
	}
	ch, err := h.store.Channel(context.Background(), "telegram:1001")
	if err != nil {
		t.Fatal(err)
	}
	if ch.SpaceID != "telegram:user:1001" {
		t.Errorf("space: got %q, want telegram:user:1001", ch.SpaceID)
	}
	// The offset moved past both updates and nothing is left pending.
	waitFor(t, "updates recorded as handled", func() bool { return len(h.inboxState().Pending) == 0 })
}

func TestEditsThrottled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	answer := strings.TrimSpace(strings.Repeat("The tide turns slowly. ", 12))
	h.ai.Script(openaitest.Answer{Text: answer, ChunkSize: 6, ChunkDelay: 60 * time.Millisecond})

	h.tg.SendText(alice, "Tell me about the sea")
	waitFor(t, "the whole reply", func() bool {
		got := h.texts(alice.ID)
		return len(got) == 1 && got[0] == answer
	})

	sends := h.chatCalls("sendMessage", alice.ID)
	edits := h.chatCalls("editMessageText", alice.ID)
	if len(sends) != 1 {
		t.Errorf("sendMessage calls: got %d, want 1", len(sends))
	}
	if len(edits) < 2 {
		t.Fatalf("editMessageText calls: got %d, want at least 2 over a ~2.8 s stream", len(edits))
	}
	writes := append(sends[:1:1], edits...)
	for i := 1; i < len(writes); i++ {
		if gap := writes[i].At.Sub(writes[i-1].At); gap < 950*time.Millisecond {
			t.Errorf("write %d came %v after the one before; want at least 1 s", i, gap)
		}
	}
	span := writes[len(writes)-1].At.Sub(writes[0].At)
	if max := int(span/time.Second) + 1; len(edits) > max {
		t.Errorf("edits: got %d in %v, want at most %d", len(edits), span, max)
	}
}

func TestFloodControlWaitsRetryAfter(t *testing.T) {
	t.Parallel()
	t.Run("send", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.start()
		h.tg.Fail("sendMessage", telegramtest.TooManyRequests(1))
		h.ai.Script(openaitest.Answer{Text: "A short reply, delivered once."})
		h.tg.SendText(alice, "hi")
		h.waitText(alice.ID, "A short reply, delivered once.")

		sends := h.chatCalls("sendMessage", alice.ID)
		if len(sends) != 2 || sends[0].Code != 429 || sends[1].Code != 0 {
			t.Fatalf("sendMessage calls: got %+v, want a 429 then a success", codes(sends))
		}
		if gap := sends[1].At.Sub(sends[0].At); gap < 990*time.Millisecond {
			t.Errorf("retry came %v after the 429; want at least retry_after (1 s)", gap)
		}
		if got := h.texts(alice.ID); len(got) != 1 {
			t.Errorf("bot messages: got %q, want one", got)
		}
	})
	t.Run("edit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.start()
		answer := strings.TrimSpace(strings.Repeat("Waves break on the rocks. ", 8))
		h.ai.Script(openaitest.Answer{Text: answer, ChunkSize: 10, ChunkDelay: 60 * time.Millisecond})
		h.tg.Fail("editMessageText", telegramtest.TooManyRequests(2))
		h.tg.SendText(alice, "hi")
		waitFor(t, "the whole reply", func() bool {
			got := h.texts(alice.ID)
			return len(got) == 1 && got[0] == answer
		})
		edits := h.chatCalls("editMessageText", alice.ID)
		if len(edits) < 2 || edits[0].Code != 429 {
			t.Fatalf("editMessageText calls: got %v, want a 429 first", codes(edits))
		}
		if gap := edits[1].At.Sub(edits[0].At); gap < 1990*time.Millisecond {
			t.Errorf("next edit came %v after the 429; want at least retry_after (2 s)", gap)
		}
	})
}

func codes(calls []telegramtest.Call) []int {
	var out []int
	for _, c := range calls {
		out = append(out, c.Code)
	}
	return out
}

func TestNotModifiedTolerated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	answer := strings.TrimSpace(strings.Repeat("Gulls circle the lamp. ", 8))
	h.ai.Script(openaitest.Answer{Text: answer, ChunkSize: 8, ChunkDelay: 60 * time.Millisecond})
	h.tg.Fail("editMessageText", telegramtest.NotModified())
	h.tg.SendText(alice, "hi")
	waitFor(t, "the whole reply", func() bool {
		got := h.texts(alice.ID)
		return len(got) == 1 && got[0] == answer
	})
	edits := h.chatCalls("editMessageText", alice.ID)
	if len(edits) < 2 || edits[0].Code != 400 {
		t.Fatalf("editMessageText calls: got %v, want a 400 not modified first", codes(edits))
	}
	if n := len(h.chatCalls("sendMessage", alice.ID)); n != 1 {
		t.Errorf("sendMessage calls: got %d, want 1 (not modified is success, nothing resent)", n)
	}
	if n := len(h.tg.Calls("deleteMessage")); n != 0 {
		t.Errorf("deleteMessage calls: got %d, want 0", n)
	}
	if strings.Contains(h.logs.String(), "not modified") && strings.Contains(h.logs.String(), "level=WARN") {
		t.Errorf("not modified was logged as a problem:\n%s", h.logs.String())
	}
}

func TestLongReplySplitInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	var b strings.Builder
	for i := 0; b.Len() < 9000; i++ {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(strings.Repeat(string(rune('A'+i%26))+"aaa bbb ccc. ", 25))
	}
	answer := strings.TrimSpace(b.String()[:9000])
	h.ai.Script(openaitest.Answer{Text: answer, ChunkSize: 700})
	h.tg.SendText(alice, "Tell me everything")
	want := splitMessage(answer)
	if len(want) != 3 {
		t.Fatalf("test text splits into %d pieces, want 3", len(want))
	}
	waitFor(t, "three messages with the final pieces", func() bool {
		got := h.texts(alice.ID)
		return len(got) == 3 && got[0] == want[0] && got[1] == want[1] && got[2] == want[2]
	})
	msgs := h.tg.Messages(alice.ID)
	for i, m := range msgs {
		if utf16Len(m.Text) > maxText {
			t.Errorf("message %d has %d UTF-16 units, over the limit", i, utf16Len(m.Text))
		}
		if i > 0 && m.ID <= msgs[i-1].ID {
			t.Errorf("message %d is out of order", i)
		}
	}
	if got := strings.Join(h.texts(alice.ID), "\n\n"); strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(answer), " ") {
		t.Error("the pieces joined do not give the reply back")
	}
}

func TestMarkupDeliveredIntact(t *testing.T) {
	t.Parallel()
	answer := `*She laughs* "Tom & Jerry <3 — if x < y > z, then **surely** _not_ ` + "`code`" + ` [a link](http://x?a=1&b=2) &amp; <b>bold?</b> <unclosed and *half-open markdown`
	t.Run("html", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.start()
		h.ai.Script(openaitest.Answer{Text: answer, ChunkSize: 16})
		h.tg.SendText(alice, "hi")
		waitFor(t, "the reply as written", func() bool {
			got := h.texts(alice.ID)
			return len(got) == 1 && got[0] == answer
		})
		if m := h.tg.Messages(alice.ID)[0]; m.ParseMode != "HTML" {
			t.Errorf("parse mode: got %q, want HTML", m.ParseMode)
		}
	})
	t.Run("plain fallback", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.start()
		h.ai.Script(openaitest.Answer{Text: answer, ChunkSize: 400})
		h.tg.Fail("sendMessage", telegramtest.CantParseEntities())
		h.tg.Fail("editMessageText", telegramtest.CantParseEntities())
		h.tg.SendText(alice, "hi")
		waitFor(t, "the reply as written", func() bool {
			got := h.texts(alice.ID)
			return len(got) == 1 && got[0] == answer
		})
		sends := h.chatCalls("sendMessage", alice.ID)
		if len(sends) != 2 || sends[0].Code != 400 || sends[1].Params.Get("parse_mode") != "" {
			t.Errorf("sendMessage calls: got codes %v, want a refused HTML send then a plain one", codes(sends))
		}
	})
}

func TestForgetButtons(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.tg.SendText(alice, "Remember the red lantern")
	h.waitText(alice.ID, "You said")

	question := func() telegramtest.Message {
		t.Helper()
		before := len(h.texts(alice.ID))
		h.tg.SendText(alice, "/forget")
		waitFor(t, "an answer to /forget", func() bool { return len(h.texts(alice.ID)) > before })
		m := h.tg.Messages(alice.ID)[before]
		if len(m.Buttons) != 1 || len(m.Buttons[0]) != 2 {
			t.Fatalf("/forget answer: got %q with buttons %v, want a question with confirm and cancel", m.Text, m.Buttons)
		}
		return m
	}
	chatOf := func() string {
		ch, err := h.store.Channel(context.Background(), "telegram:1001")
		if err != nil {
			t.Fatal(err)
		}
		return ch.CurrentChatID
	}
	forgotten := func(chatID string) bool {
		var n int64
		h.store.DB().Model(&models.Tombstone{}).Where("chat_id = ?", chatID).Count(&n)
		var m int64
		h.store.DB().Model(&models.Message{}).Where("chat_id = ?", chatID).Count(&m)
		return n == 1 && m == 0
	}
	old := chatOf()

	// Cancel does nothing.
	q := question()
	answered := len(h.tg.Calls("answerCallbackQuery"))
	h.tg.Press(alice, alice.ID, q.ID, q.Buttons[0][1].Data)
	h.waitText(alice.ID, "Cancelled")
	if forgotten(old) {
		t.Fatal("cancel erased the chat")
	}
	// The press is answered alongside the action, not before it: wait.
	waitFor(t, "the cancel press answered", func() bool { return len(h.tg.Calls("answerCallbackQuery")) == answered+1 })

	// Confirm erases, and the channel goes on with a fresh chat.
	q = question()
	h.tg.Press(alice, alice.ID, q.ID, q.Buttons[0][0].Data)
	done := h.waitText(alice.ID, "Forgotten:")
	card, _ := h.lib.Default()
	waitFor(t, "the greeting of a fresh chat", func() bool {
		msgs := h.tg.Messages(alice.ID)
		last := msgs[len(msgs)-1]
		return last.ID > done.ID && strings.HasPrefix(last.Text, card.Greeting("Alice")[:30])
	})
	if !forgotten(old) {
		t.Error("confirm did not erase the chat")
	}
	if chatOf() == old {
		t.Error("the channel still plays the forgotten chat")
	}
	waitFor(t, "the keyboard removed", func() bool {
		for _, m := range h.tg.Messages(alice.ID) {
			if m.ID == q.ID {
				return m.Buttons == nil
			}
		}
		return false
	})

	// A second press is answered and changes nothing.
	before := len(h.texts(alice.ID))
	h.tg.Press(alice, alice.ID, q.ID, q.Buttons[0][0].Data)
	h.waitText(alice.ID, "expired or was already answered")
	if got := len(h.texts(alice.ID)); got != before+1 {
		t.Errorf("messages after the second press: got %d, want %d", got, before+1)
	}
	waitFor(t, "every press answered", func() bool { return len(h.tg.Calls("answerCallbackQuery")) == answered+3 })
}

func TestStartChoosesCard(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "lantern-keeper", "tea-house")
	h.start()
	h.tg.SendText(alice, "/start")
	kb := h.waitText(alice.ID, "Choose a character")
	if len(kb.Buttons) != 2 {
		t.Fatalf("keyboard: got %v, want one button per card", kb.Buttons)
	}
	var data string
	for _, row := range kb.Buttons {
		if row[0].Text == "苏砚" {
			data = row[0].Data
		}
	}
	if data == "" {
		t.Fatalf("no button for 苏砚 in %v", kb.Buttons)
	}
	h.tg.Press(alice, alice.ID, kb.ID, data)
	tea, _ := h.lib.Get("tea-house")
	h.waitText(alice.ID, []string{tea.Greeting("Alice")}[0][:30])
	ch, err := h.store.Channel(context.Background(), "telegram:1001")
	if err != nil {
		t.Fatal(err)
	}
	if ch.CardID != "tea-house" {
		t.Errorf("channel card: got %q, want tea-house", ch.CardID)
	}
	waitFor(t, "the keyboard removed and the press answered", func() bool {
		return h.tg.Messages(alice.ID)[0].Buttons == nil && len(h.tg.Calls("answerCallbackQuery")) == 1
	})
	h.tg.SendText(alice, "你好")
	h.waitText(alice.ID, `You said "你好"`)
	chat, err := h.store.Chat(context.Background(), ch.CurrentChatID)
	if err != nil {
		t.Fatal(err)
	}
	if chat.CardID != "tea-house" {
		t.Errorf("chat card: got %q, want tea-house", chat.CardID)
	}
}

func TestRestartNeitherReplaysNorSkips(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	first, _ := h.tg.SendText(alice, "/chats")
	h.waitText(alice.ID, "No chats")
	waitFor(t, "the update recorded as handled", func() bool {
		st := h.inboxState()
		return st.Next == first+1 && len(st.Pending) == 0
	})
	h.stop()

	second, _ := h.tg.SendText(alice, "Written while troupe was down")
	h.tg.Redeliver(first) // Telegram offers the command again
	h.start()
	// The redelivered command came before the message, in one chat's
	// order: had it run again, its answer would have come first.
	h.waitText(alice.ID, `You said "Written while troupe was down"`)
	if n := h.count(alice.ID, "No chats"); n != 1 {
		t.Errorf("/chats answered %d times, want once", n)

	}
	polls := h.tg.Calls("getUpdates")
	var firstOfRestart telegramtest.Call
	for _, c := range polls {
		if c.At.After(h.tg.Calls("setMyCommands")[1].At) {
			firstOfRestart = c
			break
		}
	}
	if got, want := firstOfRestart.Params.Get("offset"), itoa(int64(first+1)); got != want {
		t.Errorf("first poll after restart asked offset %s, want %s", got, want)
	}
	waitFor(t, "offset past the second update", func() bool { return h.inboxState().Next == second+1 })
}

func TestRestartResumesPendingUpdates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tune = func(a *Adapter) { a.drainTimeout = 200 * time.Millisecond }
	// Only the first call hangs: after the restart the question that was
	// cut off and the second thought (kept in the pipeline's inbox) are
	// answered together, as one turn of unanswered messages.
	var calls atomic.Int32
	h.ai.SetResponder(func(req openaitest.Request) openaitest.Answer {
		ans := openaitest.DefaultResponder(req)
		if calls.Add(1) == 1 {
			ans.Latency = time.Minute
		}
		return ans
	})
	h.start()
	h.tg.SendText(alice, "a slow question")
	waitFor(t, "the model asked", func() bool { return h.ai.Count() == 1 })
	joined, _ := h.tg.SendText(alice, "and a second thought")
	waitFor(t, "the second message queued behind the turn", func() bool { return len(h.inboxState().Pending) == 2 })
	h.stop() // the turn is cut off; both updates stay pending

	st := h.inboxState()
	if len(st.Pending) != 2 || st.Pending[1].UpdateID != joined {
		t.Fatalf("pending after a cut-off shutdown: got %d updates, want both", len(st.Pending))
	}
	h.start()
	h.waitText(alice.ID, `You said "and a second thought"`)
	waitFor(t, "nothing left pending", func() bool { return len(h.inboxState().Pending) == 0 })
	if last, _ := h.ai.Last(); !strings.Contains(fmt.Sprint(last.Messages), "a slow question") {
		t.Errorf("the reply after the restart did not see the question that was cut off: %v", last.Messages)
	}
	var users []string
	for _, m := range h.messages(alice.ID) {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if strings.Join(users, "|") != "a slow question|and a second thought" {
		t.Errorf("stored user messages: got %q, want each once, in order", users)
	}
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.WebhookURL = "https://bot.example/tg/hook"
	h.cfg.WebhookSecret = config.Secret("s3cret-token")
	h.cfg.WebhookListen = "127.0.0.1:0"
	h.start()
	// The adapter sets its webhook while it starts (after answering what a
	// stopped process left): wait for the call rather than race it.
	waitFor(t, "the webhook set", func() bool { url, _ := h.tg.Webhook(); return url != "" })
	if url, secret := h.tg.Webhook(); url != h.cfg.WebhookURL || secret != "s3cret-token" {
		t.Errorf("setWebhook: got %q %q", url, secret)
	}
	srv := httptest.NewServer(h.a.WebhookHandler())
	t.Cleanup(srv.Close)
	id, _ := h.tg.SendText(alice, "hello by webhook")
	body := h.tg.RawUpdate(id)
	post := func(secret string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/tg/hook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != http.StatusForbidden {
		t.Errorf("without the secret: got %d, want 403", code)
	}
	if code := post("wrong"); code != http.StatusForbidden {
		t.Errorf("with a wrong secret: got %d, want 403", code)
	}
	// The handler answered 403 before handing anything over.
	if h.ai.Count() != 0 || len(h.tg.Calls("sendMessage")) != 0 {
		t.Fatal("a request without the secret was handled")
	}
	if code := post("s3cret-token"); code != http.StatusOK {
		t.Fatalf("with the secret: got %d, want 200", code)
	}
	h.waitText(alice.ID, `You said "hello by webhook"`)
	if code := post("s3cret-token"); code != http.StatusOK {
		t.Errorf("redelivery: got %d, want 200", code)
	}
	// The handler decides before it answers: a second delivery it took
	// would have been stored by now. A new update proves the path runs.
	next, _ := h.tg.SendText(alice, "second by webhook")
	body = h.tg.RawUpdate(next)
	if code := post("s3cret-token"); code != http.StatusOK {
		t.Fatalf("a new update: got %d, want 200", code)
	}
	h.waitText(alice.ID, `You said "second by webhook"`)
	if n := h.ai.Count(); n != 2 {
		t.Errorf("model calls: got %d, want 2 (a redelivered update is handled once)", n)
	}
	if n := len(h.tg.Calls("getUpdates")) + len(h.tg.Calls("deleteWebhook")); n != 0 {
		t.Errorf("webhook mode polled or deleted the webhook (%d calls)", n)
	}
}

func TestTwoUsersKeepSeparateSpaces(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.tg.SendText(alice, "I am Alice")
	h.tg.SendText(bob, "I am Bob")
	h.waitText(alice.ID, `You said "I am Alice"`)
	h.waitText(bob.ID, `You said "I am Bob"`)

	var spaces []models.Space
	h.store.DB().Order("id").Find(&spaces)
	if len(spaces) != 2 || spaces[0].ID != "telegram:user:1001" || spaces[1].ID != "telegram:user:1002" || spaces[0].Kind != "user" {
		t.Errorf("spaces: got %+v, want one user space each", spaces)
	}
	var chats []models.Chat
	h.store.DB().Order("space_id").Find(&chats)
	if len(chats) != 2 || chats[0].CardID != chats[1].CardID || chats[0].SpaceID == chats[1].SpaceID {
		t.Fatalf("chats: got %+v, want one chat of the same card in each space", chats)
	}
	for _, c := range []struct {
		chatID     int64
		own, other string
	}{{alice.ID, "I am Alice", "I am Bob"}, {bob.ID, "I am Bob", "I am Alice"}} {
		var all []string
		for _, m := range h.messages(c.chatID) {
			all = append(all, m.Content)
		}
		joined := strings.Join(all, "\n")
		if !strings.Contains(joined, c.own) || strings.Contains(joined, c.other) {
			t.Errorf("chat %d messages: got %q", c.chatID, all)
		}
	}
}

func TestOrderAndConcurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Alice's first answer is held until Bob has his: if Bob's turn waited
	// for Alice's, his reply never comes and waitText fails.
	release := h.holdWhen("slow")
	h.start()
	h.tg.SendText(alice, "a slow start")
	waitFor(t, "the model asked", func() bool { return h.ai.Count() == 1 })
	h.tg.SendText(alice, "two")
	h.tg.SendText(alice, "three")
	h.tg.SendText(bob, "meanwhile")
	h.waitText(bob.ID, `You said "meanwhile"`)
	if len(h.texts(alice.ID)) != 0 {
		t.Error("Alice got a reply while her model answer was held")
	}
	release()
	h.waitText(alice.ID, `You said "three"`)
	var got []string
	for _, m := range h.messages(alice.ID) {
		if m.Role == "user" {
			got = append(got, m.Content)
		}
	}
	if strings.Join(got, "|") != "a slow start|two|three" {
		t.Errorf("stored order: got %q", got)
	}
	if n := h.ai.Count(); n != 3 {
		t.Errorf("model calls: got %d, want 3 (two and three join one turn)", n)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	t.Run("too long", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.limits.MaxChars = 20
		h.start()
		h.tg.SendText(alice, strings.Repeat("x", 50))
		h.waitText(alice.ID, "the limit is 20 characters")
		if n := h.ai.Count(); n != 0 {
			t.Errorf("model calls: got %d, want 0", n)
		}
		if n := len(h.messages(alice.ID)); n != 0 {
			t.Errorf("stored messages: got %d, want 0", n)
		}
	})
	t.Run("rate", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.limits.PerMinute = 2
		clk := newTestClock()
		h.now = clk.now
		h.start()
		var ids []int
		for _, s := range []string{"one", "two", "three", "four", "five"} {
			id, _ := h.tg.SendText(alice, s)
			ids = append(ids, id)
		}
		const slowDown = "writing faster than the character can keep up"
		h.waitText(alice.ID, slowDown)
		h.waitText(alice.ID, "two")
		// Commands count too: /regen would call the model again.
		id, _ := h.tg.SendText(alice, "/regen")
		h.settled(append(ids, id)...)
		// A minute later the user may write again.
		clk.add(time.Minute)
		h.tg.SendText(alice, "/help")
		h.waitText(alice.ID, "Commands:")
		if n := h.count(alice.ID, slowDown); n != 1 {
			t.Errorf("rate notices: got %d, want 1", n)
		}
		if n := h.ai.Count(); n > 2 {
			t.Errorf("model calls: got %d, want at most 2 (the limit)", n)
		}
		for _, m := range h.messages(alice.ID) {
			if m.Content == "three" || m.Content == "four" || m.Content == "five" {
				t.Errorf("message %q over the limit reached the pipeline", m.Content)
			}
		}
	})
}

func TestGroupMention(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.AllowGroups = true
	h.start()
	group := telegramtest.Chat{ID: -1001234567890, Title: "Harbour tavern"}
	h.tg.SendGroupText(group, bob, "nobody asked the bot", 0)
	_, asked := h.tg.SendGroupText(group, bob, "@troupe_test_bot light the lamp", 0)
	// In groups the pipeline prefixes each message with its author.
	reply := h.waitText(group.ID, `You said "Bob: light the lamp"`)
	if reply.ReplyTo != asked {
		t.Errorf("reply_to: got %d, want %d", reply.ReplyTo, asked)
	}
	h.tg.SendGroupText(group, alice, "thanks!", reply.ID)
	h.waitText(group.ID, `You said "Alice: thanks!"`)
	if n := h.ai.Count(); n != 2 {
		t.Errorf("model calls: got %d, want 2 (the unaddressed message is ignored)", n)
	}
	ch, err := h.store.Channel(context.Background(), "telegram:-1001234567890")
	if err != nil {
		t.Fatal(err)
	}
	if ch.SpaceID != "telegram:group:-1001234567890" {
		t.Errorf("space: got %q", ch.SpaceID)
	}
}

func TestUnauthorizedToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.Token = config.Secret("999:wrong-token")
	a, err := New(h.cfg, bot.New(bot.Options{Store: h.store, Cards: h.lib}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = a.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "token refused") || strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("Run with a refused token: got %v", err)
	}
}

func TestTypingRepeatsUntilFirstText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tune = func(a *Adapter) { a.typingEvery = 300 * time.Millisecond }
	// The model thinks until three typing actions went out.
	release := h.holdWhen("ponder")
	h.start()
	h.tg.SendText(alice, "ponder this")
	waitFor(t, "three typing actions while the model thinks", func() bool { return len(h.chatCalls("sendChatAction", alice.ID)) >= 3 })
	release()
	h.waitText(alice.ID, "You said")
	first := h.chatCalls("sendMessage", alice.ID)[0].At
	var before, after int
	for _, c := range h.chatCalls("sendChatAction", alice.ID) {
		if c.Params.Get("action") != "typing" {
			t.Errorf("chat action: got %q, want typing", c.Params.Get("action"))
		}
		if c.At.Before(first) {
			before++
		} else {
			after++
		}
	}
	if before < 3 {
		t.Errorf("typing actions while the model thought: got %d, want at least 3", before)
	}
	if after > 0 {
		t.Errorf("typing actions after the first text: got %d, want 0", after)
	}
}

func TestFailedStreamTakesBackPartialText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.ai.Script(openaitest.Answer{Text: strings.Repeat("Half a story, then nothing. ", 10), Fault: openaitest.FaultCut, ChunkSize: 8, ChunkDelay: 30 * time.Millisecond})
	h.tg.SendText(alice, "tell me")
	h.waitText(alice.ID, "/regen")
	waitFor(t, "only the notice left", func() bool { return len(h.texts(alice.ID)) == 1 })
	if strings.Contains(h.texts(alice.ID)[0], "Half a story") {
		t.Errorf("the partial reply stayed: %q", h.texts(alice.ID))
	}
}

func TestClosedPipelineLeavesUpdatePending(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	if err := h.p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	id, _ := h.tg.SendText(alice, "sent as troupe stops")
	h.waitText(alice.ID, "restarting")
	waitFor(t, "the refused update settled", func() bool {
		return strings.Contains(h.logs.String(), fmt.Sprintf("update_id=%d", id)) && strings.Contains(h.logs.String(), "shutting down")
	})
	if st := h.inboxState(); len(st.Pending) != 1 || st.Pending[0].UpdateID != id {
		t.Fatalf("pending: got %d updates, want the refused one", len(st.Pending))
	}
	h.stop()
	h.start()
	h.waitText(alice.ID, `You said "sent as troupe stops"`)
	waitFor(t, "nothing left pending", func() bool { return len(h.inboxState().Pending) == 0 })
}
