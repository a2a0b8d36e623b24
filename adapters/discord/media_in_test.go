package discord

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/models"
)

// Pictures, voice messages and files in, end to end: a real pipeline with
// the fake model (vision, transcriptions), the adapter, and the fake
// Discord and its CDN.

// withMedia gives the pipeline every media endpoint of the fake model: it
// sees pictures and hears voice messages too.
func withMedia(o *bot.Options, c *llm.Client) {
	withOutbound(o, c)
	o.Vision = true
	o.Transcriber = c
}

// picture is a user's image attachment of a colour.
func picture(name, colour string, w, h int) discordtest.Attachment {
	return discordtest.Attachment{Filename: name, ContentType: "image/png", Data: openaitest.Picture(colour, w, h)}
}

// chatRequests are the fake model's chat requests that answered a turn
// (not a caption): those whose first message is the card's system prompt.
func (h *harness) turnRequests() []openaitest.Request {
	var out []openaitest.Request
	for _, r := range h.model.Requests() {
		if r.Path != "/v1/chat/completions" || len(r.Messages) == 0 {
			continue
		}
		if strings.Contains(r.Messages[0].Content, "Maren") {
			out = append(out, r)
		}
	}
	return out
}

// lastUser is the last user message of a request.
func lastUser(r openaitest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// A picture posted with a line reaches the model as an image part of that
// turn's last user message, downscaled to 1024 px; the stored message holds
// its caption, and the next turn's prompt carries the caption as text and
// no pixels.
func TestPictureReachesTheModelAndLaterTurnsCarryItsCaption(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withMedia})
	h.model.SetCaption(func(img openaitest.Image) string { return "a lantern with a " + img.Color + " flame" })
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "Look what I found.",
		Attachments: []discordtest.Attachment{picture("lantern.png", "red", 1600, 1200)}})
	waitFor(t, 20*time.Second, func() bool { return len(h.characterMessages(h.channel)) >= 1 }, "the reply to the picture")
	turns := h.turnRequests()
	if len(turns) != 1 {
		t.Fatalf("%d turn requests, want 1", len(turns))
	}
	first := turns[0]
	if len(first.Images) != 1 || first.Images[0].Color != "red" || max(first.Images[0].Width, first.Images[0].Height) != 1024 {
		t.Fatalf("the turn's image parts = %+v, want one red picture scaled to 1024 px", first.Images)
	}
	if !strings.Contains(lastUser(first), "Look what I found.") {
		t.Errorf("the turn's last user message %q lacks the line", lastUser(first))
	}
	stored := strings.Join(h.userTexts(h.channel), "\n")
	if !strings.Contains(stored, "Look what I found.") || !strings.Contains(stored, "[image: ") || !strings.Contains(stored, "red flame") {
		t.Errorf("stored user message %q: want the line and its caption", stored)
	}

	h.say("What colour was its flame?")
	waitFor(t, 20*time.Second, func() bool { return len(h.turnRequests()) == 2 }, "the second turn")
	second := h.turnRequests()[1]
	if len(second.Images) != 0 {
		t.Errorf("the later turn sent %d image parts, want none", len(second.Images))
	}
	var prompt []string
	for _, m := range second.Messages {
		prompt = append(prompt, m.Content)
	}
	if all := strings.Join(prompt, "\n"); !strings.Contains(all, "[image: ") || !strings.Contains(all, "red flame") {
		t.Errorf("the later turn's prompt lacks the caption:\n%s", all)
	}
}

// A message with a picture and no text gets a reply, and the picture is
// downloaded from the CDN once.
func TestPictureOnlyMessageGetsAReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withMedia})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Attachments: []discordtest.Attachment{picture("map.png", "blue", 300, 200)}})
	// The reply streams in through edits: wait for the whole of it.
	waitFor(t, 20*time.Second, func() bool {
		msgs := h.characterMessages(h.channel)
		return len(msgs) >= 1 && strings.Contains(msgs[0].Content, "blue")
	}, "the reply answering the blue picture")
	if turns := h.turnRequests(); len(turns) != 1 || len(turns[0].Images) != 1 {
		t.Errorf("turn requests %d, want one with the picture", len(turns))
	}
	if hits := h.discord.CDNRequests(); len(hits) != 1 || !strings.Contains(hits[0], "/map.png") {
		t.Errorf("CDN requests %v, want the picture once", hits)
	}
}

