package discord

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/config"
	"troupe/media"
)

func TestKindOfAttachments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, typ string
		voice     bool
		want      media.Kind
		ok        bool
	}{
		{"lamp.png", "image/png", false, media.Image, true},
		{"photo.JPG", "", false, media.Image, true},
		{"odd.bin", "image/webp", false, media.Image, true},
		{"voice-message.ogg", "audio/ogg", true, media.Voice, true},
		{"voice-message.ogg", "", true, media.Voice, true},
		{"song.mp3", "audio/mpeg", false, media.Audio, true},
		{"take.ogg", "application/octet-stream", false, media.Audio, true},
		{"notes.txt", "text/plain; charset=utf-8", false, media.Text, true},
		{"README.md", "text/markdown; charset=utf-8", false, media.Text, true},
		{"data.json", "application/json", false, media.Text, true},
		{"notes.md", "text/x-markdown", false, media.Text, true},
		{"clip.mp4", "video/mp4", false, "", false},
		{"archive.zip", "application/zip", false, "", false},
		{"script.py", "text/x-python", false, "", false},
		{"unknown", "", false, "", false},
		// A picture on a voice message stays a picture.
		{"lamp.png", "image/png", true, media.Image, true},
	}
	for _, tt := range tests {
		got, ok := kindOf(tt.name, tt.typ, tt.voice)
		if got != tt.want || ok != tt.ok {
			t.Errorf("kindOf(%q, %q, voice %v) = %q, %v; want %q, %v", tt.name, tt.typ, tt.voice, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFileHosts(t *testing.T) {
	t.Parallel()
	if got := fileHosts(config.Discord{}); len(got) != 2 || got[0] != "https://cdn.discordapp.com/" || got[1] != "https://media.discordapp.net/" {
		t.Errorf("default hosts %v, want Discord's CDN and media proxy", got)
	}
	if got := fileHosts(config.Discord{CDNBaseURL: "http://127.0.0.1:9/cdn/"}); len(got) != 1 || got[0] != "http://127.0.0.1:9/cdn/" {
		t.Errorf("hosts of a fake CDN %v, want it alone", got)
	}
	hosts := fileHosts(config.Discord{})
	for raw, want := range map[string]bool{
		"https://cdn.discordapp.com/attachments/1/2/a.png?ex=1": true,
		"https://media.discordapp.net/attachments/1/2/a.png":    true,
		"https://CDN.discordapp.com/attachments/1/2/a.png":      true,
		"http://cdn.discordapp.com/attachments/1/2/a.png":       false,
		"https://cdn.discordapp.com.evil.example/a.png":         false,
		"https://images-ext-1.discordapp.net/external/x/a.png":  false,
		"https://example.com/a.png":                             false,
		"not a url":                                             false,
	} {
		if got := onHosts(hosts, raw); got != want {
			t.Errorf("onHosts(%q) = %v, want %v", raw, got, want)
		}
	}
	if got := onHosts([]string{"http://127.0.0.1:9/cdn/"}, "http://127.0.0.1:9/api/v10/users/@me"); got {
		t.Errorf("a path outside the CDN's prefix counted as on it")
	}
	for _, bad := range []string{"cdn.example.com/", "https://cdn.example.com", "ftp://cdn.example.com/"} {
		if _, err := New(config.Discord{Token: "t", CDNBaseURL: bad}, bot.New(bot.Options{}), nil); err == nil {
			t.Errorf("New took cdn_base_url %q", bad)
		}
	}
}

// mediaOf lists a message's attachments (kind, name, type, size, duration)
// and its embeds' pictures on the file hosts, in order, each once; a
// picture elsewhere, a video and an archive are left out.
func TestMediaOfMessage(t *testing.T) {
	t.Parallel()
	a, err := New(config.Discord{Token: "t", CDNBaseURL: "https://cdn.test/"}, bot.New(bot.Options{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	cdn := func(name string) string { return "https://cdn.test/attachments/1/2/" + name + "?ex=1&is=2&hm=3&" }
	m := &discordgo.Message{
		Flags: discordgo.MessageFlagsIsVoiceMessage,
		Attachments: []*discordgo.MessageAttachment{
			{URL: cdn("voice-message.ogg"), Filename: "voice-message.ogg", ContentType: "audio/ogg", Size: 5000, DurationSecs: 2.5},
			{URL: cdn("clip.mp4"), Filename: "clip.mp4", ContentType: "video/mp4", Size: 10},
			{URL: cdn("lamp.png"), Filename: "lamp.png", ContentType: "image/png", Size: 1234, Width: 4, Height: 4},
			{URL: cdn("notes.txt"), Filename: "notes.txt", ContentType: "text/plain; charset=utf-8", Size: 12},
		},
		Embeds: []*discordgo.MessageEmbed{
			{Type: discordgo.EmbedTypeImage, URL: cdn("map.png"), Thumbnail: &discordgo.MessageEmbedThumbnail{URL: cdn("map.png"), ProxyURL: "https://media.test/attachments/1/2/map.png"}},
			{Type: discordgo.EmbedTypeRich, Image: &discordgo.MessageEmbedImage{URL: "https://example.com/cat.png", ProxyURL: "https://cdn.test/external/x/cat.png"}},
			{Type: discordgo.EmbedTypeRich, Image: &discordgo.MessageEmbedImage{URL: cdn("lamp.png")}},
		},
	}
	got := a.mediaOf(m)
	type brief struct {
		kind media.Kind
		name string
		size int64
		dur  time.Duration
	}
	want := []brief{
		{media.Voice, "voice-message.ogg", 5000, 2500 * time.Millisecond},
		{media.Image, "lamp.png", 1234, 0},
		{media.Text, "notes.txt", 12, 0},
		{media.Image, "map.png", 0, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d items %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := brief{got[i].Kind, got[i].Name, got[i].Size, got[i].Duration}
		if g != w || got[i].Source == nil {
			t.Errorf("item %d = %+v, want %+v", i, g, w)
		}
	}
	if got[1].MIME != "image/png" {
		t.Errorf("MIME %q, want image/png", got[1].MIME)
	}
	// Without the voice flag an ogg file is audio.
	m.Flags = 0
	if got := a.mediaOf(m); got[0].Kind != media.Audio {
		t.Errorf("an ogg without the voice flag is %q, want audio", got[0].Kind)
	}
}

// The fetcher an item downloads through follows no redirect off the file
// hosts and reads nothing from other hosts.
func TestFetcherStaysOnTheFileHosts(t *testing.T) {
	t.Parallel()
	var foreign atomic.Int32
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreign.Add(1)
		_, _ = w.Write([]byte("elsewhere"))
	}))
	t.Cleanup(away.Close)
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cdn/moved.png" {
			http.Redirect(w, r, away.URL+"/x.png", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("picture"))
	}))
	t.Cleanup(cdn.Close)
	f := newFetcher([]string{cdn.URL + "/cdn/"})
	ctx := context.Background()
	if b, err := f.Source(cdn.URL+"/cdn/a.png").Download(ctx, 100); err != nil || string(b) != "picture" {
		t.Errorf("download from the CDN: %q, %v", b, err)
	}
	if _, err := f.Source(cdn.URL+"/cdn/moved.png").Download(ctx, 100); err == nil {
		t.Errorf("a redirect off the CDN was followed")
	}
	if _, err := f.Source(away.URL+"/x.png").Download(ctx, 100); !errors.Is(err, media.ErrNotAllowed) {
		t.Errorf("download from elsewhere: %v, want ErrNotAllowed", err)
	}
	if n := foreign.Load(); n != 0 {
		t.Errorf("the foreign host was asked %d times", n)
	}
}

func TestCheckFile(t *testing.T) {
	t.Parallel()
	if err := checkFile(media.File{Kind: media.Voice, Data: []byte("OggS")}); err != nil {
		t.Errorf("a small file: %v", err)
	}
	err := checkFile(media.File{Kind: media.Image, Name: "picture.png", Data: make([]byte, uploadLimit+1)})
	if !errors.Is(err, media.ErrTooLarge) || !strings.Contains(err.Error(), "picture.png") {
		t.Errorf("over the limit: %v, want ErrTooLarge naming the file", err)
	}
	if err := checkFile(media.File{Kind: media.Voice}); err == nil {
		t.Errorf("an empty file passed")
	}
	for kind, want := range map[media.Kind]string{media.Voice: "reply.ogg", media.Audio: "reply.mp3", media.Image: "picture.png"} {
		if got := fileName(media.File{Kind: kind}); got != want {
			t.Errorf("name of a %s: %q, want %q", kind, got, want)
		}
	}
}
