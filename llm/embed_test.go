package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/llm"
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

// embedCalls returns the /v1/embeddings requests the fake received.
func embedCalls(fake *openaitest.Server) []openaitest.Request {
	var out []openaitest.Request
	for _, r := range fake.Requests() {
		if r.Path == "/v1/embeddings" {
			out = append(out, r)
		}
	}
	return out
}

// A model with a fixed length (OpenAI's text-embedding-ada-002) refuses
// "dimensions" with a 400: the embedder asks again once without it, takes
// the model's length, and never sends the field again. An endpoint that
// takes the field is asked once with it, and a 400 for another reason is an
// error, not retried.
func TestEmbedderDropsDimensionsAModelRefuses(t *testing.T) {
	t.Parallel()
	t.Run("supported", func(t *testing.T) {
		t.Parallel()
		fake := openaitest.NewServer(t)
		e := llm.NewEmbedder(llm.EmbedConfig{BaseURL: fake.URL(), Model: "small", Dimensions: 32})
		for range 2 {
			if got, err := e.Embed(context.Background(), []string{"one"}); err != nil || len(got[0]) != 32 {
				t.Fatalf("got %v (%v), want one vector of 32", got, err)
			}
		}
		calls := embedCalls(fake)
		if len(calls) != 2 || calls[0].Dimensions != 32 || calls[1].Dimensions != 32 {
			t.Errorf("calls %+v, want one per Embed, each asking 32", calls)
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		fake := openaitest.NewServer(t)
		fake.SetFixedLength("ada", 40)
		e := llm.NewEmbedder(llm.EmbedConfig{BaseURL: fake.URL(), Model: "ada", Dimensions: 256})
		got, err := e.Embed(context.Background(), []string{"one", "two"})
		if err != nil || len(got) != 2 || len(got[0]) != 40 || len(got[1]) != 40 {
			t.Fatalf("got %d vectors (%v), want 2 of the model's 40", len(got), err)
		}
		if want := openaitest.Embedding("two", 40); got[1][0] != want[0] {
			t.Errorf("vectors out of order after the retry")
		}
		calls := embedCalls(fake)
		if len(calls) != 2 || calls[0].Dimensions != 256 || calls[1].Dimensions != 0 || len(calls[1].Input) != 2 {
			t.Fatalf("calls %+v, want two: asking 256, then the same texts without dimensions", calls)
		}
		if got, err := e.Embed(context.Background(), []string{"three"}); err != nil || len(got[0]) != 40 {
			t.Fatalf("second Embed: %v (%v)", got, err)
		}
		calls = embedCalls(fake)
		if len(calls) != 3 || calls[2].Dimensions != 0 {
			t.Errorf("calls %+v, want a third, single one without dimensions", calls)
		}
	})
	t.Run("other 400", func(t *testing.T) {
		t.Parallel()
		fake := openaitest.NewServer(t)
		fake.SetEmbeddingFault(0, 400)
		e := llm.NewEmbedder(llm.EmbedConfig{BaseURL: fake.URL(), Model: "small", Dimensions: 32})
		_, err := e.Embed(context.Background(), []string{"one"})
		if err == nil || !strings.Contains(err.Error(), "400") {
			t.Fatalf("a 400 without 'dimension' gave %v, want it as the error", err)
		}
		calls := embedCalls(fake)
		if len(calls) != 1 || calls[0].Dimensions != 32 {
			t.Fatalf("calls %+v, want the one asking 32, not retried", calls)
		}
		// The refusal was not taken for a dimensions refusal: once the
		// endpoint recovers, the field is still sent.
		fake.SetEmbeddingFault(0, 0)
		if got, err := e.Embed(context.Background(), []string{"one"}); err != nil || len(got[0]) != 32 {
			t.Fatalf("after recovery: %v (%v), want 32 long", got, err)
		}
		if calls := embedCalls(fake); len(calls) != 2 || calls[1].Dimensions != 32 {
			t.Errorf("calls %+v, want the second asking 32", calls)
		}
	})
}
