package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/fakes/memorytest"
	"troupe/memory"
)

// TestCrossChatMemoryStaysInItsSpace: a fact told in one guild reaches the
// next chat there through the resident summary, and never a guild playing
// the same card elsewhere, nor the teller's own DM.
func TestCrossChatMemoryStaysInItsSpace(t *testing.T) {
	t.Parallel()
	const fact = "the key is under the blue stone"
	var guildB, roomB string
	h := newHarness(t, setup{
		before: func(d *discordtest.Server) {
			guildB = d.AddGuild("Harbour Guild")
			roomB = d.AddChannel(guildB, "roleplay")
		},
		tuning: func(tu *tuning) { tu.editInterval = 50 * time.Millisecond },
	})
	h.model.SetResponder(memorytest.Remembering())
	ctx := context.Background()
	card, _ := h.p.Cards().Default()
	refB := bot.ChannelRef{Platform: bot.PlatformDiscord, ID: roomB, SpaceKind: bot.SpaceGuild, SpaceID: guildB, Group: true}
	if err := h.p.Bind(ctx, refB, card.ID); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(card.Description+card.Scenario+card.FirstMes+card.MesExample, "blue stone") {
		t.Fatal("the card already mentions the fact")
	}

	// Guild A: the fact is told, the chat ends with /new, and its memory is
	// written: recap, then consolidation for (card, guild A).
	h.say("Listen: " + fact + ".")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, fact) }, "the reply to the fact")
	chA, err := h.store.Channel(ctx, "discord:"+h.channel)
	if err != nil {
		t.Fatal(err)
	}
	told := chA.CurrentChatID
	waitFor(t, 10*time.Second, func() bool { return h.chatMessages(told) == 3 }, "the reply stored")
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: manageChannels, Name: "new"})
	waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) == 1 && len(h.characterMessages(h.channel)) == 2 },
		"the new chat's greeting")
	if chA, _ = h.store.Channel(ctx, "discord:"+h.channel); chA.CurrentChatID == told {
		t.Fatal("/new kept the chat")
	}
	if res, err := h.mem.Recap(ctx, told); err != nil || res.Outcome != memory.Written {
		t.Fatalf("recap = %+v, %v", res, err)
	}
	chat, err := h.store.Chat(ctx, told)
	if err != nil || chat.SpaceID != "discord:guild:"+h.guild {
		t.Fatalf("the told chat's space = %q (%v), want discord:guild:%s", chat.SpaceID, err, h.guild)
	}
	if res, err := h.mem.Consolidate(ctx, card.ID, chat.SpaceID); err != nil || res.Outcome != memory.Written {
		t.Fatalf("consolidation = %+v, %v", res, err)
	}

	// Positive control: guild A's new chat is told the fact, in the
	// Previously block.
	h.say("Do you remember where the key is? (hall)")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 3, "(hall)") }, "the reply in guild A")
	prev := memorytest.Previously(memorytest.TurnRequest(t, h.model, "(hall)"))
	if !strings.Contains(prev, fact) {
		t.Fatalf("guild A's next chat was not told the fact; previously = %q", prev)
	}

	// Guild B plays the same card for the same person: nothing of guild A.
	h.discord.Post(discordtest.Post{ChannelID: roomB, Author: h.ada, Content: "Do you remember where the key is? (harbour)"})
	waitFor(t, 10*time.Second, func() bool { return h.replied(roomB, 1, "(harbour)") }, "the reply in guild B")
	// A DM is the user's own space: nothing of guild A either.
	dm := h.discord.AddDM(h.ada)
	h.discord.Post(discordtest.Post{ChannelID: dm, Author: h.ada, Content: "Do you remember where the key is? (dm)"})
	waitFor(t, 10*time.Second, func() bool {
		for _, m := range h.discord.Messages(dm) {
			if m.AuthorID == h.discord.Bot().ID && strings.Contains(m.Content, "(dm)") && strings.Contains(m.Content, "listening") {
				return true
			}
		}
		return false
	}, "the reply in the DM")

	for _, probe := range []string{"(harbour)", "(dm)"} {
		r := memorytest.TurnRequest(t, h.model, probe)
		if p := memorytest.Previously(r); p != "" {
			t.Errorf("%s: the prompt has a Previously block: %q", probe, p)
		}
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "blue stone") || strings.Contains(m.Content, told) {
				t.Errorf("%s: guild A's memory leaked into a %s message: %q", probe, m.Role, m.Content)
			}
		}
	}
	for _, space := range []string{"discord:guild:" + guildB, "discord:user:" + h.ada.ID} {
		if r, err := h.store.Resident(ctx, card.ID, space); err != nil || r != "" {
			t.Errorf("space %s has a resident summary %q (%v)", space, r, err)
		}
	}
}
