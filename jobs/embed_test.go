package jobs_test

import (
	"context"
	"testing"
	"time"

	"troupe/jobs"
	"troupe/llm"
	"troupe/llm/openaitest"
	"troupe/memory"
	"troupe/models"
)

// The embedding job, found owed by the sweeper, writes a vector for every
// perception of the chat in batches of at most 64 texts, each of the length
// the model gives (it ignores the 256 asked for here); a failing endpoint
// fails the job, keeps what was written and leaves the rest owed, and the
// retry writes it.
func TestEmbeddingJobWritesVectorsInBatches(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, b, 1)
			r.fake.SetEmbedder(func(in string, _ int) []float32 { return openaitest.Embedding(in, 48) })
			emb := llm.NewEmbedder(llm.EmbedConfig{BaseURL: r.fake.URL(), Model: "embed-m", Dimensions: 256})
			r.mem.UseVectors(memory.NewVectors(emb, r.st, "embed-m", 1<<20), func(ctx context.Context, chatID string) error {
				return r.queue.Embed(ctx, chatID)
			})
			must(t, r.st.SeedRecord(ctx, models.SeedSpec{SpaceID: "console:local:ada", Character: "Maren", ChatID: r.chatID, N: 100, Seed: 5}))
			w := jobs.NewWorker(r.redis, r.queue, r.mem, r.st, jobs.WorkerOptions{PollInterval: 100 * time.Millisecond, SweepInterval: time.Hour,
				FirstRetry: 200 * time.Millisecond, Embed: true}, nil)
			if n, err := w.Sweep(ctx); err != nil || n < 1 {
				t.Fatalf("the sweep enqueued %d jobs (%v), want the embedding", n, err)
			}
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- w.Run(wctx) }()
			defer func() {
				cancel()
				<-done
			}()
			count := func() int64 {
				var n int64
				r.st.DB().Model(&models.RecallVector{}).Where("model = ? AND dims = ?", "embed-m", 48).Count(&n)
				return n
			}
			waitFor(t, "100 vectors", func() bool { return count() == 100 })
			var calls int
			for _, req := range r.fake.Requests() {
				if req.Path == "/v1/embeddings" {
					calls++
					if len(req.Input) > 64 {
						t.Errorf("one call carried %d texts, want at most 64", len(req.Input))
					}
				}
			}
			if calls != 2 {
				t.Errorf("%d embedding calls for 100 texts, want 2", calls)
			}

			// The endpoint fails: the job fails, nothing written is lost.
			r.fake.SetEmbeddingFault(0, 500)
			must(t, r.st.SeedRecord(ctx, models.SeedSpec{SpaceID: "console:local:ada", Character: "Maren", ChatID: r.chatID, N: 10, Seed: 6}))
			must(t, r.queue.Embed(ctx, r.chatID))
			waitFor(t, "a failed embedding job", func() bool {
				rec, err := r.st.Job(ctx, memory.KindEmbed, r.chatID)
				return err == nil && rec.Outcome == models.OutcomeFailed
			})
			if got := count(); got != 100 {
				t.Errorf("%d vectors after a failure, want the 100 kept", got)
			}
			r.fake.SetEmbeddingFault(0, 0)
			waitFor(t, "the retry's 110 vectors", func() bool { return count() == 110 })
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
