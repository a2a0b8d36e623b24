package bot

import (
	"cmp"
	"context"
	"strconv"
	"time"

	"troupe/memory"
	"troupe/prompt"
)

// Role is who wrote a message in a model request.
type Role = string

// The roles a model request carries.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PromptMessage is one message of a model request: the same type memory
// builds prompts of, so that a prompt passes from memory to the model as is.
type PromptMessage = prompt.Message

// ModelRequest is what the pipeline asks a model for.
type ModelRequest struct {
	Messages []PromptMessage
	// MaxTokens caps the reply; 0 leaves the client's default.
	MaxTokens int
	// JSON asks for a JSON object (response_format json_object), for
	// endpoints that support it.
	JSON bool
	// Images are pictures sent as image parts with the request's last user
	// message, each a data URL (data:image/jpeg;base64,…). Only the turn
	// that carries a picture sends its pixels; later prompts carry its
	// caption in the message text.
	Images []string
}

// ModelResult is a finished model answer with the usage the API reported.
type ModelResult struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
	FinishReason     string
	// ModelTime is the wall time spent waiting for the API.
	ModelTime time.Duration
}

// Model streams a chat completion. onDelta receives each new piece of text in
// order; an error from onDelta aborts the stream and is returned.
type Model interface {
	Stream(ctx context.Context, req ModelRequest, onDelta func(string) error) (ModelResult, error)
}

// ModelError describes a failed call to a model endpoint (the chat model,
// the scribe, embeddings, rerank) in terms a user can act on. Its Err has
// the endpoint's credentials cut out but may hold what the provider said:
// what is stored or shown goes through FaultKind and Detail.
type ModelError struct {
	// Kind is one of "timeout", "rate_limited", "unavailable", "bad_request",
	// "context_length", "auth", "empty", "cut", "bad_answer".
	Kind string
	// Source names the client that failed: "chat", "scribe",
	// "embeddings", "rerank"; "" when not set.
	Source     string
	StatusCode int
	RetryAfter time.Duration
	Err        error
}

func (e *ModelError) Error() string {
	if e.Err != nil {
		return "model: " + e.Kind + ": " + e.Err.Error()
	}
	return "model: " + e.Kind
}

// FaultKind is the kind of the failure (Kind).
func (e *ModelError) FaultKind() string { return e.Kind }

// Detail says which endpoint failed and with which HTTP status, never what
// the provider said: "embeddings, HTTP 401".
func (e *ModelError) Detail() string {
	d := cmp.Or(e.Source, "model")
	if e.StatusCode != 0 {
		d += ", HTTP " + strconv.Itoa(e.StatusCode)
	}
	return d
}

func (e *ModelError) Unwrap() error { return e.Err }

// warnFailure logs a failure at warning level by its fault (memory.FaultOf:
// the kind, the endpoint and status, never what a provider said, which
// repeats on every turn while an endpoint fails) and whole at debug level.
func (p *Pipeline) warnFailure(msg string, err error, attrs ...any) {
	f := memory.FaultOf(err)
	p.log.Warn(msg, append(attrs, "err_kind", f.Kind, "err", f.Detail)...)
	p.log.Debug(msg, append(attrs, "err", err)...)
}
