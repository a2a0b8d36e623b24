package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// handleChat serves POST /v1/chat/completions.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	req := newRequest(r)
	s.mu.Lock()
	caption := s.caption
	s.mu.Unlock()
	var body chatRequestBody
	var badContent error
	err := json.NewDecoder(r.Body).Decode(&body)
	if err == nil {
		req.Model = body.Model
		req.Stream = body.Stream
		req.IncludeUsage = body.StreamOptions != nil && body.StreamOptions.IncludeUsage
		req.MaxTokens = body.MaxTokens
		req.MaxCompletionTokens = body.MaxCompletionTokens
		if body.ResponseFormat != nil {
			req.ResponseFormat = body.ResponseFormat.Type
		}
		if body.Temperature != nil {
			req.Temperature = *body.Temperature
		}
		for _, m := range body.Messages {
			text, images, err := messageContent(m.Role, m.Content, caption)
			if err != nil && badContent == nil {
				badContent = err
			}
			req.Messages = append(req.Messages, Message{Role: m.Role, Content: text})
			req.Images = append(req.Images, images...)
		}
	}
	req = s.record(req)
	if !s.authorized(w, r) {
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, -1, "We could not parse the JSON body of your request.")
		return
	}
	if badContent != nil {
		writeError(w, http.StatusBadRequest, -1, badContent.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, -1, "'messages' must contain at least one message.")
		return
	}
	if req.Model == "" {
		req.Model = DefaultModel
	}
	if s.tooLong(w, req) {
		return
	}

	a := s.next(req)
	if !s.wait(r.Context(), a.Latency) {
		return
	}
	if s.writeFault(w, r, a) {
		return
	}
	text := a.Text
	if a.Fault == FaultEmpty {
		text = ""
	}
	if req.Stream {
		s.stream(w, r, req, a, text)
		return
	}
	s.complete(w, req, a, text)
}

// newRequest starts the record of r.
func newRequest(r *http.Request) Request {
	return Request{
		Method:           r.Method,
		Path:             r.URL.Path,
		Received:         time.Now(),
		HasAuthorization: r.Header.Get("Authorization") != "",
	}
}

// writeFault answers the error and hang faults and reports whether it did.
func (s *Server) writeFault(w http.ResponseWriter, r *http.Request, a Answer) bool {
	switch {
	case a.Fault == FaultHang:
		s.wait(r.Context(), -1)
	case a.Fault == Fault429:
		writeError(w, statusOr(a.Status, http.StatusTooManyRequests), max(a.RetryAfter, 0),
			"Rate limit reached for requests. Please try again later.")
	case a.Fault == Fault500:
		writeError(w, statusOr(a.Status, http.StatusInternalServerError), retryAfterOrNone(a.RetryAfter),
			"The server had an error while processing your request.")
	case a.Status >= 400:
		writeError(w, a.Status, retryAfterOrNone(a.RetryAfter), statusMessage(a.Status))
	default:
		return false
	}
	return true
}

func statusOr(status, def int) int {
	if status >= 400 {
		return status
	}
	return def
}

func retryAfterOrNone(seconds int) int {
	if seconds > 0 {
		return seconds
	}
	return -1
}

func statusMessage(code int) string {
	switch code {
	case http.StatusUnauthorized:
		return "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
	case http.StatusForbidden:
		return "You are not allowed to use this model."
	case http.StatusNotFound:
		return "The model does not exist or you do not have access to it."
	}
	return ""
}

// usageFor computes the token usage of answering req with text.
func (s *Server) usageFor(req Request, text string) usage {
	countPrompt, countCompletion := s.counters()
	contents := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		contents[i] = m.Content
	}
	u := usage{
		PromptTokens:     countPrompt(strings.Join(contents, "\n")),
		CompletionTokens: countCompletion(text),
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func finishReason(a Answer) string {
	if a.FinishReason != "" {
		return a.FinishReason
	}
	return "stop"
}

// complete writes a non-streaming chat.completion.
func (s *Server) complete(w http.ResponseWriter, req Request, a Answer, text string) {
	resp := completion{
		ID:                fmt.Sprintf("chatcmpl-openaitest-%d", req.Seq),
		Object:            "chat.completion",
		Created:           time.Now().Unix(),
		Model:             req.Model,
		SystemFingerprint: "fp_openaitest",
		Choices: []completionChoice{{
			Message:      completionMessage{Role: "assistant", Content: text},
			FinishReason: finishReason(a),
		}},
		Usage: s.usageFor(req, text),
	}
	switch a.Fault {
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"message": {"content": tru`)
	case FaultCut:
		b, _ := json.Marshal(resp)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		_, _ = w.Write(b[:len(b)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// stream writes a streamed chat completion as server-sent events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, a Answer, text string) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	base := chunk{
		ID:                fmt.Sprintf("chatcmpl-openaitest-%d", req.Seq),
		Object:            "chat.completion.chunk",
		Created:           time.Now().Unix(),
		Model:             req.Model,
		SystemFingerprint: "fp_openaitest",
	}
	var null *usage
	if req.IncludeUsage {
		base.Usage = &null
	}
	send := func(c chunk) bool {
		b, _ := json.Marshal(c)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	withChoice := func(d chunkDelta, finish *string) chunk {
		c := base
		c.Choices = []chunkChoice{{Delta: d, FinishReason: finish}}
		return c
	}

	empty := ""
	if !send(withChoice(chunkDelta{Role: "assistant", Content: &empty}, nil)) {
		return
	}
	parts := chunks(text, a.ChunkSize)
	if a.Fault == FaultCut || a.Fault == FaultMalformed {
		parts = parts[:(len(parts)+1)/2]
	}
	for i, p := range parts {
		if i > 0 && !s.wait(r.Context(), a.ChunkDelay) {
			return
		}
		if !send(withChoice(chunkDelta{Content: &p}, nil)) {
			return
		}
	}
	switch a.Fault {
	case FaultCut:
		panic(http.ErrAbortHandler)
	case FaultMalformed:
		_, _ = io.WriteString(w, "data: {\"id\": \"chatcmpl-broken\", \"choices\": [{\"delta\": {\"content\": tru\n\n")
		_ = rc.Flush()
		return
	}
	reason := finishReason(a)
	if !send(withChoice(chunkDelta{}, &reason)) {
		return
	}
	if req.IncludeUsage {
		u := s.usageFor(req, text)
		last := base
		up := &u
		last.Usage = &up
		last.Choices = []chunkChoice{}
		if !send(last) {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}
