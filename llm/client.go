//lint:file-ignore SA1019 local OpenAI-compatible servers (Ollama, llama.cpp, vLLM) only understand max_tokens; reasoning models are switched to max_completion_tokens below.

// Package llm is the model client for any OpenAI-compatible chat
// completions API (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp), built on
// go-openai. It streams replies, reports token usage, retries what is safe
// to retry and turns failures into *bot.ModelError values.
package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	oai "github.com/sashabaranov/go-openai"

	"troupe/bot"
	"troupe/usage"
)

// The defaults Config fields fall back to when left zero.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 2
	DefaultRetryBase  = 500 * time.Millisecond
	// DefaultSpeechFormat is the speech format asked for: Ogg Opus, which
	// Discord and Telegram play as a voice note.
	DefaultSpeechFormat = "opus"
	DefaultImageSize    = "1024x1024"
)

// Config is what the client needs to reach one model.
type Config struct {
	// BaseURL is the API root including /v1, such as
	// http://localhost:11434/v1; empty means https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization
	// header, which local servers accept.
	APIKey string
	// Model is the model id sent with every request.
	Model string
	// Temperature is sent when non-zero; reasoning models that refuse it
	// get none.
	Temperature float32
	// MaxTokens caps a reply when the request does not; 0 means no cap.
	MaxTokens int
	// Timeout bounds each attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a rate-limited or failed call is tried
	// again; 0 means DefaultMaxRetries and a negative value none.
	MaxRetries int
	// RetryBase is the first backoff wait, doubled for each retry; 0 means
	// DefaultRetryBase.
	RetryBase time.Duration
	// Meter counts each finished call under the kind its context names
	// (usage.WithKind; a turn's reply when it names none); nil counts
	// nothing.
	Meter usage.Meter

	// Language is the spoken language (ISO-639-1, "en") sent with every
	// transcription; "" lets the endpoint detect it.
	Language string
	// SpeechFormat is the response_format asked of the speech endpoint:
	// "opus" (a voice note) or "mp3"; "" means DefaultSpeechFormat.
	SpeechFormat string
	// ImageSize is the size asked of the image endpoint, WxH; ""
	// means DefaultImageSize.
	ImageSize string
}

// String returns the config with the API key masked, so that printing it
// cannot leak the key.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("{BaseURL:%s APIKey:%s Model:%s Temperature:%g MaxTokens:%d Timeout:%s MaxRetries:%d RetryBase:%s}",
		c.BaseURL, key, c.Model, c.Temperature, c.MaxTokens, c.Timeout, c.MaxRetries, c.RetryBase)
}

// LogValue logs the config without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.String("model", c.Model),
		slog.Duration("timeout", c.Timeout),
		slog.Int("max_retries", c.MaxRetries),
	)
}

// withDefaults fills the zero fields of c.
func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.RetryBase <= 0 {
		c.RetryBase = DefaultRetryBase
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}

// Client talks to one model of an OpenAI-compatible API. It is safe for
// concurrent use.
type Client struct {
	cfg    Config
	api    *oai.Client
	cred   credentials
	logger *slog.Logger
	// http is the client's own transport, for the model list.
	http *http.Client
}

var (
	_ bot.Model       = (*Client)(nil)
	_ bot.Transcriber = (*Client)(nil)
	_ bot.Voicer      = (*Client)(nil)
	_ bot.Painter     = (*Client)(nil)
)

// New returns a client for cfg. It does not contact the server.
func New(cfg Config, logger *slog.Logger) *Client {
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	occ := oai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		occ.BaseURL = cfg.BaseURL
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	// Many chats talk to one API host at once: reuse their connections
	// (each new one is a TLS handshake).
	base.MaxIdleConnsPerHost = 128
	hc := &http.Client{Transport: &recordingTransport{base: base}}
	occ.HTTPClient = hc
	return &Client{
		http:   hc,
		cfg:    cfg,
		api:    oai.NewClientWithConfig(occ),
		cred:   credentials{key: cfg.APIKey},
		logger: logger.With("component", "openai", "model", cfg.Model),
	}
}

// Stream asks for a streamed chat completion and passes each new piece of
// text to onDelta in order. Failures come back as *bot.ModelError, along with
// whatever text and usage arrived; an error from onDelta stops the stream and
// is returned as is, and a cancelled ctx returns its error. Calls are retried
// only while no text has reached onDelta. req.Images go as image parts of
// the last user message; a request with images but no user message, or an
// image that is not a data URL, is a bad_request.
func (c *Client) Stream(ctx context.Context, req bot.ModelRequest, onDelta func(string) error) (bot.ModelResult, error) {
	start := time.Now()
	var inCallback time.Duration
	timed := func(s string) error {
		t := time.Now()
		err := onDelta(s)
		inCallback += time.Since(t)
		return err
	}
	res, err := c.retry(ctx, "stream", func(actx context.Context, info *responseInfo) (bot.ModelResult, bool, error) {
		return c.streamOnce(ctx, actx, info, req, timed)
	})
	res.ModelTime = time.Since(start) - inCallback
	c.logDone(ctx, "stream", res, err)
	return res, sourced(err, sourceChat)
}

// Complete asks for a whole chat completion at once. Its errors are those of
// Stream.
func (c *Client) Complete(ctx context.Context, req bot.ModelRequest) (bot.ModelResult, error) {
	start := time.Now()
	res, err := c.retry(ctx, "complete", func(actx context.Context, info *responseInfo) (bot.ModelResult, bool, error) {
		return c.completeOnce(ctx, actx, info, req)
	})
	res.ModelTime = time.Since(start)
	c.logDone(ctx, "complete", res, err)
	return res, sourced(err, sourceChat)
}

