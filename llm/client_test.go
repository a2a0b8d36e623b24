package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"troupe/models/testenv"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/llm"
)

const testKey = "sk-secret-XYZ"

// newClient returns a client of s with fast retries, its logs checked for
// the API key when the test ends.
func newClient(t *testing.T, baseURL string, modify func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		BaseURL:     baseURL,
		APIKey:      testKey,
		Model:       "test-model",
		Temperature: 0.7,
		Timeout:     5 * time.Second,
		RetryBase:   5 * time.Millisecond,
	}
	if modify != nil {
		modify(&cfg)
	}
	logs := &testenv.Buffer{}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testKey) {
			t.Errorf("logs contain the API key:\n%s", logs)
		}
	})
	return llm.New(cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
}

func request(text string) bot.ModelRequest {
	return bot.ModelRequest{Messages: []bot.PromptMessage{
		{Role: bot.RoleSystem, Content: "You are terse."},
		{Role: bot.RoleUser, Content: text},
	}}
}

// collect returns an onDelta that appends to deltas.
func collect(deltas *[]string) func(string) error {
	return func(s string) error {
		*deltas = append(*deltas, s)
		return nil
	}
}

// modelError returns err as a *bot.ModelError or fails the test.
func modelError(t *testing.T, err error) *bot.ModelError {
	t.Helper()
	var me *bot.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("got error %v (%T), want a *bot.ModelError", err, err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error %q contains the API key", err)
	}
	t.Logf("error: %v", err)
	return me
}

func TestStream(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	const text = "The quick brown fox jumps over the lazy dog, twice: héllo wörld."
	s.Script(openaitest.Answer{Text: text, ChunkSize: 5})
	c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.MaxTokens = 300 })

	req := request("Tell me about foxes.")
	req.MaxTokens = 50
	var deltas []string
	res, err := c.Stream(t.Context(), req, collect(&deltas))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if res.Text != text {
		t.Errorf("got text %q, want %q", res.Text, text)
	}
	if got := strings.Join(deltas, ""); got != text {
		t.Errorf("got deltas joined %q, want %q", got, text)
	}
	if len(deltas) != 13 {
		t.Errorf("got %d deltas, want 13 (5 runes each)", len(deltas))
	}
	wantPrompt := openaitest.CountTokens("You are terse.\nTell me about foxes.")
	if res.PromptTokens != wantPrompt {
		t.Errorf("got prompt tokens %d, want %d", res.PromptTokens, wantPrompt)
	}
	if want := openaitest.CountTokens(text); res.CompletionTokens != want {
		t.Errorf("got completion tokens %d, want %d", res.CompletionTokens, want)
	}
	if res.FinishReason != "stop" {
		t.Errorf("got finish reason %q, want stop", res.FinishReason)
	}
	if res.ModelTime <= 0 {
		t.Errorf("got model time %v, want > 0", res.ModelTime)
	}

	got, ok := s.Last()
	if !ok {
		t.Fatal("server recorded no request")
	}
	want := openaitest.Request{
		Method: "POST", Path: "/v1/chat/completions", Model: "test-model",
		Stream: true, IncludeUsage: true, MaxTokens: 50, HasAuthorization: true,
	}
	if got.Method != want.Method || got.Path != want.Path || got.Model != want.Model ||
		got.Stream != want.Stream || got.IncludeUsage != want.IncludeUsage ||
		got.MaxTokens != want.MaxTokens || got.HasAuthorization != want.HasAuthorization {
		t.Errorf("got request %+v, want %+v", got, want)
	}
	if got.Temperature < 0.69 || got.Temperature > 0.71 {
		t.Errorf("got temperature %v, want 0.7", got.Temperature)
	}
	wantMsgs := []openaitest.Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Tell me about foxes."}}
	if fmt.Sprint(got.Messages) != fmt.Sprint(wantMsgs) {
		t.Errorf("got messages %v, want %v", got.Messages, wantMsgs)
	}
}

func TestStreamUsesCustomTokenCounter(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.SetPromptTokenCounter(func(string) int { return 1234 })
	c := newClient(t, s.URL(), nil)
	res, err := c.Stream(t.Context(), request("hi"), func(string) error { return nil })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if res.PromptTokens != 1234 {
		t.Errorf("got prompt tokens %d, want 1234", res.PromptTokens)
	}
	if !strings.HasPrefix(res.Text, "reply 1: ") {
		t.Errorf("got default text %q, want it to start with %q", res.Text, "reply 1: ")
	}
}

