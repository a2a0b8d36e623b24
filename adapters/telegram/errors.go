package telegram

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/media"
)

// Sentinel errors of the adapter.
var (
	// ErrRunning: Run was called while the adapter runs.
	ErrRunning = errors.New("telegram: adapter already running")
	// ErrUnauthorized: Telegram refused the bot token (or the endpoint has
	// no such bot).
	ErrUnauthorized = errors.New("telegram: bot token refused")
	// ErrFileTooLarge: a file to send is over Telegram's 50 MB upload
	// limit. It is also media.ErrTooLarge.
	ErrFileTooLarge = fmt.Errorf("telegram: file over the 50 MB upload limit: %w", media.ErrTooLarge)
)

// APIError is an error answer of the Bot API.
type APIError struct {
	Method      string
	Code        int
	Description string
	// RetryAfter is how long flood control asks to wait; 0 when not given.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("telegram: %s: %d %s", e.Method, e.Code, e.Description)
}

// NotModified reports Telegram's answer to an edit that changes nothing,
// which counts as success.
func (e *APIError) NotModified() bool {
	return e.Code == 400 && strings.Contains(e.Description, "message is not modified")
}

// BadEntities reports a refusal of the text's formatting.
func (e *APIError) BadEntities() bool {
	return e.Code == 400 && (strings.Contains(e.Description, "can't parse entities") || strings.Contains(e.Description, "can't parse message text"))
}

// MessageGone reports that the message to edit no longer exists or can no
// longer be edited.
func (e *APIError) MessageGone() bool {
	d := e.Description
	return e.Code == 400 && (strings.Contains(d, "message to edit not found") || strings.Contains(d, "message can't be edited") || strings.Contains(d, "message to delete not found") || strings.Contains(d, "message can't be deleted"))
}

// apiError converts an error of the library into an *APIError when it is
// an answer of the API, and removes the token from anything else (the
// library puts the token in the request URL, which net/http errors quote).
func apiError(method, token string, err error) error {
	var te *tgbotapi.Error
	if errors.As(err, &te) {
		return &APIError{Method: method, Code: te.Code, Description: te.Message, RetryAfter: time.Duration(te.RetryAfter) * time.Second}
	}
	return fmt.Errorf("telegram: %s: %w", method, redact(err, token))
}

// redact removes token from err's text, keeping the error chain where it
// can (so context.Canceled still matches).
func redact(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		cp := *ue
		cp.URL = strings.ReplaceAll(ue.URL, token, "[redacted]")
		if cp.Err != nil && strings.Contains(cp.Err.Error(), token) {
			cp.Err = errors.New(strings.ReplaceAll(cp.Err.Error(), token, "[redacted]"))
		}
		return &cp
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "[redacted]"))
}

// asAPI returns err as an *APIError.
func asAPI(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}

func isNotModified(err error) bool {
	e, ok := asAPI(err)
	return ok && e.NotModified()
}

func isBadEntities(err error) bool {
	e, ok := asAPI(err)
	return ok && e.BadEntities()
}

func isMessageGone(err error) bool {
	e, ok := asAPI(err)
	return ok && e.MessageGone()
}

// retryAfter returns the wait flood control asked for.
func retryAfter(err error) (time.Duration, bool) {
	e, ok := asAPI(err)
	if !ok || e.Code != 429 {
		return 0, false
	}
	if e.RetryAfter <= 0 {
		return time.Second, true
	}
	return e.RetryAfter, true
}

// forbidden reports Telegram's refusal to write to a chat: a user who never
// started a private chat with the bot, or blocked it.
func forbidden(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == 403
}
