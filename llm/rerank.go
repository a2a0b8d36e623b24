package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"troupe/memory"
)

// RerankConfig is a Jina/Cohere-style /rerank endpoint: BaseURL is the API
// root the path /rerank is appended to (https://api.jina.ai/v1).
type RerankConfig struct {
	BaseURL, APIKey, Model string
	// Timeout bounds each call (0: 30 s); a turn's own deadline is shorter.
	Timeout time.Duration
}

// Reranker scores documents against a query with POST {model, query,
// documents, top_n} → {results: [{index, relevance_score}]}. It is safe for
// concurrent use.
type Reranker struct {
	cfg  RerankConfig
	http *http.Client
}

var _ memory.Reranker = (*Reranker)(nil)

// NewReranker returns a reranker for cfg. It does not contact the server.
func NewReranker(cfg RerankConfig) *Reranker {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Reranker{cfg: cfg, http: &http.Client{Timeout: cfg.Timeout}}
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
// document the endpoint left out scores 0. Errors: the transport's, a
// status other than 200 (with the start of its body), or an answer that
// does not parse or names a document that was not sent.
func (r *Reranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	body, err := json.Marshal(rerankRequest{Model: r.cfg.Model, Query: query, Documents: docs, TopN: len(docs)})
	if err != nil {
		return nil, fmt.Errorf("llm: rerank: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.BaseURL+"/rerank", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: rerank: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.cfg.APIKey)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("llm: rerank: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("llm: rerank: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("llm: rerank: status %d: %s", resp.StatusCode, clip(string(data), 200))
	}
	var rr rerankResponse
	if err := json.Unmarshal(data, &rr); err != nil {
		return nil, fmt.Errorf("llm: rerank: answer: %w", err)
	}
	out := make([]float64, len(docs))
	for _, res := range rr.Results {
		if res.Index < 0 || res.Index >= len(docs) {
			return nil, fmt.Errorf("llm: rerank: answer names document %d of %d", res.Index, len(docs))
		}
		out[res.Index] = res.RelevanceScore
	}
	return out, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
