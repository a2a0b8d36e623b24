package telegram

import (
	"bytes"
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/llm"
)

// withSpeech gives the pipeline the fake's speech endpoint (tts), as
// cmd/troupe builds it from tts.base_url.
func (h *harness) withSpeech() {
	h.options = chainOptions(h.options, func(o *bot.Options) {
		o.Voicer = llm.New(llm.Config{BaseURL: h.ai.URL(), Model: "tts-1", MaxRetries: -1, Timeout: 5 * time.Second, SpeechFormat: "opus"}, nil)
		o.Voice = "alloy"
	})
}

// withPainter gives the pipeline the fake's image endpoint (image).
func (h *harness) withPainter() {
	h.options = chainOptions(h.options, func(o *bot.Options) {
		o.Painter = llm.New(llm.Config{BaseURL: h.ai.URL(), Model: "dall-e-3", MaxRetries: -1, Timeout: 5 * time.Second, ImageSize: "64x64"}, nil)
	})
}

func chainOptions(first, then func(*bot.Options)) func(*bot.Options) {
	return func(o *bot.Options) {
		if first != nil {
			first(o)
		}
		then(o)
	}
}

// files returns the bot's messages in a chat that carry a file of kind.
func (h *harness) files(chatID int64, kind string) []telegramtest.Message {
	var out []telegramtest.Message
	for _, m := range h.tg.Messages(chatID) {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// waitFiles waits for n files of kind in a chat and returns them.
func (h *harness) waitFiles(chatID int64, kind string, n int) []telegramtest.Message {
	h.t.Helper()
	waitFor(h.t, itoa(int64(n))+" "+kind+" files", func() bool { return len(h.files(chatID, kind)) >= n })
	return h.files(chatID, kind)
}

// TestVoiceOnSendsAVoiceMessage: /voice on in a private chat, then a
// message: the chat gets the text reply and after it a voice message
// (sendVoice, Opus in Ogg) whose audio says that reply. In a group the
// voice message replies to the message the text reply answers.
func TestVoiceOnSendsAVoiceMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.AllowGroups = true
	h.withSpeech()
	h.start()
	menu := map[string]bool{}
	for _, c := range h.tg.Commands() {
		menu[c.Command] = true
	}
	if !menu["voice"] || !menu["picture"] {
		t.Errorf("the command menu %v lacks voice or picture", h.tg.Commands())
	}

	h.tg.SendText(alice, "/voice on")
	h.waitText(alice.ID, "Voice is on")
	h.tg.SendText(alice, "I light the lamp on the pier.")
	reply := h.waitText(alice.ID, `You said "I light the lamp on the pier."`)
	voice := h.waitFiles(alice.ID, "voice", 1)[0]
	if !bytes.HasPrefix(voice.File.Data, []byte("OggS")) || !bytes.Contains(voice.File.Data, []byte("I light the lamp on the pier.")) {
		t.Errorf("the voice message says %q, want the reply spoken", voice.File.Data)
	}
	if voice.File.Name != "reply.ogg" || voice.ID <= reply.ID || voice.ReplyTo != 0 {
		t.Errorf("voice message %d %q replying to %d; the text reply is %d", voice.ID, voice.File.Name, voice.ReplyTo, reply.ID)
	}
	if reqs := h.ai.RequestsTo(openaitest.SpeechPath); len(reqs) != 1 || !strings.Contains(reqs[0].Prompt, "I light the lamp") {
		t.Errorf("speech requests: got %+v", reqs)
	}
	if n := len(h.files(alice.ID, "voice")); n != 1 {
		t.Errorf("voice messages: got %d, want 1", n)
	}

	// A group: the manager turns voice on; the voice message answers the
	// same message the text reply does.
	ctx := context.Background()
	if err := h.p.Bind(ctx, groupRef(tavern), "lantern-keeper"); err != nil {
		t.Fatal(err)
	}
	h.tg.SetAdmin(tavern.ID, alice.ID)
	h.tg.SendGroupText(tavern, alice, "/voice on", 0)
	h.waitText(tavern.ID, "Voice is on")
	_, asked := h.tg.SendGroupText(tavern, bob, "@troupe_test_bot Is the ferry late?", 0)
	text := h.waitText(tavern.ID, "Is the ferry late?")
	gv := h.waitFiles(tavern.ID, "voice", 1)[0]
	if text.ReplyTo != asked || gv.ReplyTo != asked {
		t.Errorf("the group's text reply answers %d and its voice message %d, want both %d", text.ReplyTo, gv.ReplyTo, asked)
	}
	if !bytes.Contains(gv.File.Data, []byte("Is the ferry late?")) {
		t.Errorf("the group's voice message says %q", gv.File.Data)
	}
}

// TestVoiceSendFailureLeavesTheTextAndANotice: Telegram refuses the voice
// message; the text reply stays and the chat is told the audio is missing.
func TestVoiceSendFailureLeavesTheTextAndANotice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withSpeech()
	h.start()
	h.tg.SendText(alice, "/voice on")
	h.waitText(alice.ID, "Voice is on")
	h.tg.Fail("sendVoice", telegramtest.Fault{Code: 400, Description: "Bad Request: VOICE_MESSAGES_FORBIDDEN"})
	h.tg.SendText(alice, "Ring the bell.")
	h.waitText(alice.ID, `You said "Ring the bell."`)
	h.waitText(alice.ID, "could not be made")
	if n := len(h.files(alice.ID, "voice")); n != 0 {
		t.Errorf("voice messages: got %d, want none", n)
	}
	if got := h.texts(alice.ID); h.count(alice.ID, `You said "Ring the bell."`) != 1 {
		t.Errorf("the text reply is not there once: %q", got)
	}
}

