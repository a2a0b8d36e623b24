package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	oai "github.com/sashabaranov/go-openai"

	"troupe/bot"
)

// The kinds of bot.ModelError this client returns.
const (
	kindTimeout     = "timeout"
	kindRateLimited = "rate_limited"
	kindUnavailable = "unavailable"
	kindBadRequest  = "bad_request"
	kindAuth        = "auth"
	kindEmpty       = "empty"
	kindCut         = "cut"
)

// requestError turns the failure of sending a request, or of reading a whole
// non-streamed answer, into the error Stream and Complete return.
func (c *Client) requestError(ctx, actx context.Context, info *responseInfo, op string, err error) error {
	if cerr := c.contextError(ctx, actx, op, err); cerr != nil {
		return cerr
	}
	me := &bot.ModelError{Err: c.wrap(op, err)}
	var apiErr *oai.APIError
	var reqErr *oai.RequestError
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		me.StatusCode = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		me.StatusCode = reqErr.HTTPStatusCode
	}
	switch s := me.StatusCode; {
	case s == http.StatusTooManyRequests:
		me.Kind, me.RetryAfter = kindRateLimited, info.RetryAfter()
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		me.Kind = kindAuth
	case s >= 500:
		me.Kind, me.RetryAfter = kindUnavailable, info.RetryAfter()
	case s >= 400:
		me.Kind = kindBadRequest
	case apiErr != nil:
		// An error the server reported without an HTTP status.
		me.Kind = kindUnavailable
	case errors.As(err, &urlErr):
		// Connection refused, reset, DNS: the request never got an answer.
		me.Kind = kindUnavailable
	case errors.Is(err, oai.ErrChatCompletionInvalidModel):
		me.Kind = kindBadRequest
	case isMalformed(err):
		me.Kind = kindEmpty
	default:
		me.Kind = kindUnavailable
	}
	return me
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

// wrap prefixes err with op and makes sure the API key appears nowhere in
// it: servers echo keys back in error messages and bodies.
func (c *Client) wrap(op string, err error) error {
	key := c.cfg.APIKey
	if key == "" {
		return fmt.Errorf("openai: %s: %w", op, err)
	}
	var apiErr *oai.APIError
	if errors.As(err, &apiErr) {
		apiErr.Message = strings.ReplaceAll(apiErr.Message, key, redacted)
	}
	var reqErr *oai.RequestError
	if errors.As(err, &reqErr) {
		reqErr.Body = []byte(strings.ReplaceAll(string(reqErr.Body), key, redacted))
	}
	wrapped := fmt.Errorf("openai: %s: %w", op, err)
	if msg := wrapped.Error(); strings.Contains(msg, key) {
		return &redactedError{msg: strings.ReplaceAll(msg, key, redacted), err: wrapped}
	}
	return wrapped
}

const redacted = "[redacted]"

// redactedError is an error whose message had the API key cut out.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
