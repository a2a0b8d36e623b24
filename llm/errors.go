package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	oai "github.com/sashabaranov/go-openai"

	"troupe/bot"
)

// The kinds of bot.ModelError this client returns.
const (
	kindTimeout     = "timeout"
	kindRateLimited = "rate_limited"
	kindUnavailable = "unavailable"
	kindBadRequest  = "bad_request"
	// kindTooLong: the endpoint refused the request as longer than the
	// model's context window (memory.FaultTooLong; the side jobs halve
	// their batch and ask again).
	kindTooLong = "context_length"
	kindAuth    = "auth"
	kindEmpty   = "empty"
	kindCut     = "cut"
	// kindBadAnswer: a side endpoint answered, but not what its protocol
	// says (a body that does not parse, vectors or scores that do not
	// match what was sent).
	kindBadAnswer = "bad_answer"
)

// The sources of a bot.ModelError: which client failed.
const (
	sourceChat       = "chat"
	sourceScribe     = "scribe"
	sourceEmbeddings = "embeddings"
	sourceRerank     = "rerank"
	// The media endpoints: speech to text, text to speech, pictures.
	sourceSTT   = "stt"
	sourceTTS   = "tts"
	sourceImage = "image"
)

// requestError turns the failure of sending a request, or of reading a whole
// non-streamed answer, into the error Stream and Complete return.
func (c *Client) requestError(ctx, actx context.Context, info *responseInfo, op string, err error) error {
	if cerr := c.contextError(ctx, actx, op, err); cerr != nil {
		return cerr
	}
	kind, status := classify(err)
	me := &bot.ModelError{Kind: kind, StatusCode: status, Err: c.wrap(op, err)}
	if kind == kindRateLimited || status >= 500 {
		me.RetryAfter = info.RetryAfter()
	}
	return me
}

// classify derives the kind of a failed call, and the HTTP status it
// answered with (0 when it did not), from the error's type: go-openai's
// APIError and RequestError, net/http's url.Error and timeouts. Never from
// the text, which is the provider's.
func classify(err error) (kind string, status int) {
	var apiErr *oai.APIError
	var reqErr *oai.RequestError
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	if tooLong(apiErr, status) {
		return kindTooLong, status
	}
	if status != 0 {
		return statusKind(status), status
	}
	switch {
	case apiErr != nil:
		// An error the server reported without an HTTP status.
		return kindUnavailable, 0
	case isTimeout(err):
		return kindTimeout, 0
	case errors.As(err, &urlErr):
		// Connection refused, reset, DNS: the request never got an answer.
		return kindUnavailable, 0
	case errors.Is(err, oai.ErrChatCompletionInvalidModel):
		return kindBadRequest, 0
	case isMalformed(err):
		return kindEmpty, 0
	}
	return kindUnavailable, 0
}

// tooLong reports whether a failed call is a refusal of a prompt longer
// than the model's window: OpenAI's (and vLLM's, OpenRouter's) code
// context_length_exceeded, or HTTP 413. It reads the error's code, never
// its message.
func tooLong(apiErr *oai.APIError, status int) bool {
	if status == http.StatusRequestEntityTooLarge {
		return true
	}
	if apiErr == nil {
		return false
	}
	code, _ := apiErr.Code.(string)
	return code == "context_length_exceeded"
}

// statusKind is the kind of a failure answered with an HTTP status.
func statusKind(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return kindRateLimited
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return kindAuth
	case status >= 500:
		return kindUnavailable
	case status >= 400:
		return kindBadRequest
	}
	return kindBadAnswer
}

// isTimeout reports whether err is a deadline: the context's or a
// network timeout (an http.Client's Timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// streamError turns a failure while reading a stream into the error Stream
// returns; delivered says whether text already reached the caller.
func (c *Client) streamError(ctx, actx context.Context, err error, delivered bool) error {
	if cerr := c.contextError(ctx, actx, "stream", err); cerr != nil {
		return cerr
	}
	var apiErr *oai.APIError
	switch {
	case delivered:
		return &bot.ModelError{Kind: kindCut, Err: c.wrap("stream broke after text", err)}
	case errors.As(err, &apiErr):
		return &bot.ModelError{Kind: kindUnavailable, StatusCode: apiErr.HTTPStatusCode, Err: c.wrap("stream", err)}
	}
	return &bot.ModelError{Kind: kindEmpty, Err: c.wrap("stream broke before any text", err)}
}

// contextError returns the error for a call whose context ended, or nil:
// the caller's cancellation as is, a deadline as a timeout.
func (c *Client) contextError(ctx, actx context.Context, op string, err error) error {
	switch {
	case ctx.Err() != nil:
		return callerContextError(ctx, op)
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		return &bot.ModelError{Kind: kindTimeout, Err: fmt.Errorf("openai: %s: no answer within %s: %w", op, c.cfg.Timeout, context.DeadlineExceeded)}
	}
	return nil
}

// callerContextError is the error for a call whose caller's context ended.
func callerContextError(ctx context.Context, op string) error {
	err := fmt.Errorf("openai: %s: %w", op, ctx.Err())
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &bot.ModelError{Kind: kindTimeout, Err: err}
	}
	return err
}

// isMalformed reports whether err comes from decoding a broken body.
func isMalformed(err error) bool {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &syntaxErr) || errors.As(err, &typeErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// wrap prefixes err with op and cuts the API key, and anything shaped like
// a credential, out of it: servers echo keys back in error messages and
// bodies.
func (c *Client) wrap(op string, err error) error {
	return c.cred.clean(fmt.Errorf("openai: %s: %w", op, err))
}

// sourced marks a *bot.ModelError in err's chain that names no source as
// source's, and returns err.
func sourced(err error, source string) error {
	var me *bot.ModelError
	if errors.As(err, &me) && me.Source == "" {
		me.Source = source
	}
	return err
}
