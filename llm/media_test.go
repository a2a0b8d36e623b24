package llm_test

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/media"
)

func pngURL(color string, w, h int) string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(openaitest.Picture(color, w, h))
}

func TestStreamSendsImagesWithTheLastUserMessage(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	c := newClient(t, s.URL(), nil)
	req := bot.ModelRequest{
		Messages: []bot.PromptMessage{
			{Role: bot.RoleSystem, Content: "You see."},
			{Role: bot.RoleUser, Content: "Earlier words."},
			{Role: bot.RoleAssistant, Content: "Noted."},
			{Role: bot.RoleUser, Content: "Look at these."},
		},
		Images: []string{pngURL("red", 64, 48), pngURL("blue", 10, 20)},
	}
	var deltas []string
	res, err := c.Stream(t.Context(), req, collect(&deltas))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	got, _ := s.Last()
	want := []openaitest.Image{
		{MIME: "image/png", Width: 64, Height: 48, Color: "red", Detail: "auto", Caption: "a 64x48 picture, mostly red"},
		{MIME: "image/png", Width: 10, Height: 20, Color: "blue", Detail: "auto", Caption: "a 10x20 picture, mostly blue"},
	}
	if len(got.Images) != 2 || got.Images[0] != want[0] || got.Images[1] != want[1] {
		t.Errorf("got images %+v, want %+v", got.Images, want)
	}
	wantText := []string{"You see.", "Earlier words.", "Noted.", "Look at these."}
	for i, m := range got.Messages {
		if m.Content != wantText[i] {
			t.Errorf("message %d: got %q, want %q", i, m.Content, wantText[i])
		}
	}
	if !strings.Contains(res.Text, "a 64x48 picture, mostly red; a 10x20 picture, mostly blue") {
		t.Errorf("got reply %q, want it to describe both pictures", res.Text)
	}

	// A message of pictures only, without streaming.
	req.Messages[3].Content = ""
	req.Images = req.Images[1:]
	if _, err := c.Complete(t.Context(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got, _ := s.Last(); len(got.Images) != 1 || got.Images[0].Color != "blue" || got.Messages[3].Content != "" {
		t.Errorf("got %+v, want one blue picture and no text", got)
	}
}

func TestStreamImageRefused(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	c := newClient(t, s.URL(), nil)
	req := request("Look.")
	req.Images = []string{"data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("no picture"))}
	_, err := c.Stream(t.Context(), req, collect(new([]string)))
	me := modelError(t, err)
	if me.Kind != "bad_request" || me.StatusCode != http.StatusBadRequest || me.Source != "chat" {
		t.Errorf("got %+v, want a chat bad_request with HTTP 400", me)
	}
	if n := s.Count(); n != 1 {
		t.Errorf("got %d requests, want 1 (a 400 is not retried)", n)
	}

	// What is not a data URL of a picture is not sent at all.
	for _, images := range [][]string{{"https://example.com/cat.png"}, {pngURL("red", 2, 2), "file:///etc/passwd"}} {
		req.Images = images
		_, err = c.Stream(t.Context(), req, collect(new([]string)))
		if me := modelError(t, err); me.Kind != "bad_request" {
			t.Errorf("%q: got %+v, want bad_request", images, me)
		}
	}
	noUser := bot.ModelRequest{Messages: []bot.PromptMessage{{Role: bot.RoleSystem, Content: "x"}}, Images: []string{pngURL("red", 2, 2)}}
	if _, err := c.Stream(t.Context(), noUser, collect(new([]string))); modelError(t, err).Kind != "bad_request" {
		t.Error("got no bad_request for images without a user message")
	}
	if n := s.Count(); n != 1 {
		t.Errorf("got %d requests, want still 1", n)
	}
}

func TestTranscribe(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.Model, cfg.Language = "whisper-test", "en" })
	note := []byte("OggS\x00\x02 spoken: I light the lamp. ")
	text, err := c.Transcribe(t.Context(), media.File{Kind: media.Voice, MIME: "audio/ogg", Data: note})
	if err != nil {
		t.Fatalf("Transcribe: %v", err)
	}
	if text != "I light the lamp." {
		t.Errorf("got %q, want %q", text, "I light the lamp.")
	}
	r := s.RequestsTo(openaitest.TranscriptionsPath)[0]
	if r.FileName != "voice.ogg" || r.FileSize != len(note) || r.Model != "whisper-test" || r.Language != "en" || r.ResponseFormat != "json" || !r.HasAuthorization {
		t.Errorf("got recorded %+v", r)
	}
	if _, err := c.Transcribe(t.Context(), media.File{Name: "memo.mp3", Data: note}); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Last(); r.FileName != "memo.mp3" {
		t.Errorf("got file name %q, want the file's own", r.FileName)
	}
}

func TestTranscribeFaults(t *testing.T) {
	t.Parallel()
	note := media.File{Data: []byte("spoken: hello")}
	tests := []struct {
		name     string
		answer   openaitest.Answer
		file     media.File
		kind     string
		status   int
		requests int
	}{
		{"500", openaitest.Answer{Fault: openaitest.Fault500}, note, "unavailable", 500, 1},
		{"413", openaitest.Answer{Status: 413}, note, "bad_request", 413, 1},
		{"400", openaitest.Answer{Status: 400}, note, "bad_request", 400, 1},
		{"401", openaitest.Answer{Status: 401}, note, "auth", 401, 1},
		{"429", openaitest.Answer{Fault: openaitest.Fault429}, note, "rate_limited", 429, 1},
		{"malformed", openaitest.Answer{Fault: openaitest.FaultMalformed}, note, "bad_answer", 0, 1},
		{"nothing heard", openaitest.Answer{Fault: openaitest.FaultEmpty}, note, "empty", 0, 1},
		{"no audio", openaitest.Answer{}, media.File{}, "empty", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.ScriptMedia(openaitest.TranscriptionsPath, tt.answer)
			c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.MaxRetries = -1 })
			_, err := c.Transcribe(t.Context(), tt.file)
			me := modelError(t, err)
			if me.Kind != tt.kind || me.StatusCode != tt.status || me.Source != "stt" {
				t.Errorf("got %s/%d/%s, want %s/%d/stt", me.Kind, me.StatusCode, me.Source, tt.kind, tt.status)
			}
			if n := s.Count(); n != tt.requests {
				t.Errorf("got %d requests, want %d", n, tt.requests)
			}
		})
	}
}

