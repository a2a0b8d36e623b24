package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// TroupeDefaultModel is the model.name of a troupe configuration left at its
// defaults; the server lists it next to DefaultModel, so that a troupe
// started against the fake with defaults finds its model.
const TroupeDefaultModel = "gpt-4o-mini"

// access is what the server lets through before any handler: the key it
// wants, the models it serves, whether it has a model list.
type access struct {
	// key, when set, is the only bearer token accepted; any other request
	// is answered 401.
	key string
	// models, when set, are the only models listed and served: a chat or
	// embeddings request naming another is answered 404 model_not_found.
	models []string
	// noList answers GET /v1/models 404, as servers without a list do.
	noList bool
	// window, when positive, refuses a chat request whose prompt and
	// asked-for answer exceed it (400 context_length_exceeded);
	// reportWindow lists it with each model, as vLLM (max_model_len) and
	// OpenRouter (context_length) do.
	window       int
	reportWindow bool
}

// SetContextWindow makes the server refuse, as OpenAI does (HTTP 400,
// code context_length_exceeded), every chat request whose prompt tokens
// (the prompt token counter's) plus its max_tokens exceed tokens; report
// lists the window with each model in GET /v1/models, under the names
// vLLM and OpenRouter use. tokens <= 0 refuses nothing again.
func (s *Server) SetContextWindow(tokens int, report bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access.window = max(tokens, 0)
	s.access.reportWindow = report && tokens > 0
}

// tooLong writes the refusal of a prompt over the context window and
// reports whether it did.
func (s *Server) tooLong(w http.ResponseWriter, req Request) bool {
	s.mu.Lock()
	window := s.access.window
	count := s.promptTokens
	s.mu.Unlock()
	if window <= 0 {
		return false
	}
	contents := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		contents[i] = m.Content
	}
	prompt := count(strings.Join(contents, "\n"))
	asked := max(req.MaxTokens, req.MaxCompletionTokens)
	if prompt+asked <= window {
		return false
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			window, prompt+asked, prompt, asked),
		"type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
	return true
}

// RequireKey makes the server refuse (401 invalid_api_key) every request
// whose Authorization is not "Bearer key"; "" accepts any again. The 401
// quotes the key the request sent, whole, as some servers do: a test
// that the key goes nowhere from there.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access.key = key
}

// SetModels makes ids the only models the server lists and serves; none
// restores the default (DefaultModel and TroupeDefaultModel listed, any
// model served).
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access.models = slices.Clone(ids)
}

// HideModelList makes GET /v1/models answer 404, as some servers do.
func (s *Server) HideModelList(hide bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access.noList = hide
}

// gate applies the access settings in front of next.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		a := s.access
		s.mu.Unlock()
		// The model list is not recorded: it is refused here. The other
		// endpoints record the request first (authorized), so a test sees
		// what was sent with the wrong key.
		if r.URL.Path == "/v1/models" && !s.authorized(w, r) {
			return
		}
		if r.Method == http.MethodPost && len(a.models) > 0 && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				writeError(w, http.StatusBadRequest, -1, "unreadable body")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Model string `json:"model"`
			}
			if json.Unmarshal(body, &m) == nil && m.Model != "" && !slices.Contains(a.models, m.Model) {
				writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
					"message": "The model `" + m.Model + "` does not exist or you do not have access to it.",
					"type":    "invalid_request_error", "param": nil, "code": "model_not_found"}})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authorized answers a request whose bearer key is not the one RequireKey
// set with a 401 that quotes the key sent, and reports whether the handler
// should go on.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	want := s.access.key
	s.mu.Unlock()
	got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if want == "" || got == want {
		return true
	}
	writeError(w, http.StatusUnauthorized, -1, "Incorrect API key provided: "+got+".")
	return false
}

// handleModels serves GET /v1/models. It is not recorded: every client
// asks for it when it starts, and tests count the requests that do work.
func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	a := s.access
	s.mu.Unlock()
	if a.noList {
		writeError(w, http.StatusNotFound, -1, "Invalid URL (GET /v1/models)")
		return
	}
	ids := a.models
	if len(ids) == 0 {
		ids = []string{DefaultModel, TroupeDefaultModel}
	}
	data := make([]modelEntry, 0, len(ids))
	for _, id := range ids {
		e := modelEntry{ID: id, Object: "model", OwnedBy: "openaitest",
			Created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()}
		if a.reportWindow {
			e.MaxModelLen, e.ContextLength = a.window, a.window
		}
		data = append(data, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
