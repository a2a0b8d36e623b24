package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"troupe/bot"
	"troupe/memory"
	"troupe/text"

	"troupe/usage"
)

// RerankConfig is a Jina/Cohere-style /rerank endpoint: BaseURL is the API
// root the path /rerank is appended to (https://api.jina.ai/v1).
type RerankConfig struct {
	BaseURL, APIKey, Model string
	// Meter counts each call (kind rerank unless the context names one).
	Meter usage.Meter
	// Timeout bounds each call (0: 30 s); a turn's own deadline is shorter.
	Timeout time.Duration
}

// Reranker scores documents against a query with POST {model, query,
// documents, top_n} → {results: [{index, relevance_score}]}. It is safe for
// concurrent use.
type Reranker struct {
	cfg  RerankConfig
	http *http.Client
	cred credentials
}

var _ memory.Reranker = (*Reranker)(nil)

// NewReranker returns a reranker for cfg. It does not contact the server.
func NewReranker(cfg RerankConfig) *Reranker {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Reranker{cfg: cfg, http: &http.Client{Timeout: cfg.Timeout}, cred: credentials{key: cfg.APIKey}}
}

type rerankRequest struct {
	Model     string   `json:"model"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

type rerankResponse struct {
	Results []struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
	} `json:"results"`
}

// Rerank returns one score per document, in the documents' order; a
// document the endpoint left out scores 0. Errors are *bot.ModelError
// values, their text without the API key: the transport's, a status other
// than 200 (with the start of its body), or an answer that does not parse
// or names a document that was not sent. A cancelled ctx returns its error.
func (r *Reranker) Rerank(ctx context.Context, query string, docs []string) (_ []float64, err error) {
	defer func() { meter(ctx, r.cfg.Meter, usage.Rerank, 0, 0, err) }()
	body, err := json.Marshal(rerankRequest{Model: r.cfg.Model, Query: query, Documents: docs, TopN: len(docs)})
	if err != nil {
		return nil, fmt.Errorf("llm: rerank: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.BaseURL+"/rerank", bytes.NewReader(body))
	if err != nil {
		return nil, r.cred.clean(fmt.Errorf("llm: rerank: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	if r.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.cfg.APIKey)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, r.fail(ctx, 0, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, r.fail(ctx, 0, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, r.fail(ctx, resp.StatusCode, fmt.Errorf("status %d: %s", resp.StatusCode, text.Clip(string(data), 200)))
	}
	var rr rerankResponse
	if err := json.Unmarshal(data, &rr); err != nil {
		return nil, r.fail(ctx, 0, fmt.Errorf("answer: %w", err))
	}
	out := make([]float64, len(docs))
	for _, res := range rr.Results {
		if res.Index < 0 || res.Index >= len(docs) {
			return nil, r.fail(ctx, 0, fmt.Errorf("answer names document %d of %d", res.Index, len(docs)))
		}
		out[res.Index] = res.RelevanceScore
	}
	return out, nil
}

// fail is the error Rerank returns: the caller's cancellation as is,
// anything else a *bot.ModelError whose kind comes from status (0: from
// the error's type; an answer that came but is not the protocol's is a bad
// answer).
func (r *Reranker) fail(ctx context.Context, status int, err error) error {
	err = r.cred.clean(fmt.Errorf("llm: rerank: %w", err))
	if ctx.Err() == context.Canceled {
		return err
	}
	var kind string
	switch {
	case status != 0:
		kind = statusKind(status)
	case isTimeout(err):
		kind = kindTimeout
	case isTransport(err):
		kind = kindUnavailable
	default:
		kind = kindBadAnswer
	}
	return &bot.ModelError{Kind: kind, Source: sourceRerank, StatusCode: status, Err: err}
}

// isTransport reports whether err is net/http's: the request got no whole
// answer.
func isTransport(err error) bool {
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF)
}
