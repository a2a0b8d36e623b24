package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/bot/bottest"
)

// TestEventPanicRecovered: a panic while the adapter handles a message is
// answered in its channel with a short notice and counted; the gateway goes
// on, so the same channel and another one are answered next, and the
// adapter still stops cleanly (the panic gave back its count of work).
func TestEventPanicRecovered(t *testing.T) {
	t.Parallel()
	count := &bottest.PanicCount{}
	h := newHarness(t, setup{observer: count, wrap: func(e bot.Engine) bot.Engine { return bottest.Panicky{Engine: e, Trigger: "crumbling"} }})
	other := h.discord.AddChannel(h.guild, "harbour")
	card, _ := h.p.Cards().Default()
	if err := h.p.Bind(context.Background(), h.ref(other), card.ID); err != nil {
		t.Fatal(err)
	}

	h.say("The crumbling stair gives way.")
	waitFor(t, 10*time.Second, func() bool {
		for _, m := range h.discord.Messages(h.channel) {
			if m.AuthorID == h.discord.Bot().ID && strings.Contains(m.Content, "Something broke") {
				return true
			}
		}
		return false
	}, "the notice of the panic")
	h.say("Hello there")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello there") }, "the reply in the same channel")
	h.discord.Post(discordtest.Post{ChannelID: other, Author: h.bob, Content: "Good evening"})
	waitFor(t, 10*time.Second, func() bool { return h.replied(other, 1, "Good evening") }, "the reply in another channel")
	if n := count.Get("discord_message"); n != 1 {
		t.Errorf("panics counted at discord_message: got %d, want 1", n)
	}
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup's stop
	case <-time.After(8 * time.Second):
		t.Errorf("the adapter did not stop within 8 s: it waits out its drain for the work the panic left counted")
	}
}
