package llm

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"troupe/bot"
)

// maxRetryWait caps the wait before a retry, whatever Retry-After asks.
const maxRetryWait = 60 * time.Second

// attemptFunc makes one attempt under its own context and reports whether
// any text reached the caller.
type attemptFunc func(actx context.Context, info *responseInfo) (res bot.ModelResult, delivered bool, err error)

// retry runs once, trying again after rate limits and unavailability as long
// as no text reached the caller, retries remain and ctx allows the wait.
func (c *Client) retry(ctx context.Context, op string, once attemptFunc) (bot.ModelResult, error) {
	for attempt := 0; ; attempt++ {
		info := &responseInfo{}
		actx, cancel := context.WithTimeout(context.WithValue(ctx, responseInfoKey{}, info), c.cfg.Timeout)
		res, delivered, err := once(actx, info)
		cancel()
		if err == nil {
			return res, nil
		}
		var me *bot.ModelError
		if delivered || attempt >= c.cfg.MaxRetries || !errors.As(err, &me) ||
			(me.Kind != kindRateLimited && me.Kind != kindUnavailable) {
			return res, err
		}
		wait := c.backoff(attempt, me.RetryAfter)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return res, err
		}
		c.logger.Warn("model call failed, retrying",
			slog.String("op", op),
			slog.Int("attempt", attempt+1),
			slog.String("kind", me.Kind),
			slog.Int("status", me.StatusCode),
			slog.Duration("wait", wait),
		)
		// What the server said stays out of the warning (it repeats on
		// every turn while an endpoint fails); with its credentials cut
		// out, it is kept for debugging.
		c.logger.Debug("model call failed", slog.String("op", op), slog.String("error", err.Error()))
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return res, callerContextError(ctx, op)
		case <-timer.C:
		}
	}
}

// backoff returns the wait before retry number attempt+1: what the server
// asked for, else RetryBase doubled per attempt plus up to half again of
// jitter, never more than maxRetryWait.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxRetryWait)
	}
	d := c.cfg.RetryBase << min(attempt, 16)
	if d <= 0 || d > maxRetryWait {
		return maxRetryWait
	}
	d += rand.N(d/2 + 1)
	return min(d, maxRetryWait)
}

// responseInfo holds what the transport saw of an attempt's responses that
// go-openai's errors leave out.
type responseInfo struct {
	mu         sync.Mutex
	retryAfter time.Duration
}

// responseInfoKey is the context key of an attempt's *responseInfo.
type responseInfoKey struct{}

// RetryAfter returns the wait the last response asked for, or 0.
func (i *responseInfo) RetryAfter() time.Duration {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.retryAfter
}

func (i *responseInfo) setRetryAfter(d time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.retryAfter = d
}

// recordingTransport notes the Retry-After of each response in the
// request's *responseInfo, when its context carries one.
type recordingTransport struct {
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if info, ok := req.Context().Value(responseInfoKey{}).(*responseInfo); ok {
		now := time.Now()
		if date, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			now = date // a date in Retry-After is on the server's clock
		}
		d, _ := retryAfter(resp.Header, now)
		info.setRetryAfter(d)
	}
	return resp, nil
}

// retryAfter reads how long a response asks to wait: OpenAI's
// retry-after-ms, else Retry-After in seconds or as an HTTP date relative to
// now.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, 86400)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
