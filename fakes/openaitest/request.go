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

	// Model is the requested model, for chat completions, embeddings and
	// the media endpoints.
	Model string
	// Messages are the decoded chat messages; content given as an array of
	// parts is joined from its text parts.
	Messages []Message
	// Images are the image parts of the chat messages, in order.
	Images []Image
	// Stream and IncludeUsage are the stream and
	// stream_options.include_usage fields.
	Stream       bool
	IncludeUsage bool
	// MaxTokens and MaxCompletionTokens are the max_tokens and
	// max_completion_tokens fields, 0 when absent.
	MaxTokens           int
	MaxCompletionTokens int
	// ResponseFormat is a chat request's response_format.type
	// ("json_object"), or the media endpoints' response_format ("json",
	// "opus", "b64_json"); "" when absent.
	ResponseFormat string
	// Temperature is the temperature field, 0 when absent.
	Temperature float64

	// Input holds the embedding inputs.
	Input []string
	// Dimensions is the embedding request's dimensions field, 0 when
	// absent.
	Dimensions int

	// FileName and FileSize are a transcription's uploaded file: its name
	// as the form gave it and its length in bytes.
	FileName string
	FileSize int
	// Language is a transcription's language field.
	Language string
	// Prompt is the text to speak (/v1/audio/speech input) or to paint
	// (/v1/images/generations prompt).
	Prompt string
	// Voice is a speech request's voice.
	Voice string
	// Size and N are an image request's size ("" when absent) and n (0
	// when absent).
	Size string
	N    int
}

// Message is one chat message of a recorded request.
type Message struct {
	// Role is system, user, assistant or tool.
	Role string
	// Content is the message text.
	Content string
}
