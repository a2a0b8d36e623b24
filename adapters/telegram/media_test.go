package telegram

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/media"
)

// idSource is a media.Source that only names its file id, so a test sees
// which file an item downloads.
type idSource string

func (s idSource) Download(context.Context, int64) ([]byte, error) { return nil, errors.New(string(s)) }

func idOf(src media.Source) string {
	if s, ok := src.(idSource); ok {
		return string(s)
	}
	return ""
}

// TestMediaItems: each kind of Telegram attachment, from updates as
// Telegram sends them, becomes the item the pipeline takes, or none.
func TestMediaItems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		maxImage int64
		want     []media.Item
		// ids are the file ids the items download.
		ids []string
	}{
		{file: "update_private_photo_sizes.json", maxImage: 8 << 20,
			want: []media.Item{{Kind: media.Image, MIME: "image/jpeg", Size: 254016}}, ids: []string{"AgACAgQAAxkBAAIBy"}},
		{file: "update_private_photo_sizes.json", maxImage: 100000,
			want: []media.Item{{Kind: media.Image, MIME: "image/jpeg", Size: 86730}}, ids: []string{"AgACAgQAAxkBAAIBx"}},
		{file: "update_private_photo_sizes.json", maxImage: 1000,
			want: []media.Item{{Kind: media.Image, MIME: "image/jpeg", Size: 254016}}, ids: []string{"AgACAgQAAxkBAAIBy"}},
		{file: "update_private_photo_caption.json", maxImage: 8 << 20,
			want: []media.Item{{Kind: media.Image, MIME: "image/jpeg", Size: 1289}}, ids: []string{"AgACAgQAAxkBAAIB"}},
		{file: "update_private_voice.json", maxImage: 8 << 20,
			want: []media.Item{{Kind: media.Voice, MIME: "audio/ogg", Size: 12034, Duration: 4 * time.Second}}, ids: []string{"AwACAgIAAxkBAAIBv"}},
		{file: "update_private_audio.json", maxImage: 8 << 20,
			want: []media.Item{{Kind: media.Audio, Name: "harbour-song.mp3", MIME: "audio/mpeg", Size: 3001877, Duration: 187 * time.Second}}, ids: []string{"CQACAgIAAxkBAAIBa"}},
		{file: "update_private_document_text.json", maxImage: 8 << 20,
			want: []media.Item{{Kind: media.Text, Name: "ship-log.md", MIME: "text/markdown", Size: 2210}}, ids: []string{"BQACAgIAAxkBAAIBd"}},
		{file: "update_private_document_image.json", maxImage: 8 << 20,
			want: []media.Item{{Kind: media.Image, Name: "chart.png", MIME: "image/png", Size: 412000}}, ids: []string{"BQACAgIAAxkBAAIBi"}},
		{file: "update_private_document_pdf.json", maxImage: 8 << 20},
		{file: "update_private_sticker.json", maxImage: 8 << 20},
		{file: "update_private_text.json", maxImage: 8 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			u := loadUpdate(t, tt.file)
			got := mediaItems(u.Message, tt.maxImage, func(id string) media.Source { return idSource(id) })
			if len(got) != len(tt.want) {
				t.Fatalf("items: got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if id := idOf(got[i].Source); id != tt.ids[i] {
					t.Errorf("item %d downloads %q, want %q", i, id, tt.ids[i])
				}
				got[i].Source = nil
				if got[i] != tt.want[i] {
					t.Errorf("item %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestRouteCarriesMedia: the event of a message with a picture carries its
// item, a caption is its text, and a command's picture is dropped.
func TestRouteCarriesMedia(t *testing.T) {
	t.Parallel()
	r := router{self: tgbotapi.User{ID: 123456789, UserName: "troupe_test_bot"}, maxImage: 8 << 20,
		source: func(id string) media.Source { return idSource(id) }}
	ev, why := r.route(loadUpdate(t, "update_private_photo_caption.json"))
	if why != "" || len(ev.in.Media) != 1 || ev.in.Media[0].Kind != media.Image || ev.in.Text != "这是我在灯塔下找到的东西。" {
		t.Errorf("captioned photo: got %q, text %q, media %+v", why, ev.in.Text, ev.in.Media)
	}
	ev, why = r.route(loadUpdate(t, "update_private_photo_sizes.json"))
	if why != "" || len(ev.in.Media) != 1 || ev.in.Text != "" || idOf(ev.in.Media[0].Source) != "AgACAgQAAxkBAAIBy" {
		t.Errorf("photo without caption: got %q, text %q, media %+v", why, ev.in.Text, ev.in.Media)
	}
	ev, why = r.route(loadUpdate(t, "update_private_photo_command.json"))
	if why != "" || ev.kind != evCommand || ev.cmd.Name != "picture" || ev.cmd.Args != "a lantern like this" || len(ev.in.Media) != 0 {
		t.Errorf("/picture in a caption: got %q, command %+v, media %+v", why, ev.cmd, ev.in.Media)
	}
	ev, why = r.route(loadUpdate(t, "update_private_voice_command.json"))
	if why != "" || ev.kind != evCommand || ev.cmd.Name != "voice" || ev.cmd.Args != "on" {
		t.Errorf("/voice on: got %q, command %+v", why, ev.cmd)
	}
}

func TestChoosePhoto(t *testing.T) {
	t.Parallel()
	sizes := func(s ...int) []tgbotapi.PhotoSize {
		var out []tgbotapi.PhotoSize
		for i, n := range s {
			out = append(out, tgbotapi.PhotoSize{FileID: string(rune('a' + i)), Width: 100 * (i + 1), Height: 100 * (i + 1), FileSize: n})
		}
		return out
	}
	tests := []struct {
		name  string
		sizes []tgbotapi.PhotoSize
		max   int64
		want  string
	}{
		{"largest fits", sizes(10, 20, 30), 30, "c"},
		{"largest too big", sizes(10, 20, 31), 30, "b"},
		{"none fits: the largest, for the pipeline to refuse", sizes(40, 50, 60), 30, "c"},
		{"unknown size counts as fitting", sizes(10, 0, 99), 30, "b"},
		{"one size", sizes(5), 30, "a"},
		{"order does not matter", []tgbotapi.PhotoSize{{FileID: "big", Width: 800, Height: 600, FileSize: 25}, {FileID: "small", Width: 90, Height: 60, FileSize: 2}}, 30, "big"},
	}
	for _, tt := range tests {
		if got := choosePhoto(tt.sizes, tt.max).FileID; got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFileEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		api, token, root string
		ok               bool
	}{
		{"", "1:AA", "https://api.telegram.org/file/bot1:AA/", true},
		{tgbotapi.APIEndpoint, "1:AA", "https://api.telegram.org/file/bot1:AA/", true},
		{"http://127.0.0.1:8081/bot%s/%s", "1:AA", "http://127.0.0.1:8081/file/bot1:AA/", true},
		{"https://proxy.example/telegram/bot%s/%s", "1:AA", "https://proxy.example/telegram/file/bot1:AA/", true},
		{"http://host/%s/%s", "1:AA", "", false},
		{"http://host/bot%s/%s?x=%s", "1:AA", "", false},
	}
	for _, tt := range tests {
		root, ok := fileRoot(tt.api, tt.token)
		if root != tt.root || ok != tt.ok {
			t.Errorf("fileRoot(%q): got %q %v, want %q %v", tt.api, root, ok, tt.root, tt.ok)
		}
	}
}

func TestFileURL(t *testing.T) {
	t.Parallel()
	const root = "http://127.0.0.1:8081/file/bot1:AA/"
	tests := []struct {
		path, want string
	}{
		{"photos/file_12.jpg", root + "photos/file_12.jpg"},
		{"documents/my notes.md", root + "documents/my%20notes.md"},
		{"../bot1:AA/getMe", ""},
		{"photos/../../x", ""},
		{"/var/lib/telegram-bot-api/1:AA/photos/file_1.jpg", ""},
		{"photos/x.jpg?y=1", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := fileURL(root, tt.path)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("fileURL(%q): got %q, %v; want %q", tt.path, got, err, tt.want)
		}
		if err != nil && !errors.Is(err, media.ErrNotAllowed) {
			t.Errorf("fileURL(%q): error %v is not media.ErrNotAllowed", tt.path, err)
		}
	}
}

func TestFileMethod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f             media.File
		method, field string
	}{
		{media.File{Kind: media.Voice, MIME: "audio/ogg", Data: []byte("OggS")}, "sendVoice", "voice"},
		{media.File{Kind: media.Voice, MIME: "audio/ogg; codecs=opus", Data: []byte("OggS")}, "sendVoice", "voice"},
		{media.File{Kind: media.Voice, MIME: "audio/mpeg", Data: []byte("ID3")}, "sendAudio", "audio"},
		{media.File{Kind: media.Audio, MIME: "audio/mpeg", Data: []byte("ID3")}, "sendAudio", "audio"},
		{media.File{Kind: media.Image, MIME: "image/png", Data: make([]byte, maxPhoto)}, "sendPhoto", "photo"},
		{media.File{Kind: media.Image, MIME: "image/png", Data: make([]byte, maxPhoto+1)}, "sendDocument", "document"},
		{media.File{Kind: media.Text, MIME: "text/plain", Data: []byte("x")}, "sendDocument", "document"},
	}
	for _, tt := range tests {
		if m, f := fileMethod(tt.f); m != tt.method || f != tt.field {
			t.Errorf("fileMethod(%s %s): got %s %s, want %s %s", tt.f.Kind, tt.f.MIME, m, f, tt.method, tt.field)
		}
	}
}

func TestClipCaption(t *testing.T) {
	t.Parallel()
	if got := clipCaption("short"); got != "short" {
		t.Errorf("short caption: got %q", got)
	}
	exact := strings.Repeat("a", maxCaption)
	if got := clipCaption(exact); got != exact {
		t.Errorf("a caption of exactly the limit was cut")
	}
	for _, unit := range []string{"a", "é", "😀"} {
		long := strings.Repeat(unit, maxCaption)
		got := clipCaption(long + "tail")
		if n := utf16Len(got); n > maxCaption || n < maxCaption-2 || !strings.HasSuffix(got, "…") {
			t.Errorf("clip of %q×%d: got %d units, suffix %q", unit, maxCaption, n, got[len(got)-3:])
		}
	}
}
