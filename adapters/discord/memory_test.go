package discord

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/fakes/memorytest"
	"troupe/models/testenv"
)

// TestMemoryInAGuildChannelIsTheAskersAndThisChannels: Maren plays in two
// channels of one guild and forms a belief in each. Bob, a plain member,
// runs /memory in the public channel: the answer is ephemeral, holds the
// belief formed there (the control) and nothing of the other channel's,
// no ledger and no failure's reason; the channel itself shows none of it.
func TestMemoryInAGuildChannelIsTheAskersAndThisChannels(t *testing.T) {
	t.Parallel()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{dsn: b.DSN, recorder: true})
			vault := h.discord.AddChannel(h.guild, "vault")
			var mu sync.Mutex
			belief := ""
			believe := func(s string) { mu.Lock(); belief = s; mu.Unlock() }
			h.model.SetResponder(memorytest.Believing(&memorytest.Scribe{}, func() string { mu.Lock(); defer mu.Unlock(); return belief }))
			ctx := context.Background()
			card, _ := h.p.Cards().Default()
			if err := h.p.Bind(ctx, h.ref(vault), card.ID); err != nil {
				t.Fatal(err)
			}
			// play posts four beats in a channel, each after the last
			// reply, records them and reflects: Maren believes what says.
			play := func(channel string, who []discordtest.User, line, says string) string {
				t.Helper()
				for i := 1; i <= 4; i++ {
					quote := fmt.Sprintf("Beat %d: %s", i, line)
					h.discord.Post(discordtest.Post{ChannelID: channel, Author: who[i%len(who)], Content: quote})
					waitFor(t, 15*time.Second, func() bool { return h.replied(channel, i, quote) }, "reply %d in %s", i, channel)
				}
				ch, err := h.store.Channel(ctx, "discord:"+channel)
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
			play(vault, []discordtest.User{h.ada}, "the vault code is seven-four-one.", "The vault opens with seven-four-one.")
			hall := play(h.channel, []discordtest.User{h.ada, h.bob}, "I shiver by the door and ask for a lamp.", "The visitor in the hall fears the dark.")
			chat, err := h.store.Chat(ctx, hall)
			if err != nil {
				t.Fatal(err)
			}
			if bs, err := h.store.Beliefs(ctx, chat.SpaceID, ""); err != nil || len(bs) != 2 {
				t.Fatalf("beliefs of the guild = %+v, %v; want the vault's and the hall's", bs, err)
			}
			if err := h.store.DB().Exec("INSERT INTO job_records (kind, key, outcome, reason, failures, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
				"recap", hall, "failed", "scribe: POST https://llm.example/v1?api_key=sk-LEAKED: 401", 1, time.Now()).Error; err != nil {
				t.Fatal(err)
			}

			mem := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "memory"})
			waitFor(t, 10*time.Second, func() bool {
				for _, m := range mem.Messages() {
					if strings.Contains(m.Content, "Owed, failing") || strings.Contains(m.Content, "Why:") {
						return true
					}
				}
				return false
			}, "the memory answer")
			var got []string
			for _, m := range mem.Messages() {
				if !m.Ephemeral {
					t.Errorf("/memory answered publicly: %q", m.Content)
				}
				got = append(got, m.Content)
			}
			for _, cb := range mem.Callbacks() {
				if !cb.Ephemeral {
					t.Errorf("/memory callback %+v is not ephemeral", cb)
				}
			}
			out := strings.Join(got, "\n")
			if !strings.Contains(out, "fears the dark") {
				t.Errorf("Bob is not shown the belief formed in this channel:\n%s", out)
			}
			for _, leak := range []string{"seven-four-one", "Ledger", `"place"`, "sk-LEAKED", "llm.example"} {
				if strings.Contains(out, leak) {
					t.Errorf("Bob is shown %q:\n%s", leak, out)
				}
			}
			for _, m := range h.discord.Messages(h.channel) {
				if strings.Contains(m.Content, "fears the dark") || strings.Contains(m.Content, "Owed, failing") {
					t.Errorf("the channel shows the memory: %+v", m)
				}
			}
		})
	}
}