// TestPictureSendsAPhoto: /picture a lantern sends a photo (sendPhoto) of
// the scene with a caption, drawn from a prompt that holds what was asked;
// the caption enters the chat's memory as an [image: …] line.
func TestPictureSendsAPhoto(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withPainter()
	h.start()
	h.tg.SendText(alice, "Hello there")
	h.waitText(alice.ID, `You said "Hello there"`)
	h.tg.SendText(alice, "/picture a lantern")
	photo := h.waitFiles(alice.ID, "photo", 1)[0]
	cfg, format, err := image.DecodeConfig(bytes.NewReader(photo.File.Data))
	if err != nil || format != "png" || cfg.Width != 64 || cfg.Height != 64 {
		t.Errorf("the photo is %s %dx%d (%v), want a 64x64 PNG", format, cfg.Width, cfg.Height, err)
	}
	if photo.Caption == "" || utf16Len(photo.Caption) > maxCaption {
		t.Errorf("the photo's caption: %q", photo.Caption)
	}
	reqs := h.ai.RequestsTo(openaitest.ImagesPath)
	if len(reqs) != 1 || !strings.Contains(reqs[0].Prompt, "a lantern") {
		t.Fatalf("image requests: got %+v, want one asking for a lantern", reqs)
	}
	waitFor(t, "the picture kept in the chat", func() bool {
		for _, m := range h.messages(alice.ID) {
			if strings.Contains(m.Content, "[image: ") {
				return true
			}
		}
		return false
	})
}

// TestPictureSendFailureIsANotice: Telegram refuses the photo; the chat is
// told the picture could not be made, and nothing is kept.
func TestPictureSendFailureIsANotice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withPainter()
	h.start()
	h.tg.SendText(alice, "Hello there")
	h.waitText(alice.ID, `You said "Hello there"`)
	h.tg.Fail("sendPhoto", telegramtest.Fault{Code: 400, Description: "Bad Request: not enough rights to send photos to the chat"})
	h.tg.SendText(alice, "/picture the harbour")
	h.waitText(alice.ID, "could not be made")
	if n := len(h.files(alice.ID, "photo")); n != 0 {
		t.Errorf("photos: got %d, want none", n)
	}
	for _, m := range h.messages(alice.ID) {
		if strings.Contains(m.Content, "[image: ") {
			t.Errorf("a picture never shown was kept: %q", m.Content)
		}
	}
}
