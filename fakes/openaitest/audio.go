package openaitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxAudioUpload is the largest file /v1/audio/transcriptions takes, as
// OpenAI's.
const maxAudioUpload = 25 << 20

// maxSpeechInput is the longest text /v1/audio/speech speaks, in runes.
const maxSpeechInput = 4096

// spokenMarker starts what Transcript hears in a recording.
const spokenMarker = "spoken:"

// Transcript is what the fake hears in a recording by default: the text
// after "spoken:" in its bytes, trimmed, or "" when there is none. Tests
// build voice notes as []byte("OggS\x00\x02 spoken: I light the lamp.").
func Transcript(audio []byte) string {
	_, after, ok := bytes.Cut(audio, []byte(spokenMarker))
	if !ok {
		return ""
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(after), ""))
}

// SetTranscriber sets what /v1/audio/transcriptions hears in an uploaded
// recording; nil restores Transcript. A scripted Answer's Text overrides
// it for one request.
func (s *Server) SetTranscriber(f func(audio []byte) string) {
	if f == nil {
		f = Transcript
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media.transcriber = f
}

// SpeechBytes is what /v1/audio/speech answers for input in format: an
// Ogg header then the input for opus, an ID3 header then the input for mp3,
// so that a test reads what was spoken.
func SpeechBytes(format, input string) []byte {
	if format == "opus" {
		return []byte("OggS\x00\x02" + input)
	}
	return []byte("ID3" + input)
}

// handleTranscriptions serves POST /v1/audio/transcriptions: a multipart
// form with file and model (language, response_format optional), answered
// {"text": ...} (response_format json or verbose_json) or as plain text.
func (s *Server) handleTranscriptions(w http.ResponseWriter, r *http.Request) {
	req := newRequest(r)
	r.Body = http.MaxBytesReader(w, r.Body, maxAudioUpload+1<<20)
	var audio []byte
	hasFile := false
	err := r.ParseMultipartForm(8 << 20)
	if err == nil {
		req.Model = r.FormValue("model")
		req.Language = r.FormValue("language")
		req.ResponseFormat = r.FormValue("response_format")
		if f, fh, ferr := r.FormFile("file"); ferr == nil {
			audio, err = io.ReadAll(f)
			f.Close()
			req.FileName, req.FileSize, hasFile = fh.Filename, len(audio), true
		}
	}
	req = s.record(req)
	if !s.authorized(w, r) {
		return
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || len(audio) > maxAudioUpload:
		writeError(w, http.StatusRequestEntityTooLarge, -1, "Maximum content size limit (26214400) exceeded.")
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, -1, "Could not parse multipart form: "+err.Error())
		return
	case !hasFile:
		writeError(w, http.StatusBadRequest, -1, "Missing required parameter: 'file'.")
		return
	case len(audio) == 0:
		writeError(w, http.StatusBadRequest, -1, "Audio file is empty.")
		return
	case req.Model == "":
		writeError(w, http.StatusBadRequest, -1, "Missing required parameter: 'model'.")
		return
	}
	switch req.ResponseFormat {
	case "", "json", "verbose_json", "text":
	default:
		writeError(w, http.StatusBadRequest, -1, "The fake answers response_format json, verbose_json or text, not '"+req.ResponseFormat+"'.")
		return
	}
	if !s.served(w, req.Model) {
		return
	}
	a, ok := s.mediaAnswer(w, r, TranscriptionsPath)
	if !ok {
		return
	}
	s.mu.Lock()
	hear := s.media.transcriber
	s.mu.Unlock()
	text := a.Text
	if text == "" {
		text = hear(audio)
	}
	if a.Fault == FaultEmpty {
		text = ""
	}
	if req.ResponseFormat == "text" {
		writeMedia(w, a, "text/plain; charset=utf-8", []byte(text+"\n"), "application/json", []byte(`{"text": tru`))
		return
	}
	out := map[string]any{"text": text}
	if req.ResponseFormat == "verbose_json" {
		out["task"], out["language"], out["duration"] = "transcribe", req.Language, 1.0
	}
	body, _ := json.Marshal(out)
	writeMedia(w, a, "application/json", body, "application/json", []byte(`{"text": tru`))
}

// speechRequestBody is a /v1/audio/speech request.
type speechRequestBody struct {
	Model          string  `json:"model"`
	Input          string  `json:"input"`
	Voice          string  `json:"voice"`
	ResponseFormat string  `json:"response_format"`
	Speed          float64 `json:"speed"`
}

// handleSpeech serves POST /v1/audio/speech: JSON {model, input, voice,
// response_format (opus or mp3, default mp3 as OpenAI's)}, answered with
// SpeechBytes.
func (s *Server) handleSpeech(w http.ResponseWriter, r *http.Request) {
	req := newRequest(r)
	var body speechRequestBody
	err := json.NewDecoder(r.Body).Decode(&body)
	req.Model, req.Prompt, req.Voice, req.ResponseFormat = body.Model, body.Input, body.Voice, body.ResponseFormat
	req = s.record(req)
	if !s.authorized(w, r) {
		return
	}
	format := body.ResponseFormat
	if format == "" {
		format = "mp3"
	}
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, -1, "We could not parse the JSON body of your request.")
		return
	case body.Model == "":
		writeError(w, http.StatusBadRequest, -1, "Missing required parameter: 'model'.")
		return
	case strings.TrimSpace(body.Input) == "":
		writeError(w, http.StatusBadRequest, -1, "Missing required parameter: 'input'.")
		return
	case utf8.RuneCountInString(body.Input) > maxSpeechInput:
		writeError(w, http.StatusBadRequest, -1, "'input' is too long: at most 4096 characters.")
		return
	case body.Voice == "":
		writeError(w, http.StatusBadRequest, -1, "Missing required parameter: 'voice'.")
		return
	case format != "opus" && format != "mp3":
		writeError(w, http.StatusBadRequest, -1, "The fake speaks response_format opus or mp3, not '"+format+"'.")
		return
	}
	a, ok := s.mediaAnswer(w, r, SpeechPath)
	if !ok {
		return
	}
	contentType := "audio/mpeg"
	if format == "opus" {
		contentType = "audio/ogg"
	}
	audio := SpeechBytes(format, body.Input)
	if a.Fault == FaultEmpty {
		audio = nil
	}
	// A broken answer: an error page served as 200, as proxies do.
	writeMedia(w, a, contentType, audio, "text/html", []byte("<html>Bad Gateway</html>"))
}