func TestMediaRetriesAsChatDoes(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.ScriptMedia(openaitest.TranscriptionsPath, openaitest.Answer{Fault: openaitest.Fault500}, openaitest.Answer{Fault: openaitest.Fault429})
	s.ScriptMedia(openaitest.SpeechPath, openaitest.Answer{Fault: openaitest.Fault500})
	s.ScriptMedia(openaitest.ImagesPath, openaitest.Answer{Status: 503})
	c := newClient(t, s.URL(), nil)
	if text, err := c.Transcribe(t.Context(), media.File{Data: []byte("spoken: again")}); err != nil || text != "again" {
		t.Errorf("Transcribe: got %q, %v; want the third try's text", text, err)
	}
	if _, err := c.Speak(t.Context(), "again", ""); err != nil {
		t.Errorf("Speak: %v", err)
	}
	if _, err := c.Paint(t.Context(), "again"); err != nil {
		t.Errorf("Paint: %v", err)
	}
	if n := s.Count(); n != 3+2+2 {
		t.Errorf("got %d requests, want 7", n)
	}
}

func TestSpeak(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, voice, wantVoice string
		want                     media.File
		prefix                   string
	}{
		{"", "", "alloy", media.File{Kind: media.Voice, Name: "reply.ogg", MIME: "audio/ogg"}, "OggS"},
		{"opus", "nova", "nova", media.File{Kind: media.Voice, Name: "reply.ogg", MIME: "audio/ogg"}, "OggS"},
		{"mp3", "", "alloy", media.File{Kind: media.Audio, Name: "reply.mp3", MIME: "audio/mpeg"}, "ID3"},
	}
	for _, tt := range tests {
		t.Run("format "+tt.format, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.Model, cfg.SpeechFormat = "tts-test", tt.format })
			f, err := c.Speak(t.Context(), "  The lamp is lit.  ", tt.voice)
			if err != nil {
				t.Fatalf("Speak: %v", err)
			}
			if f.Kind != tt.want.Kind || f.Name != tt.want.Name || f.MIME != tt.want.MIME {
				t.Errorf("got %s %s %s, want %s %s %s", f.Kind, f.Name, f.MIME, tt.want.Kind, tt.want.Name, tt.want.MIME)
			}
			if !bytes.HasPrefix(f.Data, []byte(tt.prefix)) || !bytes.Contains(f.Data, []byte("The lamp is lit.")) {
				t.Errorf("got bytes %q, want %s and the spoken text", f.Data, tt.prefix)
			}
			r, _ := s.Last()
			wantFormat := tt.format
			if wantFormat == "" {
				wantFormat = "opus"
			}
			if r.Path != openaitest.SpeechPath || r.Model != "tts-test" || r.Prompt != "The lamp is lit." || r.Voice != tt.wantVoice || r.ResponseFormat != wantFormat {
				t.Errorf("got recorded %+v", r)
			}
		})
	}
}

func TestSpeakFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer openaitest.Answer
		text   string
		kind   string
		status int
	}{
		{"500", openaitest.Answer{Fault: openaitest.Fault500}, "hi", "unavailable", 500},
		{"400", openaitest.Answer{Status: 400}, "hi", "bad_request", 400},
		{"not audio", openaitest.Answer{Fault: openaitest.FaultMalformed}, "hi", "bad_answer", 0},
		{"no bytes", openaitest.Answer{Fault: openaitest.FaultEmpty}, "hi", "empty", 0},
		{"cut", openaitest.Answer{Fault: openaitest.FaultCut}, "hi there, a longer line", "unavailable", 0},
		{"no text", openaitest.Answer{}, "  ", "bad_request", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.ScriptMedia(openaitest.SpeechPath, tt.answer)
			c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.MaxRetries = -1 })
			_, err := c.Speak(t.Context(), tt.text, "")
			me := modelError(t, err)
			if me.Kind != tt.kind || me.StatusCode != tt.status || me.Source != "tts" {
				t.Errorf("got %s/%d/%s, want %s/%d/tts", me.Kind, me.StatusCode, me.Source, tt.kind, tt.status)
			}
		})
	}
}

// TestSpeakNamesTheAnswerByItsBytes: an endpoint's answer is named by
// what it is, not by what was asked or what its Content-Type claims.
func TestSpeakNamesTheAnswerByItsBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType string
		body              []byte
		kind              media.Kind
		file              string
		fault             string
	}{
		{"ogg labelled mpeg", "audio/mpeg", []byte("OggS\x00\x02hello"), media.Voice, "reply.ogg", ""},
		{"mp3 frame without tag", "application/octet-stream", []byte("\xff\xfb\x90\x64hello"), media.Audio, "reply.mp3", ""},
		{"id3 labelled ogg", "audio/ogg", []byte("ID3hello"), media.Audio, "reply.mp3", ""},
		{"wav", "application/octet-stream", []byte("RIFF\x00\x00\x00\x00WAVEfmt "), media.Audio, "reply.wav", ""},
		{"opus by its type", "audio/ogg; codecs=opus", []byte("\x01\x02\x03"), media.Voice, "reply.ogg", ""},
		{"html", "text/html", []byte("<html>gateway</html>"), "", "", "bad_answer"},
		{"over 25 MB", "audio/ogg", append([]byte("OggS"), make([]byte, 25<<20)...), "", "", "bad_answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				_, _ = w.Write(tt.body)
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL+"/v1", func(cfg *llm.Config) { cfg.SpeechFormat = "mp3" })
			f, err := c.Speak(t.Context(), "hello", "")
			if tt.fault != "" {
				if me := modelError(t, err); me.Kind != tt.fault {
					t.Errorf("got kind %q, want %q", me.Kind, tt.fault)
				}
				return
			}
			if err != nil {
				t.Fatalf("Speak: %v", err)
			}
			if f.Kind != tt.kind || f.Name != tt.file {
				t.Errorf("got %s %s, want %s %s", f.Kind, f.Name, tt.kind, tt.file)
			}
		})
	}
}

