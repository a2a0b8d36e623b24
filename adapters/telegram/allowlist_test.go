package telegram

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/memorytest"
	"troupe/memory"
	"troupe/models"
)

// TestAllowedUsersOnEveryPath: a user dropped from allowed_users is refused
// on every path, in a DM (text, each command, each kind of button, including
// buttons left from before) and in a group (silence, or an alert for a
// button): the pipeline never hears of it, the model is not called and
// nothing is stored or changed. Alice, on the list, is served throughout.
func TestAllowedUsersOnEveryPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "lantern-keeper", "tea-house")
	h.cfg.AllowGroups = true
	h.ai.SetResponder((&memorytest.Scribe{}).Respond)
	h.tune = func(a *Adapter) { a.editInterval = 50 * time.Millisecond }
	h.start()
	ctx := context.Background()
	group := telegramtest.Chat{ID: -1001234567890, Title: "Harbour tavern"}

	// Before the list: Bob plays, and holds a card keyboard and a /forget
	// question; the group plays too, and has a card keyboard.
	h.tg.SendText(bob, "/start lantern-keeper")
	h.tg.SendText(bob, "I found a red lantern")
	h.waitText(bob.ID, `You said "I found a red lantern"`)
	waitFor(t, "Bob's reply stored", func() bool { return len(h.messages(bob.ID)) == 3 })
	if res, err := h.mem.Recap(ctx, h.messages(bob.ID)[0].ChatID); err != nil || res.Outcome != memory.Written {
		t.Fatalf("recap = %+v, %v", res, err)
	}
	h.tg.SendText(bob, "/start")
	keyboard := h.waitText(bob.ID, "Choose a character")
	h.tg.SendText(bob, "/forget")
	question := h.waitText(bob.ID, "Forget")
	if len(question.Buttons) != 1 || len(question.Buttons[0]) != 2 {
		t.Fatalf("/forget answered %q with buttons %v, want a question", question.Text, question.Buttons)
	}
	h.tg.SetAdmin(group.ID, bob.ID)
	h.tg.SendGroupText(group, bob, "/start@troupe_test_bot lantern-keeper", 0)
	h.tg.SendGroupText(group, bob, "@troupe_test_bot hello", 0)
	h.waitText(group.ID, `You said "Bob: hello"`)
	h.tg.SendGroupText(group, bob, "/start@troupe_test_bot", 0)
	groupKeyboard := h.waitText(group.ID, "Choose a character")
	if err := h.store.SetPersona(ctx, models.Persona{UserKey: "telegram:1002", Name: "Bob", Description: "a sailor"}); err != nil {
		t.Fatal(err)
	}

	// Only Alice may play now.
	h.stop()
	h.cfg.AllowedUsers = []string{"@alice"}
	h.start()
	type state struct {
		messages, chats, tombstones, recaps int64
		card, chat                          string
		persona                             string
	}
	snapshot := func(chatID int64) state {
		var s state
		key := "telegram:" + itoa(chatID)
		h.store.DB().Model(&models.Message{}).Where("chat_id IN (?)", h.store.DB().Model(&models.Chat{}).Select("id").Where("channel_id = ?", key)).Count(&s.messages)
		h.store.DB().Model(&models.Chat{}).Where("channel_id = ?", key).Count(&s.chats)
		h.store.DB().Model(&models.Tombstone{}).Count(&s.tombstones)
		h.store.DB().Model(&models.Recap{}).Count(&s.recaps)
		if ch, err := h.store.Channel(ctx, key); err == nil {
			s.card, s.chat = ch.CardID, ch.CurrentChatID
		}
		if p, err := h.store.Persona(ctx, "telegram:1002"); err == nil {
			s.persona = p.Name + "|" + p.Description
		}
		return s
	}
	dmBefore, groupBefore := snapshot(bob.ID), snapshot(group.ID)
	if dmBefore.messages != 3 || dmBefore.chats != 1 || dmBefore.recaps != 1 || dmBefore.card != "lantern-keeper" || groupBefore.chats != 1 || groupBefore.messages != 3 {
		t.Fatalf("before: Bob's DM %+v, the group %+v", dmBefore, groupBefore)
	}
	calls := h.ai.Count()
	answered := len(h.tg.Calls("answerCallbackQuery"))
	dmTexts, groupTexts := len(h.texts(bob.ID)), len(h.texts(group.ID))
	const denied = "this bot plays only for the people its owner has invited"

	// In the DM, every message gets the adapter's refusal, and nothing else.
	dm := []string{
		"Hello again",
		"/new",
		"/regen",
		"/forget",
		"/start",
		"/start tea-house",
		"/card set tea-house",
		"/memory delete-recap " + dmBefore.chat,
		"/persona Robert | a thief",
		"/compact",
	}
	for _, text := range dm {
		h.tg.SendText(bob, text)
	}
	presses := []struct {
		chatID int64
		msgID  int
		data   string
	}{
		{bob.ID, keyboard.ID, keyboard.Buttons[1][0].Data},
		{bob.ID, question.ID, question.Buttons[0][0].Data},
		{group.ID, groupKeyboard.ID, groupKeyboard.Buttons[1][0].Data},
	}
	for _, p := range presses {
		h.tg.Press(bob, p.chatID, p.msgID, p.data)
	}
	// In the group, Bob is not heard at all.
	h.tg.SendGroupText(group, bob, "@troupe_test_bot are you there?", 0)
	h.tg.SendGroupText(group, bob, "/new@troupe_test_bot", 0)
	h.tg.SendGroupText(group, bob, "/forget@troupe_test_bot", 0)

	// Alice, after all of them, is answered.
	h.tg.SendText(alice, "/start lantern-keeper")
	h.tg.SendText(alice, "I am on the list")
	h.waitText(alice.ID, `You said "I am on the list"`)
	waitFor(t, "every update handled", func() bool { return len(h.inboxState().Pending) == 0 && len(h.tg.Queued()) == 0 })
	// Nothing pending means every update was settled: what Bob sent was
	// refused or dropped by then.
	waitFor(t, "every press answered", func() bool { return len(h.tg.Calls("answerCallbackQuery")) == answered+len(presses) })

	if n := h.count(bob.ID, denied); n != len(dm) {
		t.Errorf("Bob got %d refusals, want %d", n, len(dm))
	}

	for _, c := range h.tg.Calls("answerCallbackQuery")[answered:] {
		if !strings.Contains(c.Params.Get("text"), denied) {
			t.Errorf("a press was answered %q, want the refusal", c.Params.Get("text"))
		}
	}
	if n := len(h.texts(bob.ID)) - dmTexts; n != len(dm) {
		t.Errorf("Bob's DM got %d new messages, want only the %d refusals: %q", n, len(dm), h.texts(bob.ID)[dmTexts:])
	}
	for _, m := range h.tg.Messages(bob.ID) {
		if (m.ID == keyboard.ID || m.ID == question.ID) && m.Buttons == nil {
			t.Errorf("a refused press took the keyboard off %q", m.Text)
		}
	}
	if n := len(h.texts(group.ID)); n != groupTexts {
		t.Errorf("the group got %d new messages, want none: %q", n-groupTexts, h.texts(group.ID)[groupTexts:])
	}
	if n := h.ai.Count(); n != calls+1 {
		t.Errorf("model calls = %d, want %d (Alice's only)", n, calls+1)
	}
	if got := snapshot(bob.ID); got != dmBefore {
		t.Errorf("Bob's DM changed: %+v, was %+v", got, dmBefore)
	}
	if got := snapshot(group.ID); got != groupBefore {
		t.Errorf("the group changed: %+v, was %+v", got, groupBefore)
	}
}
