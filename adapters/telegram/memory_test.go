package telegram

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/memorytest"
	"troupe/models/testenv"
)

// TestMemoryInAGroupShowsTheAskerOnlyThisChat: Maren forms a belief in a
// group's first chat, the group starts another with /new, and she forms
// one there. Bob asks /memory in the group: the answer comes to his
// private chat alone and holds this chat's belief (the control), not the
// earlier chat's, no ledger and no failure's reason. Carol, who never
// started the bot, gets the group told to open a private chat, and nothing
// of the memory.
func TestMemoryInAGroupShowsTheAskerOnlyThisChat(t *testing.T) {
	t.Parallel()
	carol := telegramtest.User{ID: 1003, FirstName: "Carol", UserName: "carol", LanguageCode: "en"}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarnessOn(t, b.DSN)
			h.cfg.AllowGroups = true
			h.recorder = true
			var mu sync.Mutex
			belief := ""
			believe := func(s string) { mu.Lock(); belief = s; mu.Unlock() }
			h.ai.SetResponder(memorytest.Believing(&memorytest.Scribe{}, func() string { mu.Lock(); defer mu.Unlock(); return belief }))
			h.start()
			ctx := context.Background()
			if err := h.p.Bind(ctx, groupRef(tavern), "lantern-keeper"); err != nil {
				t.Fatal(err)
			}
			replies := 0
			// play has four beats said in the group, each after the last
			// reply, records them and reflects: Maren believes says.
			play := func(who []telegramtest.User, line, says string) string {
				t.Helper()
				for i := 1; i <= 4; i++ {
					h.tg.SendGroupText(tavern, who[i%len(who)], fmt.Sprintf("@troupe_test_bot Beat %d: %s", i, line), 0)
					replies++
					h.waitReplies(tavern.ID, replies)
				}
				ch, err := h.store.Channel(ctx, "telegram:"+itoa(tavern.ID))
				if err != nil {
					t.Fatal(err)
				}
				believe(says)
				if _, err := h.mem.Record(ctx, ch.CurrentChatID); err != nil {
					t.Fatal(err)
				}
				if _, err := h.mem.Reflect(ctx, ch.CurrentChatID, true); err != nil {
					t.Fatal(err)
				}
				return ch.CurrentChatID
			}
			first := play([]telegramtest.User{alice}, "the vault code is seven-four-one.", "The vault opens with seven-four-one.")
			// Ending the group's chat is an administrator's right.
			h.tg.SetAdmin(tavern.ID, alice.ID)
			h.tg.SendGroupText(tavern, alice, "/new", 0)
			waitFor(t, "a new chat", func() bool {
				ch, err := h.store.Channel(ctx, "telegram:"+itoa(tavern.ID))
				return err == nil && ch.CurrentChatID != first
			})
			replies = len(h.replies(tavern.ID))
			now := play([]telegramtest.User{alice, bob}, "I shiver by the door and ask for a lamp.", "The visitor in the hall fears the dark.")
			if err := h.store.DB().Exec("INSERT INTO job_records (kind, key, outcome, reason, failures, updated_at) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)",
				"recap", now, "failed", "scribe: POST https://llm.example/v1?api_key=sk-LEAKED: 401", 1).Error; err != nil {
				t.Fatal(err)
			}

			h.tg.SendText(bob, "/start")
			h.waitText(bob.ID, "")
			h.tg.SendGroupText(tavern, bob, "/memory", 0)
			got := h.waitText(bob.ID, "Owed, failing").Text
			if !strings.Contains(got, "fears the dark") {
				t.Errorf("Bob is not shown the belief formed in this chat:\n%s", got)
			}
			for _, leak := range []string{"The vault opens", "Ledger", `"place"`, "sk-LEAKED", "llm.example"} {
				if strings.Contains(got, leak) {
					t.Errorf("Bob is shown %q:\n%s", leak, got)
				}
			}

			h.tg.NeverStarted(carol.ID)
			h.tg.SendGroupText(tavern, carol, "/memory", 0)
			told := h.waitText(tavern.ID, "private chat")
			if !strings.Contains(told.Text, "@"+h.tg.Bot().UserName) {
				t.Errorf("the group was told %q", told.Text)
			}
			for _, m := range h.tg.Messages(tavern.ID) {
				for _, leak := range []string{"fears the dark", "The vault opens", "Owed, failing", "Record of this chat"} {
					if strings.Contains(m.Text, leak) {
						t.Errorf("the group was shown %q: %q", leak, m.Text)
					}
				}
			}
			if len(h.tg.Messages(carol.ID)) != 0 {
				t.Errorf("a private chat with carol has messages though she never started one")
			}
		})
	}
}
