package telegram

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/media"
)

// testPNG is a w×h PNG of one colour.
func testPNG(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFileSourceDownloadsThroughGetFile: an item's source asks getFile for
// the file's path when it downloads and fetches the bytes from the file
// endpoint alone; sizes over the limit, files Telegram will not hand a bot
// and failed downloads are errors that name no token.
func TestFileSourceDownloadsThroughGetFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	data := []byte("OggS\x00\x02 spoken: the tide is out")
	f := h.tg.StoreFile("voice", ".oga", data, 0)
	if n := len(h.tg.Calls("getFile")); n != 0 {
		t.Fatalf("getFile called %d times before a download", n)
	}
	got, err := h.a.fileSource(f.FileID).Download(ctx, 1<<20)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("download: got %q, %v", got, err)
	}
	if n := len(h.tg.Calls("getFile")); n != 1 {
		t.Errorf("getFile calls: got %d, want 1", n)
	}
	d := h.tg.Downloads()
	if len(d) != 1 || !d[0].TokenOK || d[0].Path != f.FilePath || d[0].Code != 200 {
		t.Errorf("downloads: got %+v", d)
	}

	big := h.tg.StoreFile("photos", ".jpg", []byte("small bytes, large claim"), 9<<20)
	if _, err := h.a.fileSource(big.FileID).Download(ctx, 8<<20); !errors.Is(err, media.ErrTooLarge) {
		t.Errorf("a file reported over the limit: got %v, want media.ErrTooLarge", err)
	}
	huge := h.tg.StoreFile("documents", ".txt", []byte("x"), 21<<20)
	if _, err := h.a.fileSource(huge.FileID).Download(ctx, 25<<20); !errors.Is(err, media.ErrTooLarge) {
		t.Errorf("a file Telegram will not hand a bot: got %v, want media.ErrTooLarge", err)
	}
	// Bytes beyond what getFile reported are cut off at the limit too.
	liar := h.tg.StoreFile("photos", ".jpg", bytes.Repeat([]byte("x"), 2000), 10)
	if _, err := h.a.fileSource(liar.FileID).Download(ctx, 1000); !errors.Is(err, media.ErrTooLarge) {
		t.Errorf("more bytes than reported: got %v, want media.ErrTooLarge", err)
	}
	var errs []error
	_, err = h.a.fileSource("no-such-file").Download(ctx, 1<<20)
	errs = append(errs, err)
	h.tg.Fail("download", telegramtest.Fault{Code: 502, Description: "Bad Gateway"})
	_, err = h.a.fileSource(f.FileID).Download(ctx, 1<<20)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Errorf("error %d: got none", i)
		} else if strings.Contains(err.Error(), h.tg.Token()) {
			t.Errorf("error %d names the token: %v", i, err)
		}
	}

	// An adapter whose endpoint has no file endpoint downloads nothing.
	a, err := New(h.cfg, h.p, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.fileRoot = ""
	if _, err := a.fileSource(f.FileID).Download(ctx, 1<<20); !errors.Is(err, media.ErrNotAllowed) {
		t.Errorf("no file endpoint: got %v, want media.ErrNotAllowed", err)
	}
}

