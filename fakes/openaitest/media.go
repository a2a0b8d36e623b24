package openaitest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// The paths of the media endpoints, for ScriptMedia, SetMediaDelay and
// RequestsTo.
const (
	TranscriptionsPath = "/v1/audio/transcriptions"
	SpeechPath         = "/v1/audio/speech"
	ImagesPath         = "/v1/images/generations"
	// pictureFilesPath serves the pictures an image answer links to.
	pictureFilesPath = "/v1/images/files/"
)

// mediaState is what the media endpoints are set to answer.
type mediaState struct {
	// queue holds each endpoint's scripted answers (ScriptMedia).
	queue map[string][]Answer
	// delay is each endpoint's fixed delay (SetMediaDelay).
	delay map[string]time.Duration
	// transcriber hears an uploaded recording (SetTranscriber).
	transcriber func([]byte) string
	// links answers pictures as URLs (SetImageLinks); linkBase is where
	// they point, "" for the fake itself.
	links    bool
	linkBase string
	// pictures are the pictures linked to, by file name.
	pictures   map[string][]byte
	pictureSeq int
}

func newMediaState() mediaState {
	return mediaState{
		queue:       make(map[string][]Answer),
		delay:       make(map[string]time.Duration),
		transcriber: Transcript,
		pictures:    make(map[string][]byte),
	}
}

// ScriptMedia queues answers for the next requests to the media endpoint
// at path (TranscriptionsPath, SpeechPath, ImagesPath), consumed in order;
// once they run out the endpoint answers normally. Of an Answer these
// endpoints use Latency; Fault (Fault429, Fault500 and Status answer an
// error, 400 and 413 included; FaultHang hangs; FaultEmpty answers no text,
// no audio or no picture; FaultMalformed answers a body that is not the
// protocol's; FaultCut breaks the body off half way); RetryAfter; and, for
// transcriptions, Text as the transcript.
func (s *Server) ScriptMedia(path string, answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media.queue[path] = append(s.media.queue[path], answers...)
}

// SetMediaDelay makes the media endpoint at path wait d before every
// answer (before a scripted answer's own Latency), as a slow endpoint
// does; 0 removes the delay.
func (s *Server) SetMediaDelay(path string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media.delay[path] = d
}

// RequestsTo returns a copy of the recorded requests to path (such as
// TranscriptionsPath), oldest first.
func (s *Server) RequestsTo(path string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// mediaAnswer waits out the endpoint's delay and takes its next scripted
// answer, whose latency it waits and whose error fault it writes; it
// reports whether the handler should go on answering.
func (s *Server) mediaAnswer(w http.ResponseWriter, r *http.Request, path string) (Answer, bool) {
	s.mu.Lock()
	delay := s.media.delay[path]
	var a Answer
	if q := s.media.queue[path]; len(q) > 0 {
		a = q[0]
		s.media.queue[path] = q[1:]
	}
	s.mu.Unlock()
	if !s.wait(r.Context(), delay) || !s.wait(r.Context(), a.Latency) {
		return a, false
	}
	return a, !s.writeFault(w, r, a)
}

// writeMedia writes a media endpoint's answer body, or, as a's fault says,
// broken (a body that is not the protocol's, of brokenType) or half of body
// before the connection drops.
func writeMedia(w http.ResponseWriter, a Answer, contentType string, body []byte, brokenType string, broken []byte) {
	switch a.Fault {
	case FaultMalformed:
		contentType, body = brokenType, broken
	case FaultCut:
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// served reports whether the server serves model, answering 404
// model_not_found when it does not (SetModels); the gate checks JSON
// bodies, this is for multipart forms.
func (s *Server) served(w http.ResponseWriter, model string) bool {
	s.mu.Lock()
	models := s.access.models
	s.mu.Unlock()
	if len(models) == 0 || slices.Contains(models, model) {
		return true
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
		"type":    "invalid_request_error", "param": nil, "code": "model_not_found"}})
	return false
}
