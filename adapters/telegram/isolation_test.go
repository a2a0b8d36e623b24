package telegram

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/memorytest"
	"troupe/memory"
)

// TestCrossChatMemoryStaysWithItsUser: a fact Alice told in her DM reaches
// her next chat through the resident summary, and never Bob's DM with the
// same card, nor a group Alice plays in (a group is its own space).
func TestCrossChatMemoryStaysWithItsUser(t *testing.T) {
	t.Parallel()
	const fact = "the key is under the blue stone"
	h := newHarness(t)
	h.cfg.AllowGroups = true
	h.ai.SetResponder(memorytest.Remembering())
	h.tune = func(a *Adapter) { a.editInterval = 50 * time.Millisecond }
	h.start()
	ctx := context.Background()
	card, _ := h.lib.Default()
	if strings.Contains(card.Description+card.Scenario+card.FirstMes+card.MesExample, "blue stone") {
		t.Fatal("the card already mentions the fact")
	}

	// Alice tells the fact, ends the chat with /new, and its memory is
	// written: recap, then consolidation for (card, Alice).
	h.tg.SendText(alice, "Listen: "+fact+".")
	h.waitText(alice.ID, "blue stone")
	ch, err := h.store.Channel(ctx, "telegram:1001")
	if err != nil {
		t.Fatal(err)
	}
	told := ch.CurrentChatID
	waitFor(t, "the reply stored", func() bool { return len(h.messages(alice.ID)) == 3 })
	h.tg.SendText(alice, "/new")
	waitFor(t, "the new chat", func() bool {
		ch, err := h.store.Channel(ctx, "telegram:1001")
		return err == nil && ch.CurrentChatID != told && len(h.messages(alice.ID)) == 4
	})
	chat, err := h.store.Chat(ctx, told)
	if err != nil || chat.SpaceID != "telegram:user:1001" {
		t.Fatalf("the told chat's space = %q (%v), want telegram:user:1001", chat.SpaceID, err)
	}
	if res, err := h.mem.Recap(ctx, told); err != nil || res.Outcome != memory.Written {
		t.Fatalf("recap = %+v, %v", res, err)
	}
	if res, err := h.mem.Consolidate(ctx, card.ID, chat.SpaceID); err != nil || res.Outcome != memory.Written {
		t.Fatalf("consolidation = %+v, %v", res, err)
	}

	// Positive control: Alice's next chat is told the fact.
	h.tg.SendText(alice, "Do you remember where the key is? (alice)")
	h.waitText(alice.ID, "(alice)")
	if prev := memorytest.Previously(memorytest.TurnRequest(t, h.ai, "(alice)")); !strings.Contains(prev, fact) {
		t.Fatalf("Alice's next chat was not told the fact; previously = %q", prev)
	}

	// Bob's DM, and a group where Alice herself asks: nothing of it.
	h.tg.SendText(bob, "Do you remember where the key is? (bob)")
	group := telegramtest.Chat{ID: -1001234567890, Title: "Harbour tavern"}
	h.tg.SendGroupText(group, alice, "@troupe_test_bot do you remember where the key is? (group)", 0)
	h.waitText(bob.ID, "(bob)")
	h.waitText(group.ID, "(group)")
	for _, probe := range []string{"(bob)", "(group)"} {
		r := memorytest.TurnRequest(t, h.ai, probe)
		if p := memorytest.Previously(r); p != "" {
			t.Errorf("%s: the prompt has a Previously block: %q", probe, p)
		}
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "blue stone") || strings.Contains(m.Content, told) {
				t.Errorf("%s: Alice's memory leaked into a %s message: %q", probe, m.Role, m.Content)
			}
		}
	}
	for _, space := range []string{"telegram:user:1002", "telegram:group:-1001234567890"} {
		if r, err := h.store.Resident(ctx, card.ID, space); err != nil || r != "" {
			t.Errorf("space %s has a resident summary %q (%v)", space, r, err)
		}
	}
}
