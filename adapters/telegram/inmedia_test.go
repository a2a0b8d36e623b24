package telegram

import (
	"bytes"
	"context"
	"image/color"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/bot"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/models"
)

// withVision has the chat model see pictures (model.vision).
func (h *harness) withVision() {
	h.options = chainOptions(h.options, func(o *bot.Options) { o.Vision = true })
}

// withHearing gives the pipeline the fake's transcription endpoint (stt).
func (h *harness) withHearing() {
	h.options = chainOptions(h.options, func(o *bot.Options) {
		o.Transcriber = llm.New(llm.Config{BaseURL: h.ai.URL(), Model: "whisper-1", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	})
}

var replySeq = regexp.MustCompile(`^reply (\d+):`)

// turnRequest is the chat request the fake model answered with reply m
// (its default answers start "reply <request number>:").
func (h *harness) turnRequest(m telegramtest.Message) openaitest.Request {
	h.t.Helper()
	sub := replySeq.FindStringSubmatch(m.Text)
	if sub == nil {
		h.t.Fatalf("reply %q names no request", m.Text)
	}
	seq, _ := strconv.Atoi(sub[1])
	for _, r := range h.ai.Requests() {
		if r.Seq == seq {
			return r
		}
	}
	h.t.Fatalf("no request %d", seq)
	return openaitest.Request{}
}

// storedWith returns the stored player messages of the channel containing
// sub.
func (h *harness) storedWith(chatID int64, sub string) []models.Message {
	var out []models.Message
	for _, m := range h.messages(chatID) {
		if m.Role == "user" && strings.Contains(m.Content, sub) {
			out = append(out, m)
		}
	}
	return out
}

// redPhoto is a photo as Telegram sends one: a thumbnail and a larger size,
// both red.
func redPhoto(t *testing.T) []telegramtest.PhotoSize {
	red := color.RGBA{R: 210, G: 20, B: 20, A: 255}
	return []telegramtest.PhotoSize{
		{Width: 90, Height: 68, Data: testPNG(t, 90, 68, red)},
		{Width: 640, Height: 480, Data: testPNG(t, 640, 480, red)},
	}
}

// TestPhotoReachesTheModelAndLaterTurnsCarryItsCaption: a photo with a
// caption in a private chat reaches the model as an image part of the
// turn's last user message (the larger size, downloaded from the file
// endpoint), the caption is the player's text, and the next turn's prompt
// carries the picture's description as text, without pixels.
func TestPhotoReachesTheModelAndLaterTurnsCarryItsCaption(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withVision()
	h.start()
	h.ai.SetCaption(func(openaitest.Image) string { return "a brass lantern behind red glass" })
	h.tg.SendMedia(alice, telegramtest.Media{Caption: "What do you make of this?", Photo: redPhoto(t)})
	reply := h.waitText(alice.ID, "I see a brass lantern")
	req := h.turnRequest(reply)
	if len(req.Images) != 1 || req.Images[0].Width != 640 || req.Images[0].Height != 480 || req.Images[0].Color != "red" {
		t.Fatalf("the turn's image parts: got %+v, want the 640x480 red photo", req.Images)
	}
	if last := memorytest.LastUser(req); !strings.Contains(last, "What do you make of this?") {
		t.Errorf("the turn's last user message %q lacks the caption", last)
	}
	stored := h.storedWith(alice.ID, "[image: ")
	if len(stored) != 1 || !strings.Contains(stored[0].Content, "brass lantern") || !strings.Contains(stored[0].Content, "What do you make of this?") {
		t.Fatalf("stored picture line: got %+v", stored)
	}
	d := h.tg.Downloads()
	if len(d) != 1 || !d[0].TokenOK || d[0].Code != 200 {
		t.Errorf("downloads: got %+v, want one of the larger size", d)
	}

	h.tg.SendText(alice, "And where does it hang?")
	next := h.waitText(alice.ID, `You said "And where does it hang?"`)
	req = h.turnRequest(next)
	if len(req.Images) != 0 {
		t.Errorf("the next turn sent %d pictures again", len(req.Images))
	}
	carried := false
	for _, m := range req.Messages {
		carried = carried || (strings.Contains(m.Content, "[image: ") && strings.Contains(m.Content, "brass lantern"))
	}
	if !carried {
		t.Errorf("the next turn's prompt does not carry the picture's caption: %+v", req.Messages)
	}
	if n := len(h.tg.Downloads()); n != 1 {
		t.Errorf("downloads after the next turn: got %d, want still 1", n)
	}
}

// TestPhotoWithoutCaptionGetsAReply: a photo alone, no text, is played:
// the character answers what it sees.
func TestPhotoWithoutCaptionGetsAReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withVision()
	h.start()
	h.tg.SendMedia(alice, telegramtest.Media{Photo: redPhoto(t)})
	reply := h.waitText(alice.ID, "I see a 640x480 picture, mostly red")
	if req := h.turnRequest(reply); len(req.Images) != 1 {
		t.Errorf("the turn's image parts: got %d, want 1", len(req.Images))
	}
	if stored := h.storedWith(alice.ID, "[image: "); len(stored) != 1 {
		t.Errorf("stored picture lines: got %d, want 1", len(stored))
	}
}

// TestVoiceNoteBecomesThePlayersLine: a voice note is transcribed and its
// words are the player's line, marked as spoken.
func TestVoiceNoteBecomesThePlayersLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withHearing()
	h.start()
	note := []byte("OggS\x00\x02 spoken: I light the lamp and wait for the ferry.")
	h.tg.SendMedia(alice, telegramtest.Media{Voice: &telegramtest.Voice{Duration: 3, Data: note}})
	reply := h.waitText(alice.ID, "I light the lamp and wait for the ferry.")
	if last := memorytest.LastUser(h.turnRequest(reply)); !strings.Contains(last, "I light the lamp and wait for the ferry.") {
		t.Errorf("the turn's last user message %q lacks the transcript", last)
	}
	reqs := h.ai.RequestsTo(openaitest.TranscriptionsPath)
	if len(reqs) != 1 || reqs[0].FileSize != len(note) {
		t.Errorf("transcription requests: got %+v, want one of the %d-byte note", reqs, len(note))
	}
	stored := h.storedWith(alice.ID, "I light the lamp")
	if len(stored) != 1 || !strings.HasPrefix(stored[0].Content, "[spoken]") {
		t.Errorf("stored line: got %+v, want one starting [spoken]", stored)
	}
}

