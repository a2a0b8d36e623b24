package telegramtest

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// pngOf is a w×h PNG of one colour.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{R: 200, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fetch downloads url and returns its status and body.
func fetch(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestMediaUpdatesDecodeAndDownload: a photo, a document, a voice note and
// an audio file sent by a user arrive as the library decodes Telegram's,
// and getFile and the file endpoint serve their bytes, to the bot's token
// alone.
func TestMediaUpdatesDecodeAndDownload(t *testing.T) {
	t.Parallel()
	s, api := connect(t)
	ann := User{ID: 7, FirstName: "Ann"}
	small, large := []byte("small jpeg"), []byte("large jpeg")
	s.SendMedia(ann, Media{Caption: "look @troupe_test_bot", Photo: []PhotoSize{
		{Width: 90, Height: 67, Data: small},
		{Width: 1280, Height: 960, Data: large, FileSize: 9 << 20},
	}})
	s.SendMedia(ann, Media{Document: &Document{FileName: "Notes.MD", MIMEType: "text/markdown", Data: []byte("# notes")}})
	s.SendMedia(ann, Media{Voice: &Voice{Duration: 3, Data: []byte("OggS spoken: hi")}})
	s.SendMedia(ann, Media{Audio: &Audio{Duration: 61, Title: "Sea shanty", FileName: "shanty.mp3", MIMEType: "audio/mpeg", Data: []byte("ID3 song")}})
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 4 {
		t.Fatalf("updates: got %d, want 4", len(ups))
	}
	photo := ups[0].Message
	if photo.Text != "" || photo.Caption != "look @troupe_test_bot" || len(photo.Photo) != 2 {
		t.Fatalf("photo message: got text %q caption %q %d sizes", photo.Text, photo.Caption, len(photo.Photo))
	}
	if p := photo.Photo[1]; p.Width != 1280 || p.Height != 960 || p.FileSize != 9<<20 || p.FileID == "" || p.FileUniqueID == "" {
		t.Errorf("largest size: got %+v", p)
	}
	if ents := photo.CaptionEntities; len(ents) != 1 || ents[0].Type != "mention" || ents[0].Offset != 5 {
		t.Errorf("caption entities: got %+v", ents)
	}
	doc := ups[1].Message.Document
	if doc == nil || doc.FileName != "Notes.MD" || doc.MimeType != "text/markdown" || doc.FileSize != 7 {
		t.Errorf("document: got %+v", doc)
	}
	voice := ups[2].Message.Voice
	if voice == nil || voice.Duration != 3 || voice.MimeType != "audio/ogg" {
		t.Errorf("voice: got %+v", voice)
	}
	audio := ups[3].Message.Audio
	if audio == nil || audio.Duration != 61 || audio.Title != "Sea shanty" || audio.FileName != "shanty.mp3" || audio.MimeType != "audio/mpeg" {
		t.Errorf("audio: got %+v", audio)
	}

	f, err := api.GetFile(tgbotapi.FileConfig{FileID: photo.Photo[0].FileID})
	if err != nil {
		t.Fatal(err)
	}
	if f.FileID != photo.Photo[0].FileID || f.FileSize != len(small) || !strings.HasPrefix(f.FilePath, "photos/") {
		t.Errorf("getFile: got %+v", f)
	}
	if code, body := fetch(t, s.FileURL(s.Token(), f.FilePath)); code != 200 || !bytes.Equal(body, small) {
		t.Errorf("download: got %d %q", code, body)
	}
	if code, _ := fetch(t, s.FileURL("1:wrong", f.FilePath)); code != 404 {
		t.Errorf("download with a wrong token: got %d, want 404", code)
	}
	if code, _ := fetch(t, s.FileURL(s.Token(), "photos/nothing.jpg")); code != 404 {
		t.Errorf("download of an unknown path: got %d, want 404", code)
	}
	d := s.Downloads()
	if len(d) != 3 || !d[0].TokenOK || d[0].Path != f.FilePath || d[0].Code != 200 || d[1].TokenOK || d[1].Code != 404 {
		t.Errorf("downloads recorded: got %+v", d)
	}

	// Bots may not download files over 20 MB.
	big := s.StoreFile("documents", ".txt", []byte("x"), 21<<20)
	var te *tgbotapi.Error
	if _, err := api.GetFile(tgbotapi.FileConfig{FileID: big.FileID}); !errors.As(err, &te) || te.Message != "Bad Request: file is too big" {
		t.Errorf("getFile of 21 MB: got %v", err)
	}
	if _, err := api.GetFile(tgbotapi.FileConfig{FileID: "nope"}); !errors.As(err, &te) || te.Code != 400 {
		t.Errorf("getFile of an unknown id: got %v", err)
	}

	// A fault strikes the next download.
	s.Fail("download", Fault{Code: 502, Description: "Bad Gateway"})
	if code, _ := fetch(t, s.FileURL(s.Token(), f.FilePath)); code != 502 {
		t.Errorf("download with a fault: got %d, want 502", code)
	}
}

// TestUploadsAsTheLibrarySendsThem: the library's multipart uploads of a
// voice message, a photo, an audio file and a document become messages
// holding the file's name, content type, bytes and caption; Telegram's
// refusals come back as it words them.
func TestUploadsAsTheLibrarySendsThem(t *testing.T) {
	t.Parallel()
	s, api := connect(t)
	ogg := []byte("OggS\x00\x02 the lamp is lit")
	v := tgbotapi.NewVoice(7, tgbotapi.FileBytes{Name: "reply.ogg", Bytes: ogg})
	v.Duration, v.Caption, v.ReplyToMessageID = 4, "Maren", 3
	sent, err := api.Send(v)
	if err != nil {
		t.Fatal(err)
	}
	if sent.Voice == nil || sent.Voice.Duration != 4 || sent.Caption != "Maren" {
		t.Errorf("sendVoice result: got %+v", sent)
	}
	pic := pngOf(t, 64, 32)
	if _, err := api.Send(tgbotapi.NewPhoto(7, tgbotapi.FileBytes{Name: "picture.png", Bytes: pic})); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Send(tgbotapi.NewAudio(7, tgbotapi.FileBytes{Name: "reply.mp3", Bytes: []byte("ID3 words")})); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Send(tgbotapi.NewDocument(7, tgbotapi.FileBytes{Name: "big.png", Bytes: pic})); err != nil {
		t.Fatal(err)
	}
	// Not Opus nor MP3: Telegram delivers it as a plain file.
	if _, err := api.Send(tgbotapi.NewVoice(7, tgbotapi.FileBytes{Name: "x.wav", Bytes: []byte("RIFF....WAVE")})); err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages(7)
	if len(msgs) != 5 {
		t.Fatalf("messages: got %d, want 5", len(msgs))
	}
	want := []struct{ kind, field, name string }{
		{"voice", "voice", "reply.ogg"}, {"photo", "photo", "picture.png"}, {"audio", "audio", "reply.mp3"},
		{"document", "document", "big.png"}, {"document", "voice", "x.wav"},
	}
	for i, w := range want {
		m := msgs[i]
		if m.Kind != w.kind || m.File == nil || m.File.Field != w.field || m.File.Name != w.name || m.File.ContentType == "" {
			t.Errorf("message %d: got kind %q file %+v, want %s in field %s named %s", i, m.Kind, m.File, w.kind, w.field, w.name)
		}
	}
	if m := msgs[0]; !bytes.Equal(m.File.Data, ogg) || m.Duration != 4 || m.Caption != "Maren" || m.ReplyTo != 3 || m.Text != "" {
		t.Errorf("voice message: got %+v", m)
	}
	if !bytes.Equal(msgs[1].File.Data, pic) {
		t.Errorf("photo bytes differ")
	}
	calls := s.Calls("sendVoice")
	if len(calls) != 2 || calls[0].Params.Get("chat_id") != "7" || string(calls[0].Files["voice"].Data) != string(ogg) {
		t.Errorf("sendVoice calls: got %+v", calls)
	}

	var te *tgbotapi.Error
	notImage := tgbotapi.NewPhoto(7, tgbotapi.FileBytes{Name: "x.png", Bytes: []byte("not a png")})
	if _, err := api.Send(notImage); !errors.As(err, &te) || te.Message != "Bad Request: IMAGE_PROCESS_FAILED" {
		t.Errorf("a photo that is no image: got %v", err)
	}
	long := tgbotapi.NewPhoto(7, tgbotapi.FileBytes{Name: "p.png", Bytes: pic})
	long.Caption = strings.Repeat("é", MaxCaption+1)
	if _, err := api.Send(long); !errors.As(err, &te) || te.Message != "Bad Request: message caption is too long" {
		t.Errorf("a caption of 1025 characters: got %v", err)
	}
	long.Caption = strings.Repeat("é", MaxCaption)
	if _, err := api.Send(long); err != nil {
		t.Errorf("a caption of 1024 characters: %v", err)
	}
	thin := tgbotapi.NewPhoto(7, tgbotapi.FileBytes{Name: "p.png", Bytes: pngOf(t, 420, 20)})
	if _, err := api.Send(thin); !errors.As(err, &te) || te.Message != "Bad Request: PHOTO_INVALID_DIMENSIONS" {
		t.Errorf("a photo 21 times wider than high: got %v", err)
	}
	empty := tgbotapi.NewVoice(7, tgbotapi.FileBytes{Name: "e.ogg", Bytes: nil})
	if _, err := api.Send(empty); !errors.As(err, &te) || te.Message != "Bad Request: file must be non-empty" {
		t.Errorf("an empty file: got %v", err)
	}
	huge := tgbotapi.NewDocument(7, tgbotapi.FileBytes{Name: "huge.bin", Bytes: make([]byte, MaxUpload+1)})
	if _, err := api.Send(huge); !errors.As(err, &te) || te.Message != "Request Entity Too Large" {
		t.Errorf("a file over 50 MB: got %v", err)
	}
	if n := len(s.Messages(7)); n != 6 {
		t.Errorf("messages after the refusals: got %d, want 6", n)
	}
}
