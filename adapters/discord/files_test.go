package discord

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/media"
)

// A message's reply posts a file as the character spoke: an audio
// attachment through the channel's webhook under the card's name and
// avatar; a picture with its caption as the text; where the bot may not
// manage webhooks, as the bot with the name in bold. A file over Discord's
// upload limit is refused with media.ErrTooLarge and nothing is posted.
func TestReplySinkSendsFiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	ctx := context.Background()
	s, err := restSession(h.a.cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := func(channelID string) *reply {
		r := h.a.newReply(s, h.a.place(ctx, s, h.guild, channelID))
		r.Speak(ctx, bot.Speaker{CardID: "lantern-keeper", Name: "Maren", AvatarURL: cardAvatar, Language: "en"})
		return r
	}
	spoken := []byte("OggS\x00\x02 The lamp is lit.")
	if err := sink(h.channel).SendFile(ctx, media.File{Kind: media.Voice, Name: "reply.ogg", MIME: "audio/ogg", Data: spoken}); err != nil {
		t.Fatalf("send a voice file: %v", err)
	}
	pic := []byte("\x89PNG\r\n\x1a\n not really")
	if err := sink(h.channel).SendFile(ctx, media.File{Kind: media.Image, Name: "picture.png", MIME: "image/png", Data: pic, Caption: "The lamp room at dusk."}); err != nil {
		t.Fatalf("send a picture: %v", err)
	}
	msgs := h.discord.Messages(h.channel)
	if len(msgs) != 2 {
		t.Fatalf("%d messages in the channel, want 2", len(msgs))
	}
	v, p := msgs[0], msgs[1]
	if v.WebhookID == "" || v.Username != "Maren" || v.AvatarURL != cardAvatar || v.Content != "" {
		t.Errorf("voice message posted as %q (webhook %q, avatar %q) with text %q; want Maren's webhook message without text", v.Username, v.WebhookID, v.AvatarURL, v.Content)
	}
	if len(v.Attachments) != 1 || v.Attachments[0].Filename != "reply.ogg" || v.Attachments[0].ContentType != "audio/ogg" || !bytes.Equal(v.Attachments[0].Data, spoken) {
		t.Errorf("voice attachments %+v", v.Attachments)
	}
	if p.Username != "Maren" || p.Content != "The lamp room at dusk." || len(p.Attachments) != 1 || p.Attachments[0].ContentType != "image/png" || !bytes.Equal(p.Attachments[0].Data, pic) {
		t.Errorf("picture message %q %q %+v", p.Username, p.Content, p.Attachments)
	}

	// Without Manage Webhooks: as the bot, the name in bold.
	quiet := h.discord.AddChannel(h.guild, "quiet")
	h.discord.DenyWebhooks(quiet)
	if err := sink(quiet).SendFile(ctx, media.File{Kind: media.Audio, Name: "reply.mp3", MIME: "audio/mpeg", Data: []byte("ID3 hello")}); err != nil {
		t.Fatalf("send as the bot: %v", err)
	}
	got := h.discord.Messages(quiet)
	if len(got) != 1 || got[0].WebhookID != "" || got[0].AuthorID != h.discord.Bot().ID || !strings.HasPrefix(got[0].Content, "**Maren**") ||
		len(got[0].Attachments) != 1 || got[0].Attachments[0].Filename != "reply.mp3" {
		t.Errorf("as the bot: %+v", got)
	}

	// Over the upload limit: refused before any request.
	before := len(h.discord.Calls())
	err = sink(h.channel).SendFile(ctx, media.File{Kind: media.Image, Name: "huge.png", MIME: "image/png", Data: make([]byte, uploadLimit+1)})
	if !errors.Is(err, media.ErrTooLarge) {
		t.Errorf("oversize file: %v, want media.ErrTooLarge", err)
	}
	if n := len(h.discord.Messages(h.channel)); n != 2 {
		t.Errorf("%d messages after the oversize file, want still 2", n)
	}
	for _, c := range h.discord.Calls()[before:] {
		if strings.HasPrefix(c.Path, "/webhooks/") || strings.HasSuffix(c.Path, "/messages") {
			t.Errorf("oversize file still sent: %s", c.Route())
		}
	}
}

// In a scene one message's reply has several speakers; once all replies
// are written the pipeline speaks each, announcing its speaker again
// before its file: each file goes out under its own speaker's name and
// avatar, after the texts.
func TestSpokenFilesKeepTheirSpeakers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	ctx := context.Background()
	s, err := restSession(h.a.cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := h.a.newReply(s, h.a.place(ctx, s, h.guild, h.channel))
	r.Speak(ctx, bot.Speaker{CardID: "lantern-keeper", Name: "Maren", AvatarURL: cardAvatar})
	if err := r.Finish(ctx, "The lamp is lit."); err != nil {
		t.Fatal(err)
	}
	r.Speak(ctx, bot.Speaker{CardID: "ilse", Name: "Ilse", AvatarURL: ilseAvatar})
	if err := r.Finish(ctx, "The ferry waits."); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []bot.Speaker{{CardID: "lantern-keeper", Name: "Maren", AvatarURL: cardAvatar}, {CardID: "ilse", Name: "Ilse", AvatarURL: ilseAvatar}} {
		r.Speak(ctx, sp)
		if err := r.SendFile(ctx, media.File{Kind: media.Voice, Name: "reply.ogg", MIME: "audio/ogg", Data: []byte("OggS " + sp.Name)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, m := range h.discord.Messages(h.channel) {
		s := m.Username + ":" + m.Content
		if len(m.Attachments) == 1 {
			s = m.Username + "@" + m.AvatarURL + ":" + string(m.Attachments[0].Data)
		}
		got = append(got, s)
	}
	want := "Maren:The lamp is lit.|Ilse:The ferry waits.|Maren@" + cardAvatar + ":OggS Maren|Ilse@" + ilseAvatar + ":OggS Ilse"
	if strings.Join(got, "|") != want {
		t.Errorf("channel holds %q, want %q", strings.Join(got, "|"), want)
	}
}