// TestSinkSendsFiles: a sink sends a voice note with sendVoice, other
// sound with sendAudio, a picture with sendPhoto under its caption clipped
// to Telegram's limit, a picture Telegram will not take as a photo as a
// file, and replies to the message its text replies to; a file over
// 50 MB is refused before it is sent, and flood control is waited out.
func TestSinkSendsFiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	s := h.a.newSink(event{chatID: alice.ID, userID: alice.ID, lang: "en"})
	ogg := []byte("OggS\x00\x02 the lamp is lit")
	h.tg.Fail("sendVoice", telegramtest.TooManyRequests(1))
	if err := s.SendFile(ctx, media.File{Kind: media.Voice, Name: "reply.ogg", MIME: "audio/ogg", Data: ogg, Duration: 2500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if calls := h.tg.Calls("sendVoice"); len(calls) != 2 || calls[0].Code != 429 || calls[1].Code != 0 || calls[1].At.Sub(calls[0].At) < 990*time.Millisecond {
		t.Errorf("sendVoice calls: got %v, want a 429 then a success a second later", codes(calls))
	}
	mp3 := []byte("ID3 the lamp is lit")
	if err := s.SendFile(ctx, media.File{Kind: media.Audio, Name: "reply.mp3", MIME: "audio/mpeg", Data: mp3}); err != nil {
		t.Fatal(err)
	}
	pic := testPNG(t, 64, 48, color.RGBA{B: 200, A: 255})
	caption := strings.Repeat("A lantern on the pier. ", 60)
	if err := s.SendFile(ctx, media.File{Kind: media.Image, Name: "picture.png", MIME: "image/png", Data: pic, Caption: caption}); err != nil {
		t.Fatal(err)
	}
	thin := testPNG(t, 630, 30, color.White)
	if err := s.SendFile(ctx, media.File{Kind: media.Image, Name: "banner.png", MIME: "image/png", Data: thin}); err != nil {
		t.Fatal(err)
	}
	msgs := h.tg.Messages(alice.ID)
	if len(msgs) != 4 {
		t.Fatalf("messages: got %d, want 4", len(msgs))
	}
	if m := msgs[0]; m.Kind != "voice" || !bytes.Equal(m.File.Data, ogg) || m.File.Name != "reply.ogg" || m.Duration != 3 {
		t.Errorf("voice: got kind %q file %+v duration %d", m.Kind, m.File, m.Duration)
	}
	if m := msgs[1]; m.Kind != "audio" || !bytes.Equal(m.File.Data, mp3) || m.File.Name != "reply.mp3" {
		t.Errorf("audio: got kind %q file %+v", m.Kind, m.File)
	}
	if m := msgs[2]; m.Kind != "photo" || !bytes.Equal(m.File.Data, pic) || !strings.HasPrefix(m.Caption, "A lantern on the pier.") || utf16Len(m.Caption) > maxCaption || !strings.HasSuffix(m.Caption, "…") {
		t.Errorf("photo: got kind %q, caption of %d units %q", m.Kind, utf16Len(m.Caption), m.Caption)
	}
	if m := msgs[3]; m.Kind != "document" || m.File.Field != "document" || !bytes.Equal(m.File.Data, thin) {
		t.Errorf("a picture 21 times wider than high: got kind %q file field %q", m.Kind, m.File.Field)
	}
	for _, m := range msgs {
		if m.ReplyTo != 0 {
			t.Errorf("a file in a private chat replies to %d", m.ReplyTo)
		}
	}

	// In a group the file replies to the message the text answers.
	gs := h.a.newSink(event{chatID: -100555, replyTo: 42, userID: bob.ID, lang: "en"})
	if err := gs.SendFile(ctx, media.File{Kind: media.Voice, Name: "reply.ogg", MIME: "audio/ogg", Data: ogg}); err != nil {
		t.Fatal(err)
	}
	calls := h.chatCalls("sendVoice", -100555)
	if len(calls) != 1 || calls[0].Params.Get("reply_to_message_id") != "42" || calls[0].Params.Get("allow_sending_without_reply") != "true" {
		t.Errorf("group sendVoice: got %+v", calls)
	}
	if calls[0].Params.Get("duration") != "" {
		t.Errorf("a voice note of unknown length was given a duration %q", calls[0].Params.Get("duration"))
	}

	sent := len(h.tg.Calls(""))
	err := s.SendFile(ctx, media.File{Kind: media.Image, Name: "huge.png", MIME: "image/png", Data: make([]byte, maxUpload+1)})
	if !errors.Is(err, ErrFileTooLarge) || !errors.Is(err, media.ErrTooLarge) {
		t.Errorf("a file over 50 MB: got %v, want ErrFileTooLarge", err)
	}
	if n := len(h.tg.Calls("")); n != sent {
		t.Errorf("a file over 50 MB was sent: %d calls", n-sent)
	}
	// Telegram's refusal comes back as an APIError.
	err = s.SendFile(ctx, media.File{Kind: media.Image, Name: "broken.png", MIME: "image/png", Data: []byte("not a png")})
	if e, ok := asAPI(err); !ok || e.Code != 400 || e.Method != "sendPhoto" {
		t.Errorf("a picture that is no image: got %v, want sendPhoto's 400", err)
	}
}
