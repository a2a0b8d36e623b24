package bot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/media"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// fileHost is the platform's file host: an HTTP server that serves each
// path's bytes under /files/ and counts its downloads. Items reach it only
// through a media.Fetcher whose allowed prefix is its /files/, as an
// adapter builds them.
type fileHost struct {
	srv   *httptest.Server
	fetch media.Fetcher
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

func newFileHost(t testing.TB) *fileHost {
	h := &fileHost{files: map[string][]byte{}, hits: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/files/")
		h.mu.Lock()
		data, ok := h.files[path]
		h.hits[path]++
		h.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(h.srv.Close)
	h.fetch = media.Fetcher{Client: h.srv.Client(), Allowed: []string{h.srv.URL + "/files/"}}
	return h
}

// put serves data at path.
func (h *fileHost) put(path string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[path] = data
}

// item is an attachment of kind named name whose bytes are at path.
func (h *fileHost) item(kind media.Kind, name, path string) media.Item {
	return media.Item{Kind: kind, Name: name, Source: h.fetch.Source(h.srv.URL + "/files/" + path)}
}

// hitsOf counts the downloads of path.
func (h *fileHost) hitsOf(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// captionSystems start the caption request's system message.
var captionSystems = []string{"You describe pictures", "你为看不见图片的人描述图片"}

// isCaption tells the pipeline's caption request from a turn.
func isCaption(req openaitest.Request) bool {
	if len(req.Messages) == 0 {
		return false
	}
	for _, s := range captionSystems {
		if strings.HasPrefix(req.Messages[0].Content, s) {
			return true
		}
	}
	return false
}

// captioner answers a caption request with the caption the fake gives its
// picture (SetCaption), or with fail when it is set, and passes the rest
// to next.
type captioner struct {
	mu   sync.Mutex
	fail openaitest.Fault
	next func(openaitest.Request) openaitest.Answer
}

func (c *captioner) respond(req openaitest.Request) openaitest.Answer {
	if !isCaption(req) {
		return c.next(req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != openaitest.FaultNone {
		return openaitest.Answer{Fault: c.fail}
	}
	var seen []string
	for _, img := range req.Images {
		seen = append(seen, img.Caption)
	}
	return openaitest.Answer{Text: strings.Join(seen, "; ")}
}

func (c *captioner) failWith(f openaitest.Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = f
}

// mediaRig is a record rig whose pipeline takes media from a file host:
// vision and speech to text on the rig's fake unless edit turns them off.
type mediaRig struct {
	*recordRig
	host *fileHost
	capt *captioner
}

func newMediaRig(t testing.TB, b testenv.Backend, edit func(*bot.Options)) *mediaRig {
	t.Helper()
	return newMediaRigBatch(t, b, 1, edit)
}

// newMediaRigBatch is newMediaRig with the recorder's batch.
func newMediaRigBatch(t testing.TB, b testenv.Backend, batch int, edit func(*bot.Options)) *mediaRig {
	t.Helper()
	r := &mediaRig{recordRig: newRecordRigTB(t, b, batch), host: newFileHost(t)}
	r.capt = &captioner{next: openaitest.DefaultResponder}
	r.scribe.Next = r.capt.respond
	r.opt.Vision = true
	r.opt.Transcriber = r.opt.Model.(bot.Transcriber)
	if edit != nil {
		edit(&r.opt)
	}
	r.p = bot.New(r.opt)
	return r
}

// send hands message n of channel ch, as Ada, with items, and returns what
// its sink was told.
func (r *mediaRig) send(t *testing.T, ch string, n int, text string, items ...media.Item) *discardSink {
	t.Helper()
	in := inbound(ch, n)
	in.Text, in.Media = text, items
	sink := &discardSink{}
	if err := handle(context.Background(), r.p, in, sink); err != nil {
		t.Fatalf("message %d: %v", n, err)
	}
	return sink
}

// turns are the chat turns the fake was asked for, captions left out.
func turns(fake *openaitest.Server) []openaitest.Request {
	var out []openaitest.Request
	for _, r := range fake.Requests() {
		if r.Stream && !isCaption(r) && r.Path == "/v1/chat/completions" {
			out = append(out, r)
		}
	}
	return out
}

// captions are the caption requests the fake was asked for.
func captions(fake *openaitest.Server) []openaitest.Request {
	var out []openaitest.Request
	for _, r := range fake.Requests() {
		if isCaption(r) {
			out = append(out, r)
		}
	}
	return out
}

// lastTurn is the last chat turn the fake was asked for.
func lastTurn(t *testing.T, fake *openaitest.Server) openaitest.Request {
	t.Helper()
	ts := turns(fake)
	if len(ts) == 0 {
		t.Fatal("no chat turn was sent")
	}
	return ts[len(ts)-1]
}

// lastUser is the content of the request's last user message.
func lastUser(req openaitest.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// storedUsers are the user messages stored in channel ch's chat, oldest
// first.
func (r *mediaRig) storedUsers(t *testing.T, ch string) []string {
	t.Helper()
	var out []string
	if err := r.st.DB().Model(&models.Message{}).Where("chat_id = ? AND role = ?", r.chat(t, ch).ID, prompt.RoleUser).Order("id").Pluck("content", &out).Error; err != nil {
		t.Fatal(err)
	}
	return out
}

// A picture reaches the model as an image part of the turn that carries
// it, scaled to 1024 px, and is captioned once; the stored message holds
// the caption, and the next turn carries the caption and no pixels.
func TestPictureReachesTheModelOnceAndIsRememberedByItsCaption(t *testing.T) {
	const caption = "a red lantern on a stone sill, the word EMBER painted on its glass"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newMediaRig(t, b, nil)
			r.fake.SetCaption(func(img openaitest.Image) string {
				if img.Color == "red" {
					return caption
				}
				return openaitest.Describe(img)
			})
			r.host.put("lamp.png", openaitest.Picture("red", 2048, 1024))
			sink := r.send(t, "pic", 1, "Look what I found.", r.host.item(media.Image, "lamp.png", "lamp.png"))
			if len(sink.notices) != 0 {
				t.Errorf("notices %q, want none", sink.notices)
			}
			turn := lastTurn(t, r.fake)
			if len(turn.Images) != 1 || turn.Images[0].Color != "red" || max(turn.Images[0].Width, turn.Images[0].Height) != 1024 {
				t.Fatalf("the turn's image parts %+v, want one red picture scaled to 1024 px", turn.Images)
			}
			if u := lastUser(turn); !strings.Contains(u, "Look what I found.") || !strings.Contains(u, "[image: "+caption+"]") {
				t.Errorf("the turn's last user message %q lacks the text or the caption line", u)
			}
			if cs := captions(r.fake); len(cs) != 1 || len(cs[0].Images) != 1 {
				t.Fatalf("%d caption requests, want 1 with the picture", len(cs))
			}
			if got, want := r.storedUsers(t, "pic"), "Look what I found.\n[image: "+caption+"]"; len(got) != 1 || got[0] != want {
				t.Errorf("stored %q, want %q", got, want)
			}

			r.send(t, "pic", 2, "What does it say on the glass?")
			next := lastTurn(t, r.fake)
			if len(next.Images) != 0 {
				t.Errorf("the next turn sent %d image parts again, want none", len(next.Images))
			}
			held := false
			for _, m := range next.Messages {
				held = held || m.Role == "user" && strings.Contains(m.Content, "[image: "+caption+"]")
			}
			if !held {
				t.Errorf("the next turn does not carry the caption: %+v", next.Messages)
			}
			if n := len(captions(r.fake)); n != 1 {
				t.Errorf("%d caption requests after the second turn, want still 1", n)
			}
		})
	}
}

// Without vision a picture is named, never downloaded, and the channel is
// told once, over two pictures, that pictures are not seen; a picture
// without text still gets its turn.
func TestPictureWithoutVisionIsNamedAndToldOnce(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newMediaRig(t, b, func(o *bot.Options) { o.Vision = false })
			r.host.put("cat.png", openaitest.Picture("grey", 64, 64))
			first := r.send(t, "blind", 1, "", r.host.item(media.Image, "cat.png", "cat.png"))
			second := r.send(t, "blind", 2, "Another one.", r.host.item(media.Image, "", "cat.png"))
			notices := append(first.notices, second.notices...)
			if len(notices) != 1 || !strings.Contains(notices[0], "Pictures aren't seen here") {
				t.Errorf("notices %q, want exactly one saying pictures are not seen", notices)
			}
			want := []string{"[Ada sent an image: cat.png]", "Another one.\n[Ada sent an image: a picture]"}
			if got := r.storedUsers(t, "blind"); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("stored %q, want %q", got, want)
			}
			if n := r.host.hitsOf("cat.png"); n != 0 {
				t.Errorf("the picture was downloaded %d times without vision, want 0", n)
			}
			ts := turns(r.fake)
			if len(ts) != 2 || len(captions(r.fake)) != 0 {
				t.Fatalf("%d turns and %d captions, want 2 and 0", len(ts), len(captions(r.fake)))
			}
			for _, tr := range ts {
				if len(tr.Images) != 0 {
					t.Errorf("a turn sent %d image parts without vision", len(tr.Images))
				}
			}
		})
	}
}

