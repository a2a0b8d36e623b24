package bot

import (
	"context"
	"time"

	"troupe/memory"
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
type PromptMessage = memory.Message

// ModelRequest is what the pipeline asks a model for.
type ModelRequest struct {
	Messages []PromptMessage
	// MaxTokens caps the reply; 0 leaves the client's default.
	MaxTokens int
	// JSON asks for a JSON object (response_format json_object), for
	// endpoints that support it.
	JSON bool
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

// ModelError describes a failed model call in terms a user can act on.
type ModelError struct {
	// Kind is one of "timeout", "rate_limited", "unavailable", "bad_request",
	// "auth", "empty", "cut".
	Kind       string
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

func (e *ModelError) Unwrap() error { return e.Err }