// A voice message's words, heard by the transcription endpoint, are the
// player's line: stored marked as spoken and sent as the turn's last user
// message.
func TestVoiceMessageIsThePlayersLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withMedia})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Flags: discordtest.VoiceMessageFlag,
		Attachments: []discordtest.Attachment{discordtest.VoiceMessage([]byte("OggS\x00\x02 spoken: I light the lamp."), 2.4)}})
	waitFor(t, 20*time.Second, func() bool { return h.replied(h.channel, 1, "I light the lamp.") }, "the reply to the voice message")
	if got := h.userTexts(h.channel); len(got) != 1 || !strings.HasPrefix(got[0], "[spoken]") || !strings.Contains(got[0], "I light the lamp.") {
		t.Errorf("stored user messages %q, want the transcript marked as spoken", got)
	}
	stt := h.model.RequestsTo(openaitest.TranscriptionsPath)
	if len(stt) != 1 || stt[0].FileName != "voice-message.ogg" {
		t.Errorf("transcription requests %+v, want the voice message once", stt)
	}
	if turns := h.turnRequests(); len(turns) != 1 || !strings.Contains(lastUser(turns[0]), "I light the lamp.") {
		t.Errorf("the turn's last user message lacks the transcript")
	}
}

// /forget removes the chat with the captions and transcripts of its
// pictures and voice messages: no stored message holds them after.
func TestForgetLeavesNoCaptionOrTranscript(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withMedia})
	h.model.SetCaption(func(openaitest.Image) string { return "a brass key under the mat" })
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "See this.", Attachments: []discordtest.Attachment{picture("key.png", "yellow", 64, 64)}})
	waitFor(t, 20*time.Second, func() bool { return len(h.characterMessages(h.channel)) >= 1 }, "the reply to the picture")
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Flags: discordtest.VoiceMessageFlag,
		Attachments: []discordtest.Attachment{discordtest.VoiceMessage([]byte("OggS spoken: The key opens the cellar."), 1.8)}})
	waitFor(t, 20*time.Second, func() bool { return len(h.characterMessages(h.channel)) >= 2 }, "the reply to the voice message")
	ch, err := h.store.Channel(context.Background(), "discord:"+h.channel)
	if err != nil {
		t.Fatal(err)
	}
	chat := ch.CurrentChatID
	count := func(like string) int64 {
		var n int64
		h.store.DB().Model(&models.Message{}).Where("content LIKE ?", "%"+like+"%").Count(&n)
		return n
	}
	stored := strings.Join(h.userTexts(h.channel), "\n")
	if !strings.Contains(stored, "[image: ") || !strings.Contains(stored, "brass key") || !strings.Contains(stored, "[spoken] The key opens the cellar.") {
		t.Fatalf("stored user messages %q: want the caption and the transcript", stored)
	}

	_, token, id := h.forgetQuestion(h.ada, manageMessages)
	click := h.discord.Click(id, confirmYes+token, h.ada, manageMessages)
	waitFor(t, 10*time.Second, func() bool {
		m, _ := click.Original()
		return strings.Contains(m.Content, "Forgotten")
	}, "the chat forgotten")
	if n := h.chatMessages(chat); n != 0 {
		t.Errorf("the forgotten chat still has %d messages", n)
	}
	if n := count("brass key"); n != 0 {
		t.Errorf("%d stored messages still hold the caption", n)
	}
	if n := count("opens the cellar"); n != 0 {
		t.Errorf("%d stored messages still hold the transcript", n)
	}
}

// An attachment over media.max_image_bytes (as Discord reports its size)
// and one whose bytes are no picture are refused with a notice naming
// each; the over-large one is never downloaded; the message's text still
// gets its reply.
func TestOversizeAndMalformedPicturesAreRefusedAndTheTextPlays(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withMedia})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "Two pictures for you.", Attachments: []discordtest.Attachment{
		{Filename: "huge.png", ContentType: "image/png", Data: openaitest.Picture("green", 8, 8), Size: 9 << 20},
		{Filename: "broken.png", ContentType: "image/png", Data: []byte("this is not a picture at all")},
	}})
	waitFor(t, 20*time.Second, func() bool { return h.replied(h.channel, 1, "Two pictures for you.") }, "the reply to the text")
	var notices []string
	for _, m := range h.discord.Messages(h.channel) {
		if m.AuthorID == h.discord.Bot().ID && m.WebhookID == "" && !strings.HasPrefix(m.Content, "**") {
			notices = append(notices, m.Content)
		}
	}
	all := strings.Join(notices, "\n")
	if !strings.Contains(all, "huge.png") || !strings.Contains(all, "broken.png") {
		t.Errorf("notices %q do not name both refused files", notices)
	}
	for _, hit := range h.discord.CDNRequests() {
		if strings.Contains(hit, "huge.png") {
			t.Errorf("the over-large picture was downloaded: %s", hit)
		}
	}
	if turns := h.turnRequests(); len(turns) != 1 || len(turns[0].Images) != 0 {
		t.Errorf("the turn sent image parts for refused pictures")
	}
}