// TestForgetLeavesNoCaptionOrTranscript: a picture's caption and a voice
// note's transcript are stored with the chat; /forget erases them with it.
func TestForgetLeavesNoCaptionOrTranscript(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withVision()
	h.withHearing()
	h.start()
	h.ai.SetCaption(func(openaitest.Image) string { return "a chart of the northern reef" })
	h.tg.SendMedia(alice, telegramtest.Media{Caption: "Keep this safe.", Photo: redPhoto(t)})
	h.waitText(alice.ID, "northern reef")
	h.tg.SendMedia(alice, telegramtest.Media{Voice: &telegramtest.Voice{Duration: 2, Data: []byte("OggS spoken: the password is driftwood")}})
	h.waitText(alice.ID, "the password is driftwood")
	if len(h.storedWith(alice.ID, "northern reef")) == 0 || len(h.storedWith(alice.ID, "driftwood")) == 0 {
		t.Fatal("the caption and the transcript were not stored")
	}
	ch, err := h.store.Channel(context.Background(), "telegram:"+itoa(alice.ID))
	if err != nil {
		t.Fatal(err)
	}
	old := ch.CurrentChatID

	h.tg.SendText(alice, "/forget")
	var q telegramtest.Message
	waitFor(t, "the /forget question", func() bool {
		for _, m := range h.tg.Messages(alice.ID) {
			if len(m.Buttons) == 1 && len(m.Buttons[0]) == 2 {
				q = m
				return true
			}
		}
		return false
	})
	h.tg.Press(alice, alice.ID, q.ID, q.Buttons[0][0].Data)
	h.waitText(alice.ID, "Forgotten:")
	waitFor(t, "the chat erased", func() bool {
		var n int64
		h.store.DB().Model(&models.Tombstone{}).Where("chat_id = ?", old).Count(&n)
		return n == 1
	})
	for _, sub := range []string{"northern reef", "driftwood", "[image: ", "[spoken]"} {
		var n int64
		h.store.DB().Model(&models.Message{}).Where("content LIKE ?", "%"+sub+"%").Count(&n)
		if n != 0 {
			t.Errorf("%d stored messages still hold %q", n, sub)
		}
	}
}