// A voice note's words become the player's line, marked as spoken; without
// speech to text it is named and the channel told once.
func TestVoiceNoteBecomesTheSpokenLine(t *testing.T) {
	voice := []byte("OggS\x00\x02 spoken: I light the lamp.")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newMediaRig(t, b, nil)
			r.host.put("v1", voice)
			note := r.host.item(media.Voice, "", "v1")
			if sink := r.send(t, "voice", 1, "", note); len(sink.notices) != 0 {
				t.Errorf("notices %q, want none", sink.notices)
			}
			if u := lastUser(lastTurn(t, r.fake)); !strings.Contains(u, "[spoken] I light the lamp.") {
				t.Errorf("the turn's last user message %q lacks the spoken line", u)
			}
			if got := r.storedUsers(t, "voice"); len(got) != 1 || got[0] != "[spoken] I light the lamp." {
				t.Errorf("stored %q, want the spoken line", got)
			}
			if reqs := r.fake.RequestsTo(openaitest.TranscriptionsPath); len(reqs) != 1 || reqs[0].FileSize != len(voice) {
				t.Errorf("transcription requests %+v, want one with the whole note", reqs)
			}

			deaf := bot.New(func() bot.Options { o := r.opt; o.Transcriber = nil; return o }())
			var notices []string
			for i := 1; i <= 2; i++ {
				in := inbound("deaf", i)
				in.Text, in.Media = "", []media.Item{note}
				sink := &discardSink{}
				if err := handle(context.Background(), deaf, in, sink); err != nil {
					t.Fatal(err)
				}
				notices = append(notices, sink.notices...)
			}
			if len(notices) != 1 || !strings.Contains(notices[0], "Voice notes aren't heard here") {
				t.Errorf("without stt: notices %q, want exactly one", notices)
			}
			if got := r.storedUsers(t, "deaf"); len(got) != 2 || got[0] != "[Ada sent a voice note]" {
				t.Errorf("without stt: stored %q, want the name line", got)
			}
		})
	}
}

