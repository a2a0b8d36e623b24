package config

import (
	"errors"
	"testing"
)

// Each bad recall side setting is refused naming its key; the defaults and
// a complete endpoint pass.
func TestRecallSideSettingsAreValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		edit func(*Recall)
	}{
		{"recall.embeddings.base_url", func(r *Recall) { r.Embeddings.BaseURL, r.Embeddings.Model = "ftp://x", "m" }},
		{"recall.embeddings.model", func(r *Recall) { r.Embeddings.BaseURL = "http://127.0.0.1:1/v1" }},
		{"recall.embeddings.dimensions", func(r *Recall) { r.Embeddings.Dimensions = 0 }},
		{"recall.vector_cache_mb", func(r *Recall) { r.VectorCacheMB = 0 }},
		{"recall.vector_cache_mb", func(r *Recall) { r.VectorCacheMB = 70000 }},
		{"recall.rerank.base_url", func(r *Recall) { r.Rerank.BaseURL, r.Rerank.Model = "not a url", "m" }},
		{"recall.rerank.model", func(r *Recall) { r.Rerank.BaseURL = "https://api.jina.ai/v1" }},
	}
	for _, tt := range tests {
		c := Default()
		tt.edit(&c.Recall)
		var e *Error
		if err := c.Validate(); !errors.As(err, &e) || e.Key != tt.key || e.Problem == "" {
			t.Errorf("%s: got %v, want an error naming the key with a reason", tt.key, err)
		}
	}
	c := Default()
	c.Recall.Embeddings = Embeddings{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Dimensions: 256}
	c.Recall.Rerank = Rerank{BaseURL: "https://api.jina.ai/v1", Model: "jina-reranker-v2-base-multilingual"}
	if err := c.Validate(); err != nil {
		t.Errorf("complete endpoints refused: %v", err)
	}
}
