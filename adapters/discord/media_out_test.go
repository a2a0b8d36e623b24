package discord

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/models"
)

// Pictures and voices out, end to end: a real pipeline with the fake
// model's speech and image endpoints, the adapter, and the fake Discord.

// withOutbound gives the pipeline the fake model's speech and image
// endpoints: it speaks replies and paints.
func withOutbound(o *bot.Options, c *llm.Client) {
	o.Voicer = c
	o.Painter = c
}

// After /voice on by a manager, a message gets the text reply and then an
// audio attachment through the character's webhook, whose bytes hold what
// the reply says; /voice off stops it.
func TestVoiceOnSendsAudioAttachments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withOutbound})
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: manageMessages, Name: "voice", Options: map[string]string{"state": "on"}})
	waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) > 0 }, "the /voice answer")
	if m := ix.Messages()[0]; !strings.Contains(m.Content, "Voice is on") {
		t.Fatalf("/voice on answered %q", m.Content)
	}
	h.say("Sing me the lamp song.")
	waitFor(t, 20*time.Second, func() bool {
		msgs := h.characterMessages(h.channel)
		return len(msgs) == 2 && len(msgs[1].Attachments) == 1
	}, "the text reply and its audio")
	msgs := h.characterMessages(h.channel)
	text, audio := msgs[0], msgs[1]
	if !strings.Contains(text.Content, "Sing me the lamp song.") || len(text.Attachments) != 0 {
		t.Errorf("text reply %+v", text)
	}
	a := audio.Attachments[0]
	if audio.WebhookID == "" || audio.Username != "Maren" || a.Filename != "reply.ogg" || a.ContentType != "audio/ogg" ||
		!bytes.HasPrefix(a.Data, []byte("OggS")) || !bytes.Contains(a.Data, []byte("Sing me the lamp song.")) {
		t.Errorf("audio message from %q (webhook %q): %s %s %q", audio.Username, audio.WebhookID, a.Filename, a.ContentType, a.Data)
	}
	if got := h.userTexts(h.channel); len(got) != 1 {
		t.Errorf("stored user messages %q", got)
	}

	off := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: manageMessages, Name: "voice", Options: map[string]string{"state": "off"}})
	waitFor(t, 10*time.Second, func() bool { return len(off.Messages()) > 0 }, "the /voice off answer")
	h.say("Quietly now.")
	waitFor(t, 20*time.Second, func() bool { return h.replied(h.channel, 3, "Quietly now.") }, "the quiet reply")
	time.Sleep(300 * time.Millisecond)
	if n := len(h.model.RequestsTo(openaitest.SpeechPath)); n != 1 {
		t.Errorf("speech requests %d, want 1 (none after /voice off)", n)
	}
}

// A plain member may not turn voice on in a guild channel.
func TestVoiceOnNeedsAManager(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withOutbound})
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "voice", Options: map[string]string{"state": "on"}})
	waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) > 0 }, "the refusal")
	if m := ix.Messages()[0]; !m.Ephemeral || strings.Contains(m.Content, "Voice is on") {
		t.Errorf("a member's /voice on answered %+v", m)
	}
	h.say("Hello?")
	waitFor(t, 20*time.Second, func() bool { return h.replied(h.channel, 1, "Hello?") }, "the reply")
	time.Sleep(300 * time.Millisecond)
	if n := len(h.model.RequestsTo(openaitest.SpeechPath)); n != 0 {
		t.Errorf("speech requests %d after a refused /voice on", n)
	}
}

// /picture answers the command with an image attachment (a PNG from the
// image endpoint, its caption as the text), public in the channel, and the
// picture's caption enters the chat as an [image: …] line.
func TestPictureCommandPostsAnImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withOutbound})
	h.say("We reach the lighthouse.")
	waitFor(t, 20*time.Second, func() bool { return h.replied(h.channel, 1, "lighthouse") }, "the first reply")
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "picture", Options: map[string]string{"what": "the lamp room"}})
	var pic discordtest.Attachment
	var caption string
	waitFor(t, 20*time.Second, func() bool {
		for _, m := range ix.Messages() {
			if len(m.Attachments) == 1 {
				pic, caption = m.Attachments[0], m.Content
				return !m.Ephemeral
			}
		}
		return false
	}, "a public picture answering /picture")
	if !strings.Contains(caption, "the lamp room") {
		t.Errorf("the picture's text %q is not its caption", caption)
	}
	if pic.ContentType != "image/png" {
		t.Errorf("picture content type %q", pic.ContentType)
	}
	if _, err := png.Decode(bytes.NewReader(pic.Data)); err != nil {
		t.Errorf("the picture is no PNG: %v", err)
	}
	paints := h.model.RequestsTo(openaitest.ImagesPath)
	if len(paints) != 1 || !strings.Contains(paints[0].Prompt, "the lamp room") {
		t.Errorf("image requests %+v, want one asking for the lamp room", paints)
	}
	var stored []models.Message
	h.store.DB().Where("content LIKE ?", "%[image: %").Find(&stored)
	if len(stored) != 1 || !strings.Contains(stored[0].Content, "the lamp room") {
		t.Errorf("stored [image: …] lines %+v, want the picture's caption", stored)
	}
}