// A text file is quoted under its name, cut at media.max_text_chars.
func TestTextFileIsQuoted(t *testing.T) {
	b := testenv.Backends(t)[0]
	r := newMediaRig(t, b, func(o *bot.Options) { o.Media.Limits.MaxTextChars = 40 })
	r.host.put("notes.txt", []byte("The door code is 4711.\r\nBring rope.\n"))
	r.host.put("long.md", []byte(strings.Repeat("lore ", 20)))
	sink := r.send(t, "text", 1, "My notes:", r.host.item(media.Text, "notes.txt", "notes.txt"), r.host.item(media.Text, "long.md", "long.md"))
	if len(sink.notices) != 0 {
		t.Errorf("notices %q, want none", sink.notices)
	}
	want := "My notes:\n[file: notes.txt]\n> The door code is 4711.\n> Bring rope.\n[file: long.md]\n> " + strings.Repeat("lore ", 8) + "\n> [the rest of the file was cut]"
	if got := r.storedUsers(t, "text"); len(got) != 1 || got[0] != want {
		t.Errorf("stored %q, want %q", got, want)
	}
	if u := lastUser(lastTurn(t, r.fake)); !strings.Contains(u, "> The door code is 4711.") {
		t.Errorf("the turn lacks the quoted file: %q", u)
	}
}

