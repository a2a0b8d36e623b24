package openaitest

import "time"

// Request is what the server recorded about one request.
type Request struct {
	// Seq numbers requests of every kind from 1 in arrival order.
	Seq int
	// Method and Path are the HTTP method and URL path, such as POST and
	// /v1/chat/completions.
	Method string
	Path   string
	// Received is when the request arrived.
	Received time.Time
	// HasAuthorization reports whether an Authorization header was sent;
	// its value is never kept.
	HasAuthorization bool

	// Model is the requested model, for chat completions and embeddings.
	Model string
	// Messages are the decoded chat messages; content given as an array of
	// parts is joined from its text parts.
	Messages []Message
	// Stream and IncludeUsage are the stream and
	// stream_options.include_usage fields.
	Stream       bool
	IncludeUsage bool
	// MaxTokens and MaxCompletionTokens are the max_tokens and
	// max_completion_tokens fields, 0 when absent.
	MaxTokens           int
	MaxCompletionTokens int
	// ResponseFormat is response_format.type ("json_object"), "" when absent.
	ResponseFormat string
	// Temperature is the temperature field, 0 when absent.
	Temperature float64

	// Input holds the embedding inputs.
	Input []string
	// Dimensions is the embedding request's dimensions field, 0 when
	// absent.
	Dimensions int
}

// Message is one chat message of a recorded request.
type Message struct {
	// Role is system, user, assistant or tool.
	Role string
	// Content is the message text.
	Content string
}