func TestComplete(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Text: "A card about foxes.", FinishReason: "length"})
	c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.MaxTokens = 77 })

	res, err := c.Complete(t.Context(), request("Summarise."))
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := bot.ModelResult{
		Text:             "A card about foxes.",
		PromptTokens:     openaitest.CountTokens("You are terse.\nSummarise."),
		CompletionTokens: openaitest.CountTokens("A card about foxes."),
		FinishReason:     "length",
	}
	res.ModelTime = 0
	if res != want {
		t.Errorf("got %+v, want %+v", res, want)
	}
	got, _ := s.Last()
	if got.Stream || got.IncludeUsage || got.MaxTokens != 77 {
		t.Errorf("got stream %v, include usage %v, max tokens %d; want false, false, 77",
			got.Stream, got.IncludeUsage, got.MaxTokens)
	}
}

func TestEmptyAPIKeySendsNoAuthorization(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.APIKey = "" })
	if _, err := c.Stream(t.Context(), request("hi"), func(string) error { return nil }); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, _ := s.Last(); got.HasAuthorization {
		t.Error("got an Authorization header, want none")
	}
}

func TestReasoningModelGetsMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	c := newClient(t, s.URL(), func(cfg *llm.Config) {
		cfg.Model = "o3-mini"
		cfg.MaxTokens = 500
	})
	if _, err := c.Complete(t.Context(), request("hi")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	got, _ := s.Last()
	if got.MaxTokens != 0 || got.MaxCompletionTokens != 500 || got.Temperature != 0 {
		t.Errorf("got max_tokens %d, max_completion_tokens %d, temperature %v; want 0, 500, 0",
			got.MaxTokens, got.MaxCompletionTokens, got.Temperature)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(
		openaitest.Answer{Fault: openaitest.Fault429, RetryAfter: 1},
		openaitest.Answer{Text: "finally"},
	)
	c := newClient(t, s.URL(), nil)

	start := time.Now()
	var deltas []string
	res, err := c.Stream(t.Context(), request("hi"), collect(&deltas))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("got call time %v, want at least the 1s Retry-After", elapsed)
	}
	if res.Text != "finally" || strings.Join(deltas, "") != "finally" {
		t.Errorf("got text %q and deltas %q, want %q", res.Text, deltas, "finally")
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want 2 (one retry)", len(reqs))
	}
	if gap := reqs[1].Received.Sub(reqs[0].Received); gap < time.Second {
		t.Errorf("got %v between attempts, want at least 1s", gap)
	}
}

// call is Stream or Complete, for tests that hold for both.
type call struct {
	name string
	do   func(ctx context.Context, c *llm.Client, req bot.ModelRequest) (bot.ModelResult, error)
}

var calls = []call{
	{"stream", func(ctx context.Context, c *llm.Client, req bot.ModelRequest) (bot.ModelResult, error) {
		return c.Stream(ctx, req, func(string) error { return nil })
	}},
	{"complete", func(ctx context.Context, c *llm.Client, req bot.ModelRequest) (bot.ModelResult, error) {
		return c.Complete(ctx, req)
	}},
}

