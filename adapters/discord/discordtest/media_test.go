package discordtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// pngOf is a real PNG of w×h pixels.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// identified is a gateway client past READY and the guilds' GUILD_CREATE.
func identified(t *testing.T, s *Server) *client {
	t.Helper()
	c := dial(t, s)
	c.send(obj{"op": opIdentify, "d": obj{"token": "Bot " + s.Token(), "intents": 37377, "properties": obj{"os": "linux"}}})
	for {
		if f := c.read(); f.T == "GUILD_CREATE" {
			return c
		}
	}
}

func get(t *testing.T, u string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// A user's message with a picture and a voice message comes on the gateway
// with attachment objects as Discord sends them (the picture's size, the
// voice message's duration and waveform, the message's voice flag), and
// their URLs, on the CDN and on the media proxy, serve the bytes.
func TestPostedAttachmentsOnGatewayAndCDN(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Options{})
	g := s.AddGuild("Hall")
	ch := s.AddChannel(g, "roleplay")
	c := identified(t, s)
	pic := pngOf(t, 40, 30)
	voice := []byte("OggS\x00\x02 spoken: I light the lamp.")
	s.Post(Post{ChannelID: ch, Author: User{ID: s.NewID(), Username: "ada"}, Flags: VoiceMessageFlag, Attachments: []Attachment{
		{Filename: "my lamp.png", ContentType: "image/png", Data: pic},
		VoiceMessage(voice, 2.5),
	}})
	f := c.read()
	var m discordgo.Message
	if f.T != "MESSAGE_CREATE" || json.Unmarshal(f.D, &m) != nil {
		t.Fatalf("got %s %s", f.T, f.D)
	}
	if m.Flags&discordgo.MessageFlagsIsVoiceMessage == 0 || len(m.Attachments) != 2 {
		t.Fatalf("flags %d, %d attachments; want the voice flag and 2", m.Flags, len(m.Attachments))
	}
	img, vm := m.Attachments[0], m.Attachments[1]
	if img.Filename != "my_lamp.png" || img.ContentType != "image/png" || img.Size != len(pic) || img.Width != 40 || img.Height != 30 || img.ID == "" {
		t.Errorf("image attachment %+v", img)
	}
	if want := s.CDNURL() + "attachments/" + ch + "/" + img.ID + "/my_lamp.png?ex="; !strings.HasPrefix(img.URL, want) {
		t.Errorf("url %q, want it to start with %q", img.URL, want)
	}
	if want := s.MediaURL() + "attachments/" + ch + "/" + img.ID + "/my_lamp.png?ex="; !strings.HasPrefix(img.ProxyURL, want) {
		t.Errorf("proxy_url %q, want it to start with %q", img.ProxyURL, want)
	}
	if vm.Filename != "voice-message.ogg" || vm.ContentType != "audio/ogg" || vm.DurationSecs != 2.5 || vm.Waveform == "" || vm.Width != 0 {
		t.Errorf("voice attachment %+v", vm)
	}
	// The raw payload has no width on the voice note and no duration on
	// the picture, as Discord's has none.
	var raw struct {
		Attachments []map[string]any `json:"attachments"`
	}
	_ = json.Unmarshal(f.D, &raw)
	if _, ok := raw.Attachments[1]["width"]; ok {
		t.Errorf("voice attachment has a width: %v", raw.Attachments[1])
	}
	if _, ok := raw.Attachments[0]["duration_secs"]; ok {
		t.Errorf("image attachment has a duration: %v", raw.Attachments[0])
	}
	for _, u := range []string{img.URL, img.ProxyURL} {
		if code, typ, b := get(t, u); code != 200 || typ != "image/png" || !bytes.Equal(b, pic) {
			t.Errorf("GET %s: %d %s, %d bytes", u, code, typ, len(b))
		}
	}
	if code, _, b := get(t, vm.URL); code != 200 || !bytes.Equal(b, voice) {
		t.Errorf("GET voice: %d %q", code, b)
	}
	if code, _, _ := get(t, s.CDNURL()+"attachments/"+ch+"/1/nothing.png"); code != 404 {
		t.Errorf("unknown file: %d, want 404", code)
	}
	if hits := s.CDNRequests(); len(hits) != 4 || !strings.HasPrefix(hits[0], "/cdn/attachments/") || !strings.HasPrefix(hits[1], "/media/attachments/") {
		t.Errorf("CDN requests %v", hits)
	}
}

