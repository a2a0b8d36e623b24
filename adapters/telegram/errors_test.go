package telegram

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

func TestAPIErrorClassifies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                        string
		err                         error
		notModified, entities, gone bool
		flood                       bool
		retry                       time.Duration
	}{
		{name: "429", err: &tgbotapi.Error{Code: 429, Message: "Too Many Requests: retry after 3", ResponseParameters: tgbotapi.ResponseParameters{RetryAfter: 3}}, flood: true, retry: 3 * time.Second},
		{name: "429 without retry_after", err: &tgbotapi.Error{Code: 429, Message: "Too Many Requests"}, flood: true, retry: time.Second},
		{name: "not modified", err: &tgbotapi.Error{Code: 400, Message: "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"}, notModified: true},
		{name: "entities", err: &tgbotapi.Error{Code: 400, Message: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"}, entities: true},
		{name: "gone", err: &tgbotapi.Error{Code: 400, Message: "Bad Request: message to edit not found"}, gone: true},
		{name: "other", err: &tgbotapi.Error{Code: 403, Message: "Forbidden: bot was blocked by the user"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := apiError("sendMessage", "tok", tt.err)
			if got := isNotModified(err); got != tt.notModified {
				t.Errorf("not modified: got %v", got)
			}
			if got := isBadEntities(err); got != tt.entities {
				t.Errorf("bad entities: got %v", got)
			}
			if got := isMessageGone(err); got != tt.gone {
				t.Errorf("gone: got %v", got)
			}
			d, flood := retryAfter(err)
			if flood != tt.flood || d != tt.retry {
				t.Errorf("retry after: got %v %v, want %v %v", d, flood, tt.retry, tt.flood)
			}
		})
	}
}

func TestAPIErrorRedactsToken(t *testing.T) {
	t.Parallel()
	token := "123456:SECRET-token"
	raw := &url.Error{Op: "Post", URL: "https://api.telegram.org/bot" + token + "/getUpdates", Err: context.Canceled}
	err := apiError("getUpdates", token, raw)
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("token in error: %v", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error chain lost: %v", err)
	}
}