// Each refused item gets a notice naming it and why, the rest of the
// message plays; a caption or transcription that fails leaves the name
// line and sends no pixels; a message left with nothing gets no turn.
func TestRefusedMediaAreToldAndTheTextStillPlays(t *testing.T) {
	elsewhere := newFileHost(t)
	elsewhere.put("lamp.png", openaitest.Picture("red", 32, 32))
	noise := make([]byte, 30000)
	for i := range noise {
		noise[i] = byte(i * 7)
	}
	tests := []struct {
		name  string
		items func(h *fileHost) []media.Item
		fail  func(r *mediaRig)
		// notice must hold each; line the stored text, images the parts sent.
		notice       []string
		line         []string
		images       int
		notFetched   string
		noTextNoTurn bool
	}{
		{name: "too many", items: func(h *fileHost) []media.Item {
			var out []media.Item
			for i, c := range []string{"red", "green", "blue", "yellow", "white"} {
				h.put(c+".png", openaitest.Picture(c, 32, 32))
				out = append(out, h.item(media.Image, fmt.Sprintf("p%d.png", i+1), c+".png"))
			}
			return out
		}, notice: []string{"p5.png", "at most 4 pictures"}, line: []string{"mostly red", "mostly yellow"}, images: 4, notFetched: "white.png"},
		{name: "size reported", items: func(h *fileHost) []media.Item {
			h.put("big.png", noise)
			it := h.item(media.Image, "big.png", "big.png")
			it.Size = 30000
			return []media.Item{it}
		}, notice: []string{"big.png", "larger than 1 MB"}, notFetched: "big.png"},
		{name: "size found", items: func(h *fileHost) []media.Item {
			h.put("big.png", noise)
			return []media.Item{h.item(media.Image, "big.png", "big.png")}
		}, notice: []string{"big.png", "larger than 1 MB"}},
		{name: "malformed", items: func(h *fileHost) []media.Item {
			h.put("junk.png", []byte("this is not a picture"))
			return []media.Item{h.item(media.Image, "junk.png", "junk.png")}
		}, notice: []string{"junk.png", "not a picture troupe can read"}},
		{name: "off host", items: func(h *fileHost) []media.Item {
			it := h.item(media.Image, "lamp.png", "lamp.png")
			it.Source = h.fetch.Source(elsewhere.srv.URL + "/files/lamp.png")
			return []media.Item{it}
		}, notice: []string{"lamp.png", "own file host"}},
		{name: "caption fails", items: func(h *fileHost) []media.Item {
			h.put("lamp.png", openaitest.Picture("red", 32, 32))
			return []media.Item{h.item(media.Image, "lamp.png", "lamp.png")}
		}, fail: func(r *mediaRig) { r.capt.failWith(openaitest.Fault500) },
			notice: []string{"lamp.png", "could not be described"}, line: []string{"[Ada sent an image: lamp.png]"}},
		{name: "transcription fails", items: func(h *fileHost) []media.Item {
			h.put("v.ogg", []byte("OggS\x00\x02 spoken: I light the lamp."))
			return []media.Item{h.item(media.Voice, "v.ogg", "v.ogg")}
		}, fail: func(r *mediaRig) {
			r.fake.ScriptMedia(openaitest.TranscriptionsPath, openaitest.Answer{Fault: openaitest.Fault500})
		}, notice: []string{"v.ogg", "could not be transcribed"}, line: []string{"[Ada sent a voice note]"}},
		{name: "nothing left", items: func(h *fileHost) []media.Item {
			h.put("junk.png", []byte("this is not a picture"))
			return []media.Item{h.item(media.Image, "junk.png", "junk.png")}
		}, notice: []string{"junk.png"}, noTextNoTurn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Each case has databases of its own: cases sharing one
			// SQLite file would share the channel.
			for _, b := range testenv.Backends(t) {
				t.Run(b.Name, func(t *testing.T) {
					r := newMediaRig(t, b, func(o *bot.Options) { o.Media.Limits.MaxImageBytes = 20000 })
					if tt.fail != nil {
						tt.fail(r)
					}
					text := "Case " + tt.name + ": I wave at Maren."
					if tt.noTextNoTurn {
						text = ""
					}
					sink := r.send(t, "refused", 1, text, tt.items(r.host)...)
					all := strings.Join(sink.notices, "\n")
					for _, want := range tt.notice {
						if !strings.Contains(all, want) {
							t.Errorf("notices %q lack %q", sink.notices, want)
						}
					}
					if tt.notFetched != "" && r.host.hitsOf(tt.notFetched) != 0 {
						t.Errorf("%s was downloaded, want refused before", tt.notFetched)
					}
					if tt.noTextNoTurn {
						if n := len(turns(r.fake)); n != 0 {
							t.Errorf("%d turns for a message left with nothing, want 0", n)
						}
						return
					}
					turn := lastTurn(t, r.fake)
					if u := lastUser(turn); !strings.Contains(u, "I wave at Maren.") {
						t.Errorf("the text did not play: last user message %q", u)
					}
					if len(turn.Images) != tt.images {
						t.Errorf("the turn sent %d image parts, want %d", len(turn.Images), tt.images)
					}
					stored := r.storedUsers(t, "refused")
					if len(stored) != 1 {
						t.Fatalf("stored %q, want one message", stored)
					}
					for _, want := range tt.line {
						if !strings.Contains(stored[0], want) {
							t.Errorf("stored %q lacks %q", stored[0], want)
						}
					}
					if len(tt.line) == 0 && strings.Contains(stored[0], "[") {
						t.Errorf("stored %q holds a line of a refused item", stored[0])
					}
				})
			}
		})
	}
}

