package openaitest

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// The JSON shapes below follow the OpenAI API reference.

type chatRequestBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	ResponseFormat      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type chunkDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	Logprobs     any        `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

// chunk is a chat.completion.chunk. Usage is a pointer to a pointer so that
// it can be left out (no include_usage), null, or set.
type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             **usage       `json:"usage,omitempty"`
}

type completionMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Refusal any    `json:"refusal"`
}

type completionChoice struct {
	Index        int               `json:"index"`
	Message      completionMessage `json:"message"`
	Logprobs     any               `json:"logprobs"`
	FinishReason string            `json:"finish_reason"`
}

// completion is a chat.completion.
type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             usage              `json:"usage"`
}

type embeddingRequestBody struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     int             `json:"dimensions"`
}

type embeddingData struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

type embeddingList struct {
	Object string          `json:"object"`
	Data   []embeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// MaxModelLen (vLLM) and ContextLength (OpenRouter) carry the
	// window when the server reports one (SetContextWindow).
	MaxModelLen   int `json:"max_model_len,omitempty"`
	ContextLength int `json:"context_length,omitempty"`
}

type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    any     `json:"code"`
}

// writeJSON writes v as a JSON response with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes an OpenAI-shaped error response, with a Retry-After
// header when retryAfter is non-negative.
func writeError(w http.ResponseWriter, code, retryAfter int, message string) {
	if retryAfter >= 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	typ, errCode := "invalid_request_error", any(nil)
	switch {
	case code == http.StatusTooManyRequests:
		typ, errCode = "requests", "rate_limit_exceeded"
	case code == http.StatusUnauthorized:
		errCode = "invalid_api_key"
	case code >= 500:
		typ = "server_error"
	}
	if message == "" {
		message = http.StatusText(code)
	}
	writeJSON(w, code, map[string]apiError{"error": {Message: message, Type: typ, Code: errCode}})
}
