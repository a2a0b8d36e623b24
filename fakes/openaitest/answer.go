package openaitest

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"troupe/text"
)

// Fault is a failure an Answer injects.
type Fault int

// The faults an Answer can inject.
const (
	// FaultNone answers normally.
	FaultNone Fault = iota
	// Fault429 answers 429 Too Many Requests with a Retry-After header of
	// Answer.RetryAfter seconds (0 when unset).
	Fault429
	// Fault500 answers 500 Internal Server Error (or Answer.Status).
	Fault500
	// FaultCut streams about half the text, then drops the connection
	// without a finish reason or [DONE]; a non-streaming answer is cut half
	// way through its body.
	FaultCut
	// FaultMalformed streams about half the text, then a chunk of broken
	// JSON, and ends; a non-streaming answer is a broken JSON body.
	FaultMalformed
	// FaultEmpty answers with zero-length text whatever Answer.Text says.
	FaultEmpty
	// FaultHang sends nothing until the client gives up or the server
	// closes.
	FaultHang
)

// String returns the fault's name.
func (f Fault) String() string {
	switch f {
	case FaultNone:
		return "none"
	case Fault429:
		return "429"
	case Fault500:
		return "500"
	case FaultCut:
		return "cut"
	case FaultMalformed:
		return "malformed"
	case FaultEmpty:
		return "empty"
	case FaultHang:
		return "hang"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// defaultChunkSize is how many runes a streamed chunk carries by default.
const defaultChunkSize = 8

// Answer is how the server replies to one chat completion request.
type Answer struct {
	// Text is the assistant's reply.
	Text string
	// Fault injects a failure; the zero value answers normally.
	Fault Fault
	// Latency is waited before anything is sent.
	Latency time.Duration
	// ChunkSize is how many runes each streamed chunk carries; 0 means 8.
	ChunkSize int
	// ChunkDelay is waited between streamed chunks, to make a console demo
	// look alive.
	ChunkDelay time.Duration
	// RetryAfter is the Retry-After header, in seconds, sent with Fault429,
	// and with any other error answer when positive.
	RetryAfter int
	// Status overrides the HTTP status of Fault429 and Fault500; with no
	// fault, a Status of 400 or more answers that status with an
	// OpenAI-shaped error body (401 for a bad key, 400, 404, 503, ...).
	Status int
	// FinishReason is reported when the answer ends; "" means "stop".
	FinishReason string
}

// DefaultResponder answers a chat completion with a short, friendly,
// deterministic reply that names the request's number and quotes the last
// user message. A request with image parts is answered with what each
// shows first: "reply 3: I see a 640x480 picture, mostly red." (each
// image's Caption, see SetCaption).
func DefaultResponder(req Request) Answer {
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	last = strings.Join(strings.Fields(last), " ")
	if len(req.Images) > 0 {
		seen := make([]string, len(req.Images))
		for i, img := range req.Images {
			seen[i] = img.Caption
		}
		answer := fmt.Sprintf("reply %d: I see %s.", req.Seq, strings.Join(seen, "; "))
		if last != "" {
			answer += fmt.Sprintf(" You said %q.", text.Clip(last, 80))
		}
		return Answer{Text: answer}
	}
	if last == "" {
		return Answer{Text: fmt.Sprintf("reply %d: Hello! I'm the openaitest model. Say something and I'll echo it back.", req.Seq)}
	}
	return Answer{Text: fmt.Sprintf("reply %d: You said %q. I'm only the openaitest model, but I'm listening.", req.Seq, text.Clip(last, 80))}
}

// CountTokens is the default token counter: one token per four runes,
// rounded up, roughly what real tokenizers give for English.
func CountTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// chunks splits text into pieces of size runes.
func chunks(text string, size int) []string {
	if size <= 0 {
		size = defaultChunkSize
	}
	var out []string
	r := []rune(text)
	for len(r) > 0 {
		n := min(size, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}
