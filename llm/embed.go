package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	oai "github.com/sashabaranov/go-openai"

	"troupe/bot"
	"troupe/memory"

	"troupe/usage"
)

// EmbedConfig is what an Embedder needs: an OpenAI-compatible endpoint, a
// model and the vector length to ask for.
type EmbedConfig struct {
	BaseURL, APIKey, Model string
	// Meter counts each call (kind embed unless the context names one).
	Meter usage.Meter
	// Dimensions is sent as "dimensions" (models that can shorten their
	// vectors do); an endpoint that refuses the field is asked without it
	// from then on. 0 sends none.
	Dimensions int
	// Timeout bounds each call (0: 30 s); a turn's own deadline is shorter.
	Timeout time.Duration
}

// Embedder turns texts into vectors through an OpenAI-compatible
// /embeddings endpoint with go-openai. It is safe for concurrent use.
type Embedder struct {
	cfg  EmbedConfig
	api  *oai.Client
	cred credentials
	noDi atomic.Bool // the endpoint refused "dimensions"
}

var _ memory.Embedder = (*Embedder)(nil)

// NewEmbedder returns an embedder for cfg. It does not contact the server.
func NewEmbedder(cfg EmbedConfig) *Embedder {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	occ := oai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		occ.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	occ.HTTPClient = &http.Client{Timeout: cfg.Timeout}
	return &Embedder{cfg: cfg, api: oai.NewClientWithConfig(occ), cred: credentials{key: cfg.APIKey}}
}

// Embed returns one vector per text, in order, of the length the model
// gives. Errors are *bot.ModelError values, their text without the API key:
// the endpoint's failure, or an answer whose vectors do not match the texts.
func (e *Embedder) Embed(ctx context.Context, texts []string) (_ [][]float32, err error) {
	if len(texts) == 0 {
		return nil, nil
	}
	defer func() { meter(ctx, e.cfg.Meter, usage.Embed, 0, 0, err) }()
	req := oai.EmbeddingRequest{Input: texts, Model: oai.EmbeddingModel(e.cfg.Model)}
	if e.cfg.Dimensions > 0 && !e.noDi.Load() {
		req.Dimensions = e.cfg.Dimensions
	}
	resp, err := e.api.CreateEmbeddings(ctx, req)
	var apiErr *oai.APIError
	if err != nil && req.Dimensions > 0 && errors.As(err, &apiErr) && apiErr.HTTPStatusCode == http.StatusBadRequest &&
		strings.Contains(strings.ToLower(apiErr.Message), "dimension") {
		// A model with a fixed length: ask without the field from now on.
		e.noDi.Store(true)
		req.Dimensions = 0
		resp, err = e.api.CreateEmbeddings(ctx, req)
	}
	if err != nil {
		return nil, e.fail(ctx, err)
	}
	if len(resp.Data) != len(texts) {
		return nil, e.badAnswer(fmt.Errorf("%d vectors for %d texts", len(resp.Data), len(texts)))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
			return nil, e.badAnswer(fmt.Errorf("bad index %d", d.Index))
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// fail is the error Embed returns for a failed call: the caller's
// cancellation as is, anything else a *bot.ModelError of its kind.
func (e *Embedder) fail(ctx context.Context, err error) error {
	err = e.cred.clean(fmt.Errorf("llm: embeddings %s: %w", e.cfg.Model, err))
	if ctx.Err() == context.Canceled {
		return err
	}
	kind, status := classify(err)
	return &bot.ModelError{Kind: kind, Source: sourceEmbeddings, StatusCode: status, Err: err}
}

func (e *Embedder) badAnswer(err error) error {
	return &bot.ModelError{Kind: kindBadAnswer, Source: sourceEmbeddings, Err: fmt.Errorf("llm: embeddings %s: %w", e.cfg.Model, err)}
}