func (c *Client) logDone(ctx context.Context, op string, res bot.ModelResult, err error) {
	meter(ctx, c.cfg.Meter, usage.Chat, res.PromptTokens, res.CompletionTokens, err)
	if err != nil {
		return // the caller logs what it makes of the error
	}
	c.logger.Debug("model call done",
		slog.String("op", op),
		slog.Int("prompt_tokens", res.PromptTokens),
		slog.Int("completion_tokens", res.CompletionTokens),
		slog.String("finish_reason", res.FinishReason),
		slog.Duration("model_time", res.ModelTime),
	)
}

// chatRequest builds the API request for req, adjusted to what the model
// accepts.
func (c *Client) chatRequest(req bot.ModelRequest, stream bool) (oai.ChatCompletionRequest, error) {
	out := oai.ChatCompletionRequest{
		Model:       c.cfg.Model,
		Messages:    make([]oai.ChatCompletionMessage, len(req.Messages)),
		MaxTokens:   c.cfg.MaxTokens,
		Temperature: c.cfg.Temperature,
		Stream:      stream,
	}
	if req.MaxTokens > 0 {
		out.MaxTokens = req.MaxTokens
	}
	if req.JSON {
		out.ResponseFormat = &oai.ChatCompletionResponseFormat{Type: oai.ChatCompletionResponseFormatTypeJSONObject}
	}
	if stream {
		out.StreamOptions = &oai.StreamOptions{IncludeUsage: true}
	}
	for i, m := range req.Messages {
		out.Messages[i] = oai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content}
	}
	if err := withImages(out.Messages, req.Images); err != nil {
		return out, err
	}
	// Reasoning models refuse max_tokens and sampling settings; most local
	// servers only know max_tokens, so it stays the default.
	for range 3 {
		err := oai.NewReasoningValidator().Validate(out)
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, oai.ErrReasoningModelMaxTokensDeprecated):
			out.MaxCompletionTokens, out.MaxTokens = out.MaxTokens, 0
		case errors.Is(err, oai.ErrReasoningModelLimitationsOther), errors.Is(err, oai.ErrReasoningSamplingUnsupported):
			out.Temperature = 0
		default:
			return out, err
		}
	}
	return out, oai.NewReasoningValidator().Validate(out)
}

// streamOnce makes one streaming attempt under actx, the attempt's context;
// ctx is the caller's. It reports whether any text reached onDelta.
func (c *Client) streamOnce(ctx, actx context.Context, info *responseInfo, req bot.ModelRequest, onDelta func(string) error) (bot.ModelResult, bool, error) {
	var res bot.ModelResult
	creq, err := c.chatRequest(req, true)
	if err != nil {
		return res, false, &bot.ModelError{Kind: "bad_request", Err: fmt.Errorf("openai: stream: %w", err)}
	}
	stream, err := c.api.CreateChatCompletionStream(actx, creq)
	if err != nil {
		return res, false, c.requestError(ctx, actx, info, "stream", err)
	}
	defer stream.Close()

	var text strings.Builder
	delivered := false
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res.Text = text.String()
			return res, delivered, c.streamError(ctx, actx, err, delivered)
		}
		if chunk.Usage != nil {
			res.PromptTokens = chunk.Usage.PromptTokens
			res.CompletionTokens = chunk.Usage.CompletionTokens
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.FinishReason != "" {
				res.FinishReason = string(ch.FinishReason)
			}
			if ch.Delta.Content == "" {
				continue
			}
			text.WriteString(ch.Delta.Content)
			delivered = true
			if err := onDelta(ch.Delta.Content); err != nil {
				res.Text = text.String()
				return res, true, err
			}
		}
	}
	res.Text = text.String()
	switch {
	case res.Text == "":
		return res, false, &bot.ModelError{Kind: "empty", Err: fmt.Errorf("openai: stream: no text (finish reason %q)", res.FinishReason)}
	case res.FinishReason == "":
		return res, true, &bot.ModelError{Kind: "cut", Err: errors.New("openai: stream: ended without a finish reason")}
	}
	return res, true, nil
}

// completeOnce makes one non-streaming attempt; see streamOnce.
func (c *Client) completeOnce(ctx, actx context.Context, info *responseInfo, req bot.ModelRequest) (bot.ModelResult, bool, error) {
	var res bot.ModelResult
	creq, err := c.chatRequest(req, false)
	if err != nil {
		return res, false, &bot.ModelError{Kind: "bad_request", Err: fmt.Errorf("openai: complete: %w", err)}
	}
	resp, err := c.api.CreateChatCompletion(actx, creq)
	if err != nil {
		return res, false, c.requestError(ctx, actx, info, "complete", err)
	}
	res.PromptTokens = resp.Usage.PromptTokens
	res.CompletionTokens = resp.Usage.CompletionTokens
	if len(resp.Choices) > 0 {
		res.Text = resp.Choices[0].Message.Content
		res.FinishReason = string(resp.Choices[0].FinishReason)
	}
	if res.Text == "" {
		return res, false, &bot.ModelError{Kind: "empty", Err: fmt.Errorf("openai: complete: no text (finish reason %q)", res.FinishReason)}
	}
	return res, false, nil
}
