package discord

import (
	"image/color"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/cards"
	"troupe/cards/cardstest"
)

// pictureCard makes the test card one with a picture and no avatar URL.
func pictureCard(t *testing.T, pic []byte) func(*cards.Card) {
	return func(c *cards.Card) { c.Avatar, c.Image = "", pic }
}

// TestCardPictureIsTheWebhookAvatar: a card with a picture and no avatar
// URL speaks through a webhook made with the picture, made once and reused.
func TestCardPictureIsTheWebhookAvatar(t *testing.T) {
	t.Parallel()
	pic := cardstest.Picture(t, 4, 4, color.RGBA{G: 200, A: 255})
	h := newHarness(t, setup{card: pictureCard(t, pic)})
	h.say("Hello, keeper.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello, keeper.") }, "the character's reply")
	got := h.characterMessages(h.channel)[0]
	want := avatarDataURI(pic)
	if got.WebhookID == "" || got.AvatarURL != "" || got.WebhookAvatar != want {
		t.Fatalf("reply posted by webhook %q, avatar URL %q, webhook avatar %.40q; want the card's picture", got.WebhookID, got.AvatarURL, got.WebhookAvatar)
	}
	h.say("And the light?")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 2, "And the light?") }, "the second reply")
	hooks := h.discord.WebhookInfos(h.channel)
	if len(hooks) != 1 || !strings.HasPrefix(hooks[0].Name, "troupe:") || hooks[0].Avatar != want {
		t.Errorf("webhooks = %+v, want one troupe: webhook with the picture", hooks)
	}
	if second := h.characterMessages(h.channel)[1]; second.WebhookID != got.WebhookID {
		t.Errorf("the second reply came through webhook %s, not %s", second.WebhookID, got.WebhookID)
	}
}

// TestCardPictureInAFullChannel: in a channel at Discord's 15 webhooks the
// card takes over the picture webhook of another card; with none of its
// own to take, it speaks as the bot.
func TestCardPictureInAFullChannel(t *testing.T) {
	t.Parallel()
	pic := cardstest.Picture(t, 4, 4, color.RGBA{B: 200, A: 255})
	h := newHarness(t, setup{card: pictureCard(t, pic)})
	// The adapter looks at webhooks when it first speaks in the channel.
	for i := 0; i < discordtest.MaxWebhooks-1; i++ {
		h.discord.AddForeignWebhook(h.channel)
	}
	other := h.discord.AddAppWebhook(h.channel, "troupe:00000000:00000000", "")
	h.say("Hello, keeper.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello, keeper.") }, "the character's reply")
	got := h.characterMessages(h.channel)[0]
	if got.WebhookID != other || got.WebhookAvatar != avatarDataURI(pic) {
		t.Errorf("reply through webhook %q with avatar %.40q; want %s changed to the picture", got.WebhookID, got.WebhookAvatar, other)
	}
	if n := len(h.discord.WebhookInfos(h.channel)); n != discordtest.MaxWebhooks {
		t.Errorf("%d webhooks, want %d", n, discordtest.MaxWebhooks)
	}

	full := newHarness(t, setup{card: pictureCard(t, pic)})
	for i := 0; i < discordtest.MaxWebhooks; i++ {
		full.discord.AddForeignWebhook(full.channel)
	}
	full.say("Hello, keeper.")
	waitFor(t, 10*time.Second, func() bool { return full.replied(full.channel, 1, "Hello, keeper.") }, "the reply as the bot")
	if m := full.characterMessages(full.channel)[0]; m.WebhookID != "" {
		t.Errorf("with 15 foreign webhooks the reply came through webhook %s", m.WebhookID)
	}
}

// TestCardPictureChangedEditsItsWebhook: the webhook made for an older
// picture of the card (before a restart) gets the new picture instead of a
// second webhook.
func TestCardPictureChangedEditsItsWebhook(t *testing.T) {
	t.Parallel()
	pic := cardstest.Picture(t, 4, 4, color.RGBA{R: 90, A: 255})
	h := newHarness(t, setup{card: pictureCard(t, pic)})
	old := h.discord.AddAppWebhook(h.channel, avatarHookName("lantern-keeper", []byte("an older picture")), "")
	h.say("Hello, keeper.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello, keeper.") }, "the character's reply")
	got := h.characterMessages(h.channel)[0]
	hooks := h.discord.WebhookInfos(h.channel)
	if got.WebhookID != old || len(hooks) != 1 || hooks[0].Name != avatarHookName("lantern-keeper", pic) || hooks[0].Avatar != avatarDataURI(pic) {
		t.Errorf("reply through %s; webhooks %+v; want %s changed to the new picture", got.WebhookID, hooks, old)
	}
	if n := len(h.discord.CallsTo("PATCH /webhooks/*")); n != 1 {
		t.Errorf("webhook changes = %d, want 1", n)
	}
}