// A posted message reports the size a test gives (a file too large to
// bother serving whole), and embeds carry their pictures' URLs: a CDN
// file's with its proxy URL and size, a picture elsewhere with an
// external proxy URL that fetches it from its own host.
func TestPostedSizesAndEmbeds(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Options{})
	g := s.AddGuild("Hall")
	ch := s.AddChannel(g, "roleplay")
	var mu sync.Mutex
	foreign := 0
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		foreign++
		mu.Unlock()
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngOf(t, 8, 8))
	}))
	t.Cleanup(away.Close)
	c := identified(t, s)
	onCDN := s.AddFile(ch, Attachment{Filename: "map.png", ContentType: "image/png", Data: pngOf(t, 64, 48)})
	s.Post(Post{ChannelID: ch, Author: User{ID: s.NewID(), Username: "ada"}, Content: "look",
		Attachments: []Attachment{{Filename: "big.png", ContentType: "image/png", Data: []byte("x"), Size: 9 << 20}},
		Embeds:      []Embed{{Type: "image", URL: onCDN.URL, Thumbnail: onCDN.URL}, {Title: "elsewhere", Image: away.URL + "/pic.png"}}})
	var m discordgo.Message
	if f := c.read(); json.Unmarshal(f.D, &m) != nil || len(m.Embeds) != 2 || len(m.Attachments) != 1 {
		t.Fatalf("MESSAGE_CREATE %s", f.D)
	}
	if m.Attachments[0].Size != 9<<20 {
		t.Errorf("size %d, want the given 9 MiB", m.Attachments[0].Size)
	}
	th := m.Embeds[0].Thumbnail
	if m.Embeds[0].Type != "image" || th == nil || th.URL != onCDN.URL || th.ProxyURL != onCDN.ProxyURL || th.Width != 64 {
		t.Errorf("CDN embed %+v thumbnail %+v", m.Embeds[0], th)
	}
	im := m.Embeds[1].Image
	if im == nil || im.URL != away.URL+"/pic.png" || !strings.HasPrefix(im.ProxyURL, s.MediaURL()+"external/") {
		t.Fatalf("external embed image %+v", im)
	}
	mu.Lock()
	before := foreign
	mu.Unlock()
	if before != 0 {
		t.Errorf("the foreign host was asked %d times before anyone fetched", before)
	}
	if code, _, b := get(t, im.ProxyURL); code != 200 || len(b) == 0 {
		t.Errorf("GET external proxy: %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if foreign != 1 {
		t.Errorf("the media proxy asked the foreign host %d times, want 1", foreign)
	}
}

// rebase sends discordgo's requests for discord.com to the fake.
type rebase struct{ base string }