func TestRetries(t *testing.T) {
	t.Parallel()
	fault := func(f openaitest.Fault) openaitest.Answer { return openaitest.Answer{Fault: f} }
	status := func(code int) openaitest.Answer { return openaitest.Answer{Status: code} }
	tests := []struct {
		name       string
		script     []openaitest.Answer
		wantKind   string // "" means success
		wantStatus int
		wantCount  int
	}{
		{"500 twice then success", []openaitest.Answer{fault(openaitest.Fault500), fault(openaitest.Fault500), {Text: "ok"}}, "", 0, 3},
		{"503 then success", []openaitest.Answer{{Fault: openaitest.Fault500, Status: 503}, {Text: "ok"}}, "", 0, 2},
		{"429 exhausted", []openaitest.Answer{fault(openaitest.Fault429), fault(openaitest.Fault429), fault(openaitest.Fault429), {Text: "too late"}}, "rate_limited", 429, 3},
		{"500 exhausted", []openaitest.Answer{fault(openaitest.Fault500), fault(openaitest.Fault500), fault(openaitest.Fault500), {Text: "too late"}}, "unavailable", 500, 3},
		{"401 not retried", []openaitest.Answer{status(401), {Text: "no"}}, "auth", 401, 1},
		{"403 not retried", []openaitest.Answer{status(403), {Text: "no"}}, "auth", 403, 1},
		{"400 not retried", []openaitest.Answer{status(400), {Text: "no"}}, "bad_request", 400, 1},
		{"404 not retried", []openaitest.Answer{status(404), {Text: "no"}}, "bad_request", 404, 1},
		{"empty", []openaitest.Answer{fault(openaitest.FaultEmpty), {Text: "no"}}, "empty", 0, 1},
		{"empty text", []openaitest.Answer{{Text: "", FinishReason: "content_filter"}, {Text: "no"}}, "empty", 0, 1},
	}
	for _, tt := range tests {
		for _, cl := range calls {
			t.Run(tt.name+"/"+cl.name, func(t *testing.T) {
				t.Parallel()
				s := openaitest.NewServer(t)
				s.Script(tt.script...)
				c := newClient(t, s.URL(), nil)
				res, err := cl.do(t.Context(), c, request("hi"))
				if tt.wantKind == "" {
					if err != nil {
						t.Fatalf("got error %v, want none", err)
					}
					if res.Text != "ok" {
						t.Errorf("got text %q, want %q", res.Text, "ok")
					}
				} else {
					me := modelError(t, err)
					if me.Kind != tt.wantKind || me.StatusCode != tt.wantStatus {
						t.Errorf("got kind %q status %d, want %q %d", me.Kind, me.StatusCode, tt.wantKind, tt.wantStatus)
					}
				}
				if got := s.Count(); got != tt.wantCount {
					t.Errorf("got %d requests, want %d", got, tt.wantCount)
				}
			})
		}
	}
}

func TestRateLimitedReportsRetryAfter(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Fault: openaitest.Fault429, RetryAfter: 30})
	c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.MaxRetries = -1 })
	_, err := c.Complete(t.Context(), request("hi"))
	me := modelError(t, err)
	if me.Kind != "rate_limited" || me.RetryAfter != 30*time.Second {
		t.Errorf("got kind %q retry after %v, want rate_limited 30s", me.Kind, me.RetryAfter)
	}
}

func TestRetryAfterBeyondCallerDeadlineIsNotWaited(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Fault: openaitest.Fault429, RetryAfter: 30}, openaitest.Answer{Text: "ok"})
	c := newClient(t, s.URL(), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Complete(ctx, request("hi"))
	if me := modelError(t, err); me.Kind != "rate_limited" {
		t.Errorf("got kind %q, want rate_limited", me.Kind)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("got call time %v, want an immediate failure", elapsed)
	}
}

func TestStreamBrokenAfterText(t *testing.T) {
	t.Parallel()
	const text = "one two three four five six seven eight nine ten"
	tests := []struct {
		name  string
		fault openaitest.Fault
	}{
		{"cut", openaitest.FaultCut},
		{"malformed", openaitest.FaultMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Script(openaitest.Answer{Text: text, Fault: tt.fault}, openaitest.Answer{Text: text})
			c := newClient(t, s.URL(), nil)
			var deltas []string
			res, err := c.Stream(t.Context(), request("count"), collect(&deltas))
			if me := modelError(t, err); me.Kind != "cut" {
				t.Errorf("got kind %q, want cut", me.Kind)
			}
			got := strings.Join(deltas, "")
			if got == "" || got == text || !strings.HasPrefix(text, got) {
				t.Errorf("got deltas %q, want a proper prefix of %q", got, text)
			}
			if res.Text != got {
				t.Errorf("got partial text %q, want the deltas %q", res.Text, got)
			}
			if n := s.Count(); n != 1 {
				t.Errorf("got %d requests, want 1 (no retry after text)", n)
			}
		})
	}
}

func TestBrokenBeforeText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault openaitest.Fault
	}{
		{"cut", openaitest.FaultCut},
		{"malformed", openaitest.FaultMalformed},
	}
	for _, tt := range tests {
		for _, cl := range calls {
			t.Run(tt.name+"/"+cl.name, func(t *testing.T) {
				t.Parallel()
				s := openaitest.NewServer(t)
				s.Script(openaitest.Answer{Fault: tt.fault})
				c := newClient(t, s.URL(), nil)
				_, err := cl.do(t.Context(), c, request("hi"))
				if me := modelError(t, err); me.Kind != "empty" {
					t.Errorf("got kind %q (%v), want empty", me.Kind, err)
				}
			})
		}
	}
}