// TestOversizeAndMalformedMediaAreRefused: a photo whose every size is over
// media.max_image_bytes is refused before anything is downloaded, and a
// document that claims to be a PNG but is none is refused once read; each
// with a notice naming why, while the message's caption still gets its
// reply, without pictures.
func TestOversizeAndMalformedMediaAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withVision()
	h.start()
	red := testPNG(t, 64, 64, color.RGBA{R: 200, A: 255})
	h.tg.SendMedia(alice, telegramtest.Media{Caption: "Here is the harbour map.", Photo: []telegramtest.PhotoSize{
		{Width: 320, Height: 240, Data: red, FileSize: 9 << 20},
		{Width: 1280, Height: 960, Data: red, FileSize: 12 << 20},
	}})
	h.waitText(alice.ID, "larger than 8 MB")
	reply := h.waitText(alice.ID, `You said "Here is the harbour map."`)
	if req := h.turnRequest(reply); len(req.Images) != 0 {
		t.Errorf("the refused photo reached the model: %+v", req.Images)
	}
	if n, d := len(h.tg.Calls("getFile")), len(h.tg.Downloads()); n != 0 || d != 0 {
		t.Errorf("an oversize photo was fetched: %d getFile calls, %d downloads", n, d)
	}

	h.tg.SendMedia(alice, telegramtest.Media{Caption: "And the chart.", Document: &telegramtest.Document{
		FileName: "chart.png", MIMEType: "image/png", Data: []byte("this is not a png, only words"),
	}})
	h.waitText(alice.ID, "not a picture troupe can read")
	reply = h.waitText(alice.ID, `You said "And the chart."`)
	if req := h.turnRequest(reply); len(req.Images) != 0 {
		t.Errorf("the malformed picture reached the model: %+v", req.Images)
	}
	// A picture alone that is refused leaves nothing to answer: the notice
	// and no turn.
	before := h.count(alice.ID, "reply ")
	notices := h.count(alice.ID, "larger than 8 MB")
	h.tg.SendMedia(alice, telegramtest.Media{Photo: []telegramtest.PhotoSize{{Width: 1280, Height: 960, Data: red, FileSize: 9 << 20}}})
	waitFor(t, "the second notice", func() bool { return h.count(alice.ID, "larger than 8 MB") > notices })
	h.tg.SendText(alice, "Never mind.")
	h.waitText(alice.ID, `You said "Never mind."`)
	if n := h.count(alice.ID, "reply "); n != before+1 {
		t.Errorf("replies: got %d, want %d (the refused picture alone is not answered)", n, before+1)
	}
	for _, line := range []string{"Here is the harbour map.", "And the chart."} {
		if stored := h.storedWith(alice.ID, line); len(stored) != 1 || strings.Contains(stored[0].Content, "[image: ") {
			t.Errorf("the stored line of %q: got %+v, want the text alone", line, stored)
		}
	}
}

// TestDownloadsGoOnlyToTheFileEndpoint: whatever a message says, troupe
// fetches its files from the bot's file endpoint alone (with the token,
// only the paths getFile gave); a link in a caption is never followed.
func TestDownloadsGoOnlyToTheFileEndpoint(t *testing.T) {
	t.Parallel()
	var trapped atomic.Int32
	trap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trapped.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(testPNG(t, 8, 8, color.White))
	}))
	defer trap.Close()
	h := newHarness(t)
	h.withVision()
	h.withHearing()
	h.start()
	h.tg.SendMedia(alice, telegramtest.Media{Caption: "Look at " + trap.URL + "/lantern.png instead", Photo: redPhoto(t)})
	h.waitText(alice.ID, "I see")
	h.tg.SendMedia(alice, telegramtest.Media{Caption: trap.URL + "/notes.txt", Document: &telegramtest.Document{
		FileName: "notes.txt", MIMEType: "text/plain", Data: []byte("The ferry leaves at dawn."),
	}})
	h.waitText(alice.ID, "/notes.txt")
	h.tg.SendMedia(alice, telegramtest.Media{Voice: &telegramtest.Voice{Duration: 1, Data: []byte("OggS spoken: " + trap.URL + "/voice.ogg")}})
	h.waitText(alice.ID, "/voice.ogg")

	if n := trapped.Load(); n != 0 {
		t.Errorf("a link in a message was followed %d times", n)
	}
	given := map[string]bool{}
	for _, c := range h.tg.Calls("getFile") {
		if c.Code == 0 {
			given[c.Params.Get("file_id")] = true
		}
	}
	d := h.tg.Downloads()
	if len(d) != 3 || len(given) != 3 {
		t.Fatalf("downloads %+v after %d getFile answers, want 3 of each", d, len(given))
	}
	for _, x := range d {
		if !x.TokenOK || x.Code != 200 {
			t.Errorf("download %+v", x)
		}
	}
	if stored := h.storedWith(alice.ID, "The ferry leaves at dawn."); len(stored) != 1 {
		t.Errorf("the text file's words stored: got %d, want 1", len(stored))
	}
	if strings.Contains(h.logs.String(), h.tg.Token()) {
		t.Error("the bot token reached the log")
	}
	if bytes.Contains([]byte(h.logs.String()), []byte("/file/bot")) {
		t.Error("a download URL reached the log")
	}
}
