package telegram

import (
	"context"
	"testing"

	"troupe/adapters/telegram/telegramtest"
	"troupe/models"
)

// currentChat is the current chat of a Telegram chat's channel.
func (h *harness) currentChat(chatID int64) string {
	h.t.Helper()
	ch, err := h.store.Channel(context.Background(), "telegram:"+itoa(chatID))
	if err != nil {
		h.t.Fatal(err)
	}
	return ch.CurrentChatID
}

// TestGroupRightsOfRegenAndNew: in a group, Alice's line is answered.
// Carol, neither its writer nor an administrator, is refused /regen with
// no model call; Alice and Bob (an administrator) each have the reply
// written again. Alice is refused /new and the chat goes on; Bob's /new
// ends it.
func TestGroupRightsOfRegenAndNew(t *testing.T) {
	t.Parallel()
	carol := telegramtest.User{ID: 1003, FirstName: "Carol", UserName: "carol", LanguageCode: "en"}
	h := newHarness(t)
	h.cfg.AllowGroups = true
	h.start()
	h.tg.SetAdmin(tavern.ID, bob.ID)
	if err := h.p.Bind(context.Background(), groupRef(tavern), "lantern-keeper"); err != nil {
		t.Fatal(err)
	}
	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot The bell rang twice.", 0)
	h.waitReplies(tavern.ID, 1)
	chat := h.currentChat(tavern.ID)
	calls := h.ai.Count()

	h.tg.SendGroupText(tavern, carol, "/regen", 0)
	h.waitText(tavern.ID, "Only the player whose message")
	if n := h.ai.Count(); n != calls {
		t.Errorf("Carol's refused /regen made %d model calls", n-calls)
	}
	h.tg.SendGroupText(tavern, alice, "/regen", 0)
	h.waitReplies(tavern.ID, 2)
	h.tg.SendGroupText(tavern, bob, "/regen", 0)
	h.waitReplies(tavern.ID, 3)
	if n := h.ai.Count(); n != calls+2 {
		t.Errorf("the allowed /regen made %d model calls, want 2", n-calls)
	}
	if got := h.count(tavern.ID, "Only the player whose message"); got != 1 {
		t.Errorf("%d refusals of /regen, want Carol's alone", got)
	}

	h.tg.SendGroupText(tavern, alice, "/new", 0)
	h.waitText(tavern.ID, "may end its chat")
	if got := h.currentChat(tavern.ID); got != chat {
		t.Fatalf("Alice's refused /new ended the chat")
	}
	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot The bell rang a third time.", 0)
	h.waitReplies(tavern.ID, 4)
	if got := h.currentChat(tavern.ID); got != chat {
		t.Errorf("the chat did not go on after the refused /new")
	}
	h.tg.SendGroupText(tavern, bob, "/new", 0)
	h.waitText(tavern.ID, "New chat started")
	if got := h.currentChat(tavern.ID); got == chat || got == "" {
		t.Errorf("the administrator's /new kept the chat")
	}
}

// TestAlternatingStartInAGroupReusesEmptyChats: an administrator switches
// the group between two cards ten times with /start; nobody plays, so the
// group is left with one chat of each card, not ten.
func TestAlternatingStartInAGroupReusesEmptyChats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "lantern-keeper", "tea-house")
	h.cfg.AllowGroups = true
	h.start()
	h.tg.SetAdmin(tavern.ID, bob.ID)
	for i := 0; i < 10; i++ {
		card := "lantern-keeper"
		if i%2 == 1 {
			card = "tea-house"
		}
		h.tg.SendGroupText(tavern, bob, "/start "+card, 0)
	}
	waitFor(t, "ten greetings", func() bool { return len(h.tg.Messages(tavern.ID)) >= 10 })
	ch, err := h.store.Channel(context.Background(), "telegram:"+itoa(tavern.ID))
	if err != nil {
		t.Fatal(err)
	}
	if ch.CardID != "tea-house" {
		t.Errorf("the group plays %q, want the last card chosen", ch.CardID)
	}
	var chats int64
	h.store.DB().Model(&models.Chat{}).Where("channel_id = ?", ch.ID).Count(&chats)
	if chats > 2 {
		t.Errorf("ten /start alternating two cards made %d chats, want at most 2", chats)
	}
	// The chat taken up again still plays.
	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot Is the tea ready?", 0)
	h.waitReplies(tavern.ID, 1)
	if got := h.currentChat(tavern.ID); got != ch.CurrentChatID {
		t.Errorf("the reply went to chat %s, want the current %s", got, ch.CurrentChatID)
	}
}