func TestPaint(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.Model, cfg.ImageSize = "dall-e-test", "64x48" })
	const prompt = "The tavern at night, lamps lit."
	f, err := c.Paint(t.Context(), prompt)
	if err != nil {
		t.Fatalf("Paint: %v", err)
	}
	if f.Kind != media.Image || f.Name != "picture.png" || f.MIME != "image/png" {
		t.Errorf("got %s %s %s, want image picture.png image/png", f.Kind, f.Name, f.MIME)
	}
	m, err := png.Decode(bytes.NewReader(f.Data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := m.Bounds(); b.Dx() != 64 || b.Dy() != 48 {
		t.Errorf("got %v, want 64x48", b)
	}
	if got, want := openaitest.DominantColor(m), openaitest.PaintColor(prompt); got != want {
		t.Errorf("got colour %q, want %q", got, want)
	}
	r, _ := s.Last()
	if r.Prompt != prompt || r.Size != "64x48" || r.N != 1 || r.ResponseFormat != "b64_json" || r.Model != "dall-e-test" {
		t.Errorf("got recorded %+v", r)
	}

	// The default size, and a picture the API links to on its own host.
	s.SetImageLinks(true, "")
	c = newClient(t, s.URL(), nil)
	f, err = c.Paint(t.Context(), prompt)
	if err != nil {
		t.Fatalf("Paint by link: %v", err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(f.Data)); err != nil || cfg.Width != 1024 || cfg.Height != 1024 {
		t.Errorf("got %+v, %v; want a 1024x1024 PNG", cfg, err)
	}
	if r, _ := s.Last(); r.Method != http.MethodGet || !strings.HasPrefix(r.Path, "/v1/images/files/") || r.HasAuthorization {
		t.Errorf("got last request %+v, want the picture fetched without the key", r)
	}
}

func TestPaintRefusesAForeignLink(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write(openaitest.Picture("red", 4, 4))
	}))
	t.Cleanup(foreign.Close)
	s := openaitest.NewServer(t)
	s.SetImageLinks(true, foreign.URL)
	c := newClient(t, s.URL(), nil)
	_, err := c.Paint(t.Context(), "a picture elsewhere")
	me := modelError(t, err)
	if me.Kind != "bad_answer" || me.Source != "image" || !strings.Contains(err.Error(), "not the API's host") {
		t.Errorf("got %v, want an image bad_answer naming the foreign host", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the foreign host was asked %d times, want 0", n)
	}
}

func TestPaintFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer openaitest.Answer
		prompt string
		kind   string
		status int
	}{
		{"500", openaitest.Answer{Fault: openaitest.Fault500}, "p", "unavailable", 500},
		{"400", openaitest.Answer{Status: 400}, "p", "bad_request", 400},
		{"413", openaitest.Answer{Status: 413}, "p", "bad_request", 413},
		{"malformed", openaitest.Answer{Fault: openaitest.FaultMalformed}, "p", "bad_answer", 0},
		{"no picture", openaitest.Answer{Fault: openaitest.FaultEmpty}, "p", "bad_answer", 0},
		{"no prompt", openaitest.Answer{}, "", "bad_request", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.ScriptMedia(openaitest.ImagesPath, tt.answer)
			c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.MaxRetries, cfg.ImageSize = -1, "8x8" })
			_, err := c.Paint(t.Context(), tt.prompt)
			me := modelError(t, err)
			if me.Kind != tt.kind || me.StatusCode != tt.status || me.Source != "image" {
				t.Errorf("got %s/%d/%s, want %s/%d/image", me.Kind, me.StatusCode, me.Source, tt.kind, tt.status)
			}
		})
	}
}

func TestPaintRefusesWhatIsNotAPicture(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"created":1,"data":[{"b64_json":"` + base64.StdEncoding.EncodeToString([]byte("<svg/>")) + `"}]}`))
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL+"/v1", nil).Paint(t.Context(), "p")
	if me := modelError(t, err); me.Kind != "bad_answer" {
		t.Errorf("got %q, want bad_answer", me.Kind)
	}
}

// TestMediaDelaysAndTimeout: each call waits out the endpoint's delay, and
// an endpoint that hangs is given up after the client's timeout.
func TestMediaDelaysAndTimeout(t *testing.T) {
	t.Parallel()
	const delay = 150 * time.Millisecond
	calls := map[string]func(c *llm.Client, t *testing.T) error{
		openaitest.TranscriptionsPath: func(c *llm.Client, t *testing.T) error {
			_, err := c.Transcribe(t.Context(), media.File{Data: []byte("spoken: wait")})
			return err
		},
		openaitest.SpeechPath: func(c *llm.Client, t *testing.T) error {
			_, err := c.Speak(t.Context(), "wait", "")
			return err
		},
		openaitest.ImagesPath: func(c *llm.Client, t *testing.T) error {
			_, err := c.Paint(t.Context(), "wait")
			return err
		},
	}
	for path, call := range calls {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.SetMediaDelay(path, delay)
			c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.ImageSize = "16x16" })
			start := time.Now()
			if err := call(c, t); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < delay {
				t.Errorf("took %v, want at least the delay %v", took, delay)
			}

			s.SetMediaDelay(path, 0)
			s.ScriptMedia(path, openaitest.Answer{Fault: openaitest.FaultHang})
			c = newClient(t, s.URL(), func(cfg *llm.Config) { cfg.Timeout, cfg.MaxRetries = 200*time.Millisecond, -1 })
			start = time.Now()
			me := modelError(t, call(c, t))
			if me.Kind != "timeout" {
				t.Errorf("got kind %q, want timeout", me.Kind)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("gave up after %v, want about the 200ms timeout", took)
			}
		})
	}
}