// Pictures take their share of the context window when the prompt is
// fitted (imagePromptTokens each): a story that fits whole beside a text
// turn loses its oldest uncovered turns beside four pictures (a compaction
// is then owed), rather than the request overflowing the window.
func TestPicturesTakeTheirShareOfTheWindow(t *testing.T) {
	r := newMediaRig(t, testenv.Backends(t)[0], func(o *bot.Options) { o.ContextWindow = 6000 })
	for i := 1; i <= 20; i++ {
		r.send(t, "window", i, fmt.Sprintf("Beat %d: %s", i, strings.Repeat("I walk the long quay past the nets and the tar barrels. ", 7)))
	}
	textOnly := lastTurn(t, r.fake)
	var items []media.Item
	for _, c := range []string{"red", "green", "blue", "yellow"} {
		r.host.put(c+".png", openaitest.Picture(c, 32, 32))
		items = append(items, r.host.item(media.Image, c+".png", c+".png"))
	}
	sink := r.send(t, "window", 21, "Look at these.", items...)
	withPictures := lastTurn(t, r.fake)
	if len(withPictures.Images) != 4 {
		t.Fatalf("%d image parts, want 4", len(withPictures.Images))
	}
	if len(sink.notices) != 0 {
		t.Errorf("notices %q, want none (older turns leave quietly, as for a long text)", sink.notices)
	}
	if len(withPictures.Messages) >= len(textOnly.Messages) {
		t.Errorf("the picture turn sent %d messages, the text turn before it %d: nothing was left out for the pictures", len(withPictures.Messages), len(textOnly.Messages))
	}
}