// An embed's picture on another host is never fetched, by troupe or
// through the media proxy; one on the CDN reaches the model.
func TestEmbedPictureOffTheCDNIsNeverFetched(t *testing.T) {
	t.Parallel()
	var foreign atomic.Int32
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreign.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(openaitest.Picture("purple", 32, 32))
	}))
	t.Cleanup(away.Close)
	h := newHarness(t, setup{pipeline: withMedia})
	onCDN := h.discord.AddFile(h.channel, picture("chart.png", "blue", 64, 64))
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "Two links: " + away.URL + "/cat.png and " + onCDN.URL,
		Embeds: []discordtest.Embed{
			{Type: "image", URL: away.URL + "/cat.png", Thumbnail: away.URL + "/cat.png"},
			{Type: "image", URL: onCDN.URL, Thumbnail: onCDN.URL},
		}})
	waitFor(t, 20*time.Second, func() bool { return len(h.characterMessages(h.channel)) >= 1 }, "the reply")
	if n := foreign.Load(); n != 0 {
		t.Errorf("the foreign host was asked %d times", n)
	}
	turns := h.turnRequests()
	if len(turns) != 1 || len(turns[0].Images) != 1 || turns[0].Images[0].Color != "blue" {
		t.Errorf("the turn's image parts: want the CDN's blue picture alone")
	}
	if hits := h.discord.CDNRequests(); len(hits) != 1 || !strings.Contains(hits[0], "chart.png") {
		t.Errorf("CDN requests %v, want the chart once", hits)
	}
	// Left out, not refused: a link is no attachment of the player's.
	for _, m := range h.discord.Messages(h.channel) {
		if m.AuthorID == h.discord.Bot().ID && m.WebhookID == "" {
			t.Errorf("a notice in the channel: %q", m.Content)
		}
	}
}

// A text file is quoted into the player's line under its name; a file
// troupe does not read (a zip) is left out without a word.
func TestTextFileIsQuotedIntoTheLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withMedia})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "My notes.", Attachments: []discordtest.Attachment{
		{Filename: "notes.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("The tide turns at nine.\nBring rope.")},
		{Filename: "save.zip", ContentType: "application/zip", Data: []byte("PK\x03\x04")},
	}})
	waitFor(t, 20*time.Second, func() bool { return len(h.characterMessages(h.channel)) >= 1 }, "the reply")
	turns := h.turnRequests()
	if len(turns) != 1 {
		t.Fatalf("%d turn requests, want 1", len(turns))
	}
	last := lastUser(turns[0])
	if !strings.Contains(last, "My notes.") || !strings.Contains(last, "notes.txt") || !strings.Contains(last, "The tide turns at nine.") || !strings.Contains(last, "Bring rope.") {
		t.Errorf("the turn's last user message %q lacks the quoted file", last)
	}
	if strings.Contains(last, "save.zip") {
		t.Errorf("the zip reached the model: %q", last)
	}
	for _, hit := range h.discord.CDNRequests() {
		if strings.Contains(hit, "save.zip") {
			t.Errorf("the zip was downloaded")
		}
	}
}

// A voice message whose transcription is slow holds up nothing else: a
// slash command in another channel is answered within Discord's three
// seconds, and a message there gets its reply, while the voice message
// waits for its transcript; the voice message's own channel keeps its
// order (the line after it is stored after it).
func TestSlowMediaHoldsUpNoOtherChannel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{pipeline: withMedia})
	h.model.SetMediaDelay(openaitest.TranscriptionsPath, 4*time.Second)
	other := h.discord.AddChannel(h.guild, "tavern")
	card, _ := h.p.Cards().Default()
	if err := h.p.Bind(context.Background(), h.ref(other), card.ID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Flags: discordtest.VoiceMessageFlag,
		Attachments: []discordtest.Attachment{discordtest.VoiceMessage([]byte("OggS spoken: Slowly I speak."), 3)}})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "And then I write."})
	ix := h.discord.Command(discordtest.Slash{ChannelID: other, User: h.bob, Permissions: member, Name: "help"})
	h.discord.Post(discordtest.Post{ChannelID: other, Author: h.bob, Content: "Meanwhile, in the tavern."})
	waitFor(t, 10*time.Second, func() bool { return len(ix.Callbacks()) > 0 }, "the /help answer")
	if took := ix.Callbacks()[0].At.Sub(start); took > 2500*time.Millisecond {
		t.Errorf("/help in another channel was answered after %v: the slow transcription held it up", took)
	}
	waitFor(t, 10*time.Second, func() bool { return h.replied(other, 1, "Meanwhile, in the tavern.") }, "the tavern's reply")
	if took := time.Since(start); took > 3500*time.Millisecond {
		t.Errorf("the tavern's reply came after %v: the slow transcription held it up", took)
	}
	waitFor(t, 20*time.Second, func() bool { return len(h.userTexts(h.channel)) == 2 }, "both lines of the first channel stored")
	got := h.userTexts(h.channel)
	if !strings.Contains(got[0], "Slowly I speak.") || got[1] != "And then I write." {
		t.Errorf("stored lines %q, want the voice message first", got)
	}
}
