package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/llm"
	"troupe/llm/openaitest"
)

// The embedder asks for its dimensions and takes what comes back, in input
// order, over the real go-openai client; a model that ignores the length
// asked for is taken at its own.
func TestEmbedderTakesTheModelsLength(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	e := llm.NewEmbedder(llm.EmbedConfig{BaseURL: fake.URL(), Model: "embed-m", Dimensions: 96})
	got, err := e.Embed(context.Background(), []string{"one", "two"})
	if err != nil || len(got) != 2 || len(got[0]) != 96 {
		t.Fatalf("got %d vectors (%v), want 2 of 96", len(got), err)
	}
	if want := openaitest.Embedding("two", 96); got[1][0] != want[0] {
		t.Errorf("vectors out of order")
	}
	fake.SetEmbedder(func(in string, _ int) []float32 { return openaitest.Embedding(in, 40) })
	if got, err := e.Embed(context.Background(), []string{"one"}); err != nil || len(got[0]) != 40 {
		t.Errorf("a fixed-length model: %v (%v), want 40 long", len(got), err)
	}
	fake.SetEmbeddingFault(0, 503)
	if _, err := e.Embed(context.Background(), []string{"one"}); err == nil {
		t.Error("a 503 gave no error")
	}
}

// The reranker sends the Jina/Cohere request and maps the results back to
// the documents' order; a failure or a stall past the caller's deadline is
// an error.
func TestRerankerScoresInDocumentOrder(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	r := llm.NewReranker(llm.RerankConfig{BaseURL: fake.URL(), Model: "rerank-m", APIKey: "k"})
	scores, err := r.Rerank(context.Background(), "brass compass oak", []string{"the sea is grey", "a brass compass under the oak", "an oak"})
	if err != nil || len(scores) != 3 {
		t.Fatalf("scores %v (%v)", scores, err)
	}
	if !(scores[1] > scores[2] && scores[2] > scores[0]) || scores[1] != 1 {
		t.Errorf("scores %v, want the compass first, the oak second, the sea last", scores)
	}
	last, _ := fake.Last()
	if last.Path != "/v1/rerank" || !last.HasAuthorization || last.Model != "rerank-m" || last.Input[0] != "brass compass oak" {
		t.Errorf("request %+v", last)
	}
	fake.SetRerankFault(0, 500)
	if _, err := r.Rerank(context.Background(), "q", []string{"d"}); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("a 500: %v", err)
	}
	fake.SetRerankFault(-1, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.Rerank(ctx, "q", []string{"d"}); err == nil {
		t.Error("a stalled rerank returned no error")
	}
}