func (rb rebase) RoundTrip(r *http.Request) (*http.Response, error) {
	p := r.URL.Path
	if i := strings.Index(p, "/api/v"); i >= 0 {
		rest := p[i+len("/api/v"):]
		_, rest, _ = strings.Cut(rest, "/")
		u := rb.base + "api/v10/" + rest
		if r.URL.RawQuery != "" {
			u += "?" + r.URL.RawQuery
		}
		out := r.Clone(r.Context())
		var err error
		out.URL, err = out.URL.Parse(u)
		if err != nil {
			return nil, err
		}
		out.Host = ""
		return http.DefaultTransport.RoundTrip(out)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func restClient(t *testing.T, s *Server) *discordgo.Session {
	t.Helper()
	ds, err := discordgo.New("Bot " + s.Token())
	if err != nil {
		t.Fatal(err)
	}
	ds.Client = &http.Client{Transport: rebase{base: s.URL()}}
	ds.MaxRestRetries = 0
	return ds
}

func files(name, typ string, data []byte) []*discordgo.File {
	return []*discordgo.File{{Name: name, ContentType: typ, Reader: bytes.NewReader(data)}}
}

// Files sent by discordgo as multipart/form-data — a webhook message, a
// message as the bot, an interaction response and follow-up — land on
// their messages with name, content type and bytes, are served by the CDN,
// and come back in the message objects; the text goes with them. More than
// the upload limit is refused with 413, as Discord does.
func TestMultipartUploadsLikeDiscordgo(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Options{UploadLimit: 1 << 20})
	g := s.AddGuild("Hall")
	ch := s.AddChannel(g, "roleplay")
	ds := restClient(t, s)
	hook, err := ds.WebhookCreate(ch, "troupe", "")
	if err != nil {
		t.Fatal(err)
	}
	ogg := []byte("OggS spoken reply")
	pic := pngOf(t, 16, 16)

	m, err := ds.WebhookExecute(hook.ID, hook.Token, true, &discordgo.WebhookParams{Username: "Maren", Files: files("reply.ogg", "audio/ogg", ogg)})
	if err != nil {
		t.Fatalf("webhook execute with a file: %v", err)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Filename != "reply.ogg" || m.Attachments[0].ContentType != "audio/ogg" || m.Attachments[0].Size != len(ogg) {
		t.Errorf("webhook message attachments %+v", m.Attachments)
	}
	m2, err := ds.ChannelMessageSendComplex(ch, &discordgo.MessageSend{Content: "A map.", Files: files("picture.png", "image/png", pic)})
	if err != nil {
		t.Fatalf("channel message with a file: %v", err)
	}
	if len(m2.Attachments) != 1 || m2.Attachments[0].Width != 16 {
		t.Errorf("bot message attachments %+v", m2.Attachments)
	}
	stored := s.Messages(ch)
	if len(stored) != 2 || stored[0].Username != "Maren" || stored[1].Content != "A map." {
		t.Fatalf("stored messages %+v", stored)
	}
	if a := stored[0].Attachments; len(a) != 1 || a[0].Filename != "reply.ogg" || a[0].ContentType != "audio/ogg" || !bytes.Equal(a[0].Data, ogg) {
		t.Errorf("stored webhook attachment %+v", a)
	}
	if a := stored[1].Attachments; len(a) != 1 || !bytes.Equal(a[0].Data, pic) {
		t.Errorf("stored bot attachment %+v", a)
	}
	if code, _, b := get(t, m2.Attachments[0].URL); code != 200 || !bytes.Equal(b, pic) {
		t.Errorf("CDN of an upload: %d", code)
	}
	// The recorded call holds the JSON payload.
	calls := s.CallsTo("POST /channels/*/messages")
	if len(calls) != 1 || !strings.Contains(string(calls[0].Body), `"content":"A map."`) {
		t.Errorf("recorded call %+v", calls)
	}

	// An interaction: a response with a file, then a follow-up with one.
	ix := s.Command(Slash{ChannelID: ch, User: User{ID: s.NewID(), Username: "ada"}, Name: "picture"})
	i := &discordgo.Interaction{ID: ix.ID, Token: ix.Token, AppID: s.AppID()}
	err = ds.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "Here.", Files: files("picture.png", "image/png", pic)}})
	if err != nil {
		t.Fatalf("interaction response with a file: %v", err)
	}
	if _, err := ds.FollowupMessageCreate(i, true, &discordgo.WebhookParams{Content: "And this.", Files: files("reply.mp3", "audio/mpeg", []byte("ID3 hi"))}); err != nil {
		t.Fatalf("follow-up with a file: %v", err)
	}
	got := ix.Messages()
	if len(got) != 2 || len(got[0].Attachments) != 1 || got[0].Attachments[0].Filename != "picture.png" ||
		len(got[1].Attachments) != 1 || got[1].Attachments[0].ContentType != "audio/mpeg" || got[1].Content != "And this." {
		t.Errorf("interaction messages %+v", got)
	}

	// Over the limit, and a message with nothing in it.
	_, err = ds.ChannelMessageSendComplex(ch, &discordgo.MessageSend{Files: files("big.png", "image/png", make([]byte, 1<<20+1))})
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response.StatusCode != 413 || re.Message == nil || re.Message.Code != 40005 {
		t.Errorf("oversize upload: %v, want 413 code 40005", err)
	}
	_, err = ds.ChannelMessageSendComplex(ch, &discordgo.MessageSend{})
	if !errors.As(err, &re) || re.Message == nil || re.Message.Code != 50006 {
		t.Errorf("empty message: %v, want code 50006", err)
	}
}

// splitMultipart takes what discordgo writes and refuses what Discord
// would: a part files[n] without a file name, a body without a boundary.
func TestSplitMultipart(t *testing.T) {
	t.Parallel()
	ct, body, err := discordgo.MultipartBodyWithJSON(obj{"content": "hi"}, []*discordgo.File{
		{Name: "a.txt", ContentType: "text/plain", Reader: strings.NewReader("one")},
		{Name: "b.bin", Reader: strings.NewReader("two")},
	})
	if err != nil {
		t.Fatal(err)
	}
	payload, got, err := splitMultipart(ct, body, 100)
	if err != nil || string(payload) != `{"content":"hi"}` || len(got) != 2 ||
		got[0].Filename != "a.txt" || got[0].ContentType != "text/plain" || string(got[0].Data) != "one" ||
		got[1].ContentType != "application/octet-stream" || string(got[1].Data) != "two" {
		t.Errorf("split: %s %+v %v", payload, got, err)
	}
	if _, _, err := splitMultipart(ct, body, 5); !errors.Is(err, errTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if p, f, err := splitMultipart("application/json", []byte(`{"a":1}`), 100); err != nil || string(p) != `{"a":1}` || f != nil {
		t.Errorf("JSON body: %s %v %v", p, f, err)
	}
	if _, _, err := splitMultipart("multipart/form-data", body, 100); err == nil {
		t.Error("no boundary: no error")
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="files[0]"`)
	pw, _ := w.CreatePart(h)
	_, _ = pw.Write([]byte("x"))
	_ = w.Close()
	if _, _, err := splitMultipart(w.FormDataContentType(), b.Bytes(), 100); err == nil {
		t.Error("a file part without a file name: no error")
	}
}
