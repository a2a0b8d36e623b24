package telegram

import (
	"context"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/adapters/telegram/telegramtest"
	"troupe/bot"
	"troupe/cards"
)

var tavern = telegramtest.Chat{ID: -1009876543210, Title: "Ferry landing"}

// newSceneHarness is a harness whose library holds Maren (lantern-keeper)
// and Ilse, a second card; scene binds a chat to both once it runs.
func newSceneHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	maren, ok := h.lib.Get("lantern-keeper")
	if !ok {
		t.Fatal("no lantern-keeper card")
	}
	ilse := maren
	ilse.ID, ilse.Name, ilse.Nickname = "ilse", "Ilse", ""
	ilse.Description = "Ilse rows the ferry across the black lake."
	lib, err := cards.NewLibrary([]cards.Card{maren, ilse}, "")
	if err != nil {
		t.Fatal(err)
	}
	h.lib = lib
	h.cfg.AllowGroups = true
	return h
}

// scene plays Maren and Ilse in the chat of ref.
func (h *harness) scene(ref bot.ChannelRef) {
	h.t.Helper()
	if err := h.p.BindCast(context.Background(), ref, []string{"lantern-keeper", "ilse"}); err != nil {
		h.t.Fatal(err)
	}
}

func privateRef(u telegramtest.User) bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformTelegram, ID: itoa(u.ID), SpaceKind: bot.SpaceUser, SpaceID: itoa(u.ID)}
}

func groupRef(c telegramtest.Chat) bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformTelegram, ID: itoa(c.ID), SpaceKind: bot.SpaceGroup, SpaceID: itoa(c.ID), Group: true}
}

// replies are the bot's finished replies in a chat (the fake model ends
// each with "listening."), in order.
func (h *harness) replies(chatID int64) []telegramtest.Message {
	var out []telegramtest.Message
	for _, m := range h.tg.Messages(chatID) {
		if strings.HasSuffix(m.Text, "listening.") {
			out = append(out, m)
		}
	}
	return out
}

// waitReplies waits for n finished replies in a chat and returns them.
func (h *harness) waitReplies(chatID int64, n int) []telegramtest.Message {
	h.t.Helper()
	waitFor(h.t, itoa(int64(n))+" replies", func() bool { return len(h.replies(chatID)) >= n })
	return h.replies(chatID)
}

// spokenBy reports whether m starts with name in bold on its own line.
func spokenBy(m telegramtest.Message, name string) bool {
	return strings.HasPrefix(m.Text, name+"\n") && len(m.Entities) > 0 && m.Entities[0].Type == "bold" &&
		m.Entities[0].Offset == 0 && m.Entities[0].Length == len(name) && strings.EqualFold(m.ParseMode, "HTML")
}

func TestSceneRepliesStartWithTheSpeakersNameInBold(t *testing.T) {
	t.Parallel()
	h := newSceneHarness(t)
	h.start()
	h.scene(privateRef(alice))

	h.tg.SendText(alice, "Ilse, is the lake calm tonight?")
	r := h.waitReplies(alice.ID, 1)
	if !spokenBy(r[0], "Ilse") || !strings.Contains(r[0].Text, "is the lake calm") {
		t.Errorf("reply %q (entities %+v), want Ilse's, her name in bold first", r[0].Text, r[0].Entities)
	}

	h.tg.SendText(alice, "@Maren and the lantern?")
	r = h.waitReplies(alice.ID, 2)
	if !spokenBy(r[1], "Maren") {
		t.Errorf("reply %q, want Maren's under her name", r[1].Text)
	}

	h.tg.SendText(alice, "@Ilse @Maren good night, both of you.")
	r = h.waitReplies(alice.ID, 4)
	if !spokenBy(r[2], "Ilse") || !spokenBy(r[3], "Maren") || r[2].ID >= r[3].ID {
		t.Errorf("two mentions answered by %q then %q, want Ilse then Maren, each its own message", r[2].Text, r[3].Text)
	}
	if n := h.ai.Count(); n != 4 {
		t.Errorf("model calls = %d, want one per reply", n)
	}
}

func TestSceneReplyToABoldNamedMessageGoesToThatCharacter(t *testing.T) {
	t.Parallel()
	h := newSceneHarness(t)
	h.start()
	h.scene(groupRef(tavern))

	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot Ilse, who are you?", 0)
	ilse := h.waitReplies(tavern.ID, 1)[0]
	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot Maren, and you?", 0)
	if r := h.waitReplies(tavern.ID, 2); !spokenBy(r[1], "Maren") {
		t.Fatalf("second reply %q, want Maren's", r[1].Text)
	}
	// Maren spoke last: without the reply's signal she would answer.
	h.tg.SendGroupText(tavern, bob, "Tell me more.", ilse.ID)
	r := h.waitReplies(tavern.ID, 3)
	if !spokenBy(r[2], "Ilse") || !strings.Contains(r[2].Text, "Tell me more.") {
		t.Errorf("a reply to Ilse's message was answered with %q, want Ilse", r[2].Text)
	}
}

func TestOneCardChatPrintsNoName(t *testing.T) {
	t.Parallel()
	h := newSceneHarness(t)
	h.start()
	h.tg.SendText(bob, "/start lantern-keeper")
	h.waitText(bob.ID, "Maren")
	h.tg.SendText(bob, "Maren, hello.")
	r := h.waitReplies(bob.ID, 1)
	if len(r[0].Entities) > 0 || strings.HasPrefix(r[0].Text, "Maren\n") {
		t.Errorf("a one-card reply %q carries a name (entities %+v)", r[0].Text, r[0].Entities)
	}
}

