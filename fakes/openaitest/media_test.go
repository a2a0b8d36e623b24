package openaitest_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/sashabaranov/go-openai"

	"troupe/fakes/openaitest"
)

// voiceNote is a recording the fake hears as "I light the lamp.".
var voiceNote = []byte("OggS\x00\x02\x00\x00 spoken:  I light the lamp. \n")

func transcribe(t *testing.T, s *openaitest.Server, format oai.AudioResponseFormat, language string) (oai.AudioResponse, error) {
	return client(s).CreateTranscription(t.Context(), oai.AudioRequest{
		Model:    "whisper-1",
		FilePath: "note.ogg",
		Reader:   bytes.NewReader(voiceNote),
		Format:   format,
		Language: language,
	})
}

func TestTranscriptions(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	for _, format := range []oai.AudioResponseFormat{"", oai.AudioResponseFormatJSON, oai.AudioResponseFormatVerboseJSON, oai.AudioResponseFormatText} {
		resp, err := transcribe(t, s, format, "en")
		if err != nil {
			t.Fatalf("format %q: %v", format, err)
		}
		if got := strings.TrimSpace(resp.Text); got != "I light the lamp." {
			t.Errorf("format %q: got %q, want the text after spoken:", format, got)
		}
	}
	reqs := s.RequestsTo(openaitest.TranscriptionsPath)
	if len(reqs) != 4 {
		t.Fatalf("got %d recorded transcriptions, want 4", len(reqs))
	}
	r := reqs[1]
	if r.FileName != "note.ogg" || r.FileSize != len(voiceNote) || r.Model != "whisper-1" || r.Language != "en" || r.ResponseFormat != "json" {
		t.Errorf("got recorded %+v", r)
	}

	s.SetTranscriber(func(audio []byte) string { return "heard " + string(audio[:4]) })
	if resp, err := transcribe(t, s, "", ""); err != nil || resp.Text != "heard OggS" {
		t.Errorf("got %q, %v; want the transcriber's text", resp.Text, err)
	}
	s.ScriptMedia(openaitest.TranscriptionsPath, openaitest.Answer{Text: "scripted words"})
	if resp, err := transcribe(t, s, "", ""); err != nil || resp.Text != "scripted words" {
		t.Errorf("got %q, %v; want the scripted text", resp.Text, err)
	}
	s.SetTranscriber(nil)
	if got := openaitest.Transcript([]byte("no marker")); got != "" {
		t.Errorf("got Transcript %q for bytes without spoken:, want empty", got)
	}
}