func TestMalformedCompleteWithText(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Text: "something long enough", Fault: openaitest.FaultMalformed})
	c := newClient(t, s.URL(), nil)
	_, err := c.Complete(t.Context(), request("hi"))
	if err == nil {
		t.Fatal("got no error, want one")
	}
	modelError(t, err)
}

func TestHangTimesOut(t *testing.T) {
	t.Parallel()
	for _, cl := range calls {
		t.Run(cl.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Script(openaitest.Answer{Fault: openaitest.FaultHang})
			c := newClient(t, s.URL(), func(cfg *llm.Config) { cfg.Timeout = 200 * time.Millisecond })
			start := time.Now()
			_, err := cl.do(t.Context(), c, request("hi"))
			if me := modelError(t, err); me.Kind != "timeout" {
				t.Errorf("got kind %q (%v), want timeout", me.Kind, err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("got %v, want it to wrap context.DeadlineExceeded", err)
			}
			if elapsed := time.Since(start); elapsed < 200*time.Millisecond || elapsed > 2*time.Second {
				t.Errorf("got call time %v, want about 200ms", elapsed)
			}
			if n := s.Count(); n != 1 {
				t.Errorf("got %d requests, want 1", n)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	// Port 1 on loopback: nothing listens there. A closed fake server's
	// port is not safe, since a parallel test's server can be given it.
	url := "http://127.0.0.1:1/v1"
	for _, cl := range calls {
		t.Run(cl.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, url, nil)
			_, err := cl.do(t.Context(), c, request("hi"))
			if me := modelError(t, err); me.Kind != "unavailable" {
				t.Errorf("got kind %q (%v), want unavailable", me.Kind, err)
			}
		})
	}
}

func TestOnDeltaErrorStopsStream(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Text: "a reply of several chunks", ChunkSize: 2})
	c := newClient(t, s.URL(), nil)
	stop := errors.New("platform gone")
	calls := 0
	res, err := c.Stream(t.Context(), request("hi"), func(string) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) {
		t.Errorf("got error %v, want %v", err, stop)
	}
	if calls != 1 || res.Text != "a " {
		t.Errorf("got %d onDelta calls and text %q, want 1 and %q", calls, res.Text, "a ")
	}
	if n := s.Count(); n != 1 {
		t.Errorf("got %d requests, want 1", n)
	}
}

func TestCallerCancel(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Fault: openaitest.FaultHang})
	c := newClient(t, s.URL(), nil)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Stream(ctx, request("hi"), func(string) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	var me *bot.ModelError
	if errors.As(err, &me) {
		t.Errorf("got model error kind %q, want the plain cancellation", me.Kind)
	}
}

// TestKeyEchoedByServerIsRedacted uses a server that, unlike OpenAI, puts
// the whole key in its error messages.
func TestKeyEchoedByServerIsRedacted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"api error", http.StatusUnauthorized, `{"error":{"message":"bad key %s","type":"invalid_request_error"}}`},
		{"plain body", http.StatusBadGateway, `upstream rejected %s`},
	}
	for _, tt := range tests {
		for _, cl := range calls {
			t.Run(tt.name+"/"+cl.name, func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
					w.WriteHeader(tt.status)
					fmt.Fprintf(w, tt.body, key)
				}))
				t.Cleanup(srv.Close)
				c := newClient(t, srv.URL+"/v1", nil)
				_, err := cl.do(t.Context(), c, request("hi"))
				modelError(t, err) // checks the message
				if !strings.Contains(err.Error(), "[redacted]") {
					t.Errorf("got %q, want the key replaced by [redacted]", err)
				}
			})
		}
	}
}

func TestConfigStringHidesKey(t *testing.T) {
	t.Parallel()
	cfg := llm.Config{APIKey: testKey, Model: "m"}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
		if strings.Contains(s, testKey) {
			t.Errorf("got %q, want no API key", s)
		}
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "config", cfg)
	if strings.Contains(buf.String(), testKey) {
		t.Errorf("got log %q, want no API key", buf.String())
	}
}