func TestCastAndWhisperCommands(t *testing.T) {
	t.Parallel()
	h := newSceneHarness(t)
	h.start()
	var names []string
	for _, c := range h.tg.Commands() {
		names = append(names, c.Command)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "cast") || !strings.Contains(got, "whisper") {
		t.Errorf("published commands %q, want cast and whisper", got)
	}
	h.scene(privateRef(alice))
	h.tg.SendText(alice, "/cast")
	list := h.waitText(alice.ID, "The cast:")
	if !strings.Contains(list.Text, "Maren") || !strings.Contains(list.Text, "Ilse") {
		t.Errorf("/cast answered %q", list.Text)
	}
	h.tg.SendText(alice, "/whisper Ilse the key is under the third stone")
	r := h.waitReplies(alice.ID, 1)
	if !spokenBy(r[0], "Ilse") || !strings.Contains(r[0].Text, "third stone") {
		t.Errorf("the whisper was answered with %q, want Ilse", r[0].Text)
	}

	// In a group the whisper's answer goes to the writer alone.
	h.scene(groupRef(tavern))
	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot Maren, hello.", 0)
	h.waitReplies(tavern.ID, 1)
	h.tg.SendGroupText(tavern, alice, "/whisper Ilse meet me at the pier", 0)
	r = h.waitReplies(alice.ID, 2)
	if !spokenBy(r[1], "Ilse") || !strings.Contains(r[1].Text, "meet me at the pier") {
		t.Errorf("the group whisper was answered privately with %q, want Ilse", r[1].Text)
	}
	for _, m := range h.tg.Messages(tavern.ID) {
		if m.From.ID == h.tg.Bot().ID && strings.Contains(m.Text, "pier") {
			t.Errorf("the whisper's answer reached the group: %q", m.Text)
		}
	}
}

func TestMemoryInAGroupGoesToTheAskerAlone(t *testing.T) {
	t.Parallel()
	h := newSceneHarness(t)
	h.start()
	h.scene(groupRef(tavern))
	h.tg.SendText(alice, "/start")
	h.waitText(alice.ID, "Choose a character")
	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot Maren, hello.", 0)
	h.waitReplies(tavern.ID, 1)

	h.tg.SendGroupText(tavern, alice, "/memory", 0)
	h.waitText(alice.ID, "This chat's recap")
	if n := h.count(tavern.ID, "This chat's recap"); n != 0 {
		t.Errorf("/memory answered in the group %d times", n)
	}

	// Bob never opened a private chat with the bot: the group hears that
	// he must, and nothing of the memory.
	h.tg.NeverStarted(bob.ID)
	h.tg.SendGroupText(tavern, bob, "/memory", 0)
	got := h.waitText(tavern.ID, "private chat")
	if !strings.Contains(got.Text, "@"+h.tg.Bot().UserName) || strings.Contains(got.Text, "This chat's recap") {
		t.Errorf("the group was told %q", got.Text)
	}
	if n := h.count(tavern.ID, "This chat's recap"); n != 0 {
		t.Errorf("/memory answered in the group %d times", n)
	}
	if len(h.tg.Messages(bob.ID)) != 0 {
		t.Errorf("a private chat with bob has messages though he never started one")
	}
}

func TestLeadNameReadsTheBoldHead(t *testing.T) {
	t.Parallel()
	bold := func(n int) []tgbotapi.MessageEntity {
		return []tgbotapi.MessageEntity{{Type: "bold", Offset: 0, Length: n}}
	}
	tests := []struct {
		name, text string
		ents       []tgbotapi.MessageEntity
		want       string
	}{
		{"name line", "Ilse\nThe lake is calm.", bold(4), "Ilse"},
		{"astral plane name", "𝓜ara\nhi", bold(5), "𝓜ara"},
		{"chinese", "苏砚\n外乡人？", bold(2), "苏砚"},
		{"no entities (one-card reply)", "Ilse\nThe lake is calm.", nil, ""},
		{"bold not at the start", "Ilse\nThe lake is calm.", []tgbotapi.MessageEntity{{Type: "bold", Offset: 5, Length: 3}}, ""},
		{"italic head", "Ilse\nhi", []tgbotapi.MessageEntity{{Type: "italic", Offset: 0, Length: 4}}, ""},
		{"bold without its own line", "Ilse says hi", bold(4), ""},
		{"bold is the whole text", "Ilse", bold(4), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := leadName(tt.text, tt.ents); got != tt.want {
				t.Errorf("leadName(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestSceneHeadIsEscapedAndFitsTheLimit(t *testing.T) {
	t.Parallel()
	if got, want := headHTML("<Mara & Co>"), "<b>&lt;Mara &amp; Co&gt;</b>\n"; got != want {
		t.Errorf("headHTML = %q, want %q", got, want)
	}
	s := &sink{name: strings.Repeat("N", 40)}
	for i, p := range s.pieces(strings.Repeat("word ", 2000)) {
		if n := utf16Len(s.head(i)) + 1 + utf16Len(p); n > maxText {
			t.Errorf("piece %d with its head is %d units, over %d", i, n, maxText)
		}
	}
}