// form posts a multipart form of fields, with file when it is not nil.
func form(t *testing.T, s *openaitest.Server, fields map[string]string, file []byte) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if file != nil {
		fw, _ := mw.CreateFormFile("file", "a.ogg")
		_, _ = fw.Write(file)
	}
	_ = mw.Close()
	resp, err := http.Post(s.URL()+"/audio/transcriptions", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestTranscriptionsRefused(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	tests := []struct {
		name   string
		fields map[string]string
		file   []byte
		want   int
	}{
		{"no file", map[string]string{"model": "whisper-1"}, nil, 400},
		{"empty file", map[string]string{"model": "whisper-1"}, []byte{}, 400},
		{"no model", map[string]string{}, voiceNote, 400},
		{"srt", map[string]string{"model": "whisper-1", "response_format": "srt"}, voiceNote, 400},
		{"over 25 MB", map[string]string{"model": "whisper-1"}, make([]byte, 25<<20+10), 413},
		{"fine", map[string]string{"model": "whisper-1"}, voiceNote, 200},
	}
	for _, tt := range tests {
		if resp := form(t, s, tt.fields, tt.file); resp.StatusCode != tt.want {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: got %d %s, want %d", tt.name, resp.StatusCode, b, tt.want)
		}
	}
	// Not JSON: the model list applies all the same.
	s.SetModels("other")
	if resp := form(t, s, map[string]string{"model": "whisper-1"}, voiceNote); resp.StatusCode != http.StatusNotFound {
		t.Errorf("got %d for a model not served, want 404", resp.StatusCode)
	}
}

func TestSpeech(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	tests := []struct {
		format      oai.SpeechResponseFormat
		contentType string
		prefix      string
	}{
		{oai.SpeechResponseFormatOpus, "audio/ogg", "OggS\x00\x02"},
		{oai.SpeechResponseFormatMp3, "audio/mpeg", "ID3"},
		{"", "audio/mpeg", "ID3"}, // OpenAI's default is mp3
	}
	for _, tt := range tests {
		raw, err := client(s).CreateSpeech(t.Context(), oai.CreateSpeechRequest{Model: "tts-1", Input: "The lamp is lit.", Voice: "nova", ResponseFormat: tt.format})
		if err != nil {
			t.Fatalf("format %q: %v", tt.format, err)
		}
		data, _ := io.ReadAll(raw)
		raw.Close()
		if want := tt.prefix + "The lamp is lit."; string(data) != want {
			t.Errorf("format %q: got %q, want %q", tt.format, data, want)
		}
		if got := raw.Header().Get("Content-Type"); got != tt.contentType {
			t.Errorf("format %q: got Content-Type %q, want %q", tt.format, got, tt.contentType)
		}
	}
	r := s.RequestsTo(openaitest.SpeechPath)[0]
	if r.Model != "tts-1" || r.Prompt != "The lamp is lit." || r.Voice != "nova" || r.ResponseFormat != "opus" {
		t.Errorf("got recorded %+v", r)
	}
	refused := []oai.CreateSpeechRequest{
		{Input: "x", Voice: "nova"},
		{Model: "tts-1", Voice: "nova"},
		{Model: "tts-1", Input: "x"},
		{Model: "tts-1", Input: "x", Voice: "nova", ResponseFormat: "wav"},
		{Model: "tts-1", Input: strings.Repeat("x", 4097), Voice: "nova"},
	}
	for _, req := range refused {
		_, err := client(s).CreateSpeech(t.Context(), req)
		if status(err) != http.StatusBadRequest {
			t.Errorf("%+v: got %v, want HTTP 400", req, err)
		}
	}
}

func TestImages(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	const prompt = "A lamp-lit tavern at night"
	resp, err := client(s).CreateImage(t.Context(), oai.ImageRequest{Model: "dall-e-3", Prompt: prompt, N: 1, Size: "32x16", ResponseFormat: oai.CreateImageResponseFormatB64JSON})
	if err != nil {
		t.Fatalf("CreateImage: %v", err)
	}
	if len(resp.Data) != 1 || resp.Data[0].RevisedPrompt != prompt {
		t.Fatalf("got %+v", resp)
	}
	data, err := base64.StdEncoding.DecodeString(resp.Data[0].B64JSON)
	if err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("answer is not a PNG: %v", err)
	}
	if m.Bounds() != image.Rect(0, 0, 32, 16) {
		t.Errorf("got bounds %v, want 32x16", m.Bounds())
	}
	if got, want := openaitest.DominantColor(m), openaitest.PaintColor(prompt); got != want {
		t.Errorf("got colour %q, want PaintColor's %q", got, want)
	}
	r, _ := s.Last()
	if r.Path != openaitest.ImagesPath || r.Prompt != prompt || r.Size != "32x16" || r.N != 1 || r.Model != "dall-e-3" || r.ResponseFormat != "b64_json" {
		t.Errorf("got recorded %+v", r)
	}

	// A link to the fake itself, fetched from it.
	resp, err = client(s).CreateImage(t.Context(), oai.ImageRequest{Model: "dall-e-3", Prompt: prompt, Size: "8x8", ResponseFormat: oai.CreateImageResponseFormatURL})
	if err != nil || len(resp.Data) != 1 || !strings.HasPrefix(resp.Data[0].URL, s.URL()+"/images/files/") {
		t.Fatalf("got %+v, %v; want a link to the fake", resp, err)
	}
	got, err := http.Get(resp.Data[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if cfg, err := png.DecodeConfig(got.Body); err != nil || cfg.Width != 8 || cfg.Height != 8 {
		t.Errorf("got %+v, %v from the link, want an 8x8 PNG", cfg, err)
	}
	s.SetImageLinks(true, "https://elsewhere.example/files")
	resp, err = client(s).CreateImage(t.Context(), oai.ImageRequest{Model: "dall-e-3", Prompt: prompt, ResponseFormat: oai.CreateImageResponseFormatB64JSON})
	if err != nil || len(resp.Data) != 1 || !strings.HasPrefix(resp.Data[0].URL, "https://elsewhere.example/files/picture-") || resp.Data[0].B64JSON != "" {
		t.Errorf("got %+v, %v; want a link elsewhere", resp, err)
	}

	refused := []oai.ImageRequest{
		{Prompt: prompt},
		{Model: "dall-e-3"},
		{Model: "dall-e-3", Prompt: prompt, N: 2},
		{Model: "dall-e-3", Prompt: prompt, Size: "big"},
		{Model: "dall-e-3", Prompt: prompt, Size: "0x10"},
		{Model: "dall-e-3", Prompt: prompt, Size: "9000x10"},
		{Model: "dall-e-3", Prompt: prompt, ResponseFormat: "gif"},
	}
	for _, req := range refused {
		_, err := client(s).CreateImage(t.Context(), req)
		if status(err) != http.StatusBadRequest {
			t.Errorf("%+v: got %v, want HTTP 400", req, err)
		}
	}
}

// call makes one request to the media endpoint at path and returns its
// error.
func call(t *testing.T, s *openaitest.Server, path string) error {
	c := client(s)
	switch path {
	case openaitest.TranscriptionsPath:
		resp, err := transcribe(t, s, "", "")
		if err == nil && resp.Text == "" {
			return errors.New("empty transcript")
		}
		return err
	case openaitest.SpeechPath:
		raw, err := c.CreateSpeech(t.Context(), oai.CreateSpeechRequest{Model: "tts-1", Input: "hello", Voice: "alloy", ResponseFormat: "opus"})
		if err != nil {
			return err
		}
		defer raw.Close()
		data, err := io.ReadAll(raw)
		if err == nil && !bytes.HasPrefix(data, []byte("OggS")) {
			return errors.New("not Ogg: " + string(data))
		}
		return err
	}
	resp, err := c.CreateImage(t.Context(), oai.ImageRequest{Model: "dall-e-3", Prompt: "p", Size: "4x4", ResponseFormat: "b64_json"})
	if err == nil && len(resp.Data) == 0 {
		return errors.New("no picture")
	}
	return err
}

func TestMediaFaultsAndDelays(t *testing.T) {
	t.Parallel()
	for _, path := range []string{openaitest.TranscriptionsPath, openaitest.SpeechPath, openaitest.ImagesPath} {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.ScriptMedia(path,
				openaitest.Answer{Fault: openaitest.Fault500},
				openaitest.Answer{Status: http.StatusRequestEntityTooLarge},
				openaitest.Answer{Status: http.StatusBadRequest},
				openaitest.Answer{Fault: openaitest.Fault429, RetryAfter: 3},
				openaitest.Answer{Fault: openaitest.FaultMalformed},
				openaitest.Answer{Fault: openaitest.FaultEmpty},
			)
			for _, want := range []int{500, 413, 400, 429} {
				if got := status(call(t, s, path)); got != want {
					t.Errorf("got status %d, want %d", got, want)
				}
			}
			if err := call(t, s, path); err == nil {
				t.Error("got no error from a malformed answer")
			}
			if err := call(t, s, path); err == nil {
				t.Error("got no error from an empty answer")
			}
			if err := call(t, s, path); err != nil {
				t.Errorf("got %v once the script ran out, want an answer", err)
			}

			const delay = 120 * time.Millisecond
			s.SetMediaDelay(path, delay)
			start := time.Now()
			if err := call(t, s, path); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < delay {
				t.Errorf("answered in %v, want at least the delay %v", took, delay)
			}

			s.RequireKey("sk-right")
			if got := status(call(t, s, path)); got != http.StatusUnauthorized {
				t.Errorf("got status %d with the wrong key, want 401", got)
			}
			if n := len(s.RequestsTo(path)); n != 9 {
				t.Errorf("got %d recorded requests, want 9", n)
			}
		})
	}
}

// status returns the HTTP status of a go-openai error, 0 for none.
func status(err error) int {
	var apiErr *oai.APIError
	var reqErr *oai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode
	}
	return 0
}
