package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/llm"
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
			defer embedWorker(t, r, emb, "embed-m", 100, 5)()
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
			// The first job may still be running, its last read made: the
			// enqueue then queues a follow-up behind it, which embeds the
			// new perceptions.
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

// recall.embeddings pointing at a model whose length is fixed (OpenAI's
// text-embedding-ada-002 refuses "dimensions" with a 400) still gets its
// vectors written by the job: the first call is refused and asked again
// without the field, every later call goes without it, and the vectors
// have the model's own length, not the 256 configured.
func TestEmbeddingJobWritesVectorsForAFixedLengthModel(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, b, 1)
			r.fake.SetFixedLength("ada-fixed", 40)
			ec := config.Default().Recall.Embeddings
			ec.BaseURL, ec.Model = r.fake.URL(), "ada-fixed"
			if ec.Dimensions <= 0 {
				t.Fatalf("recall.embeddings.dimensions defaults to %d; the test needs it asked", ec.Dimensions)
			}
			emb := llm.NewEmbedder(llm.EmbedConfig{BaseURL: ec.BaseURL, APIKey: ec.APIKey.Value(), Model: ec.Model, Dimensions: ec.Dimensions})
			defer embedWorker(t, r, emb, ec.Model, 70, 7)()
			count := func(dims int) int64 {
				var n int64
				r.st.DB().Model(&models.RecallVector{}).Where("model = ? AND dims = ?", "ada-fixed", dims).Count(&n)
				return n
			}
			waitFor(t, "70 vectors of 40", func() bool { return count(40) == 70 })
			asked := func() []int {
				var out []int
				for _, req := range r.fake.Requests() {
					if req.Path == "/v1/embeddings" {
						out = append(out, req.Dimensions)
					}
				}
				return out
			}
			// Two batches (64 + 6): the first asked with the field and again
			// without, the second without.
			if got := fmt.Sprint(asked()); got != fmt.Sprintf("[%d 0 0]", ec.Dimensions) {
				t.Errorf("dimensions asked per call %s, want [%d 0 0]", got, ec.Dimensions)
			}
			if n := count(ec.Dimensions); n != 0 {
				t.Errorf("%d vectors of the %d asked for", n, ec.Dimensions)
			}
			waitFor(t, "the job's success", func() bool {
				rec, err := r.st.Job(ctx, memory.KindEmbed, r.chatID)
				return err == nil && rec.Outcome == string(memory.Written)
			})

			// More perceptions later: one call, never asking again.
			must(t, r.st.SeedRecord(ctx, models.SeedSpec{SpaceID: "console:local:ada", Character: "Maren", ChatID: r.chatID, N: 5, Seed: 8}))
			must(t, r.queue.Embed(ctx, r.chatID))
			waitFor(t, "75 vectors of 40", func() bool { return count(40) == 75 })
			if got := fmt.Sprint(asked()); got != fmt.Sprintf("[%d 0 0 0]", ec.Dimensions) {
				t.Errorf("dimensions asked per call %s, want [%d 0 0 0]", got, ec.Dimensions)
			}
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

// embedWorker gives r's memory service vectors of model through emb, seeds
// Maren with n perceptions in r's chat, has a sweep enqueue their
// embedding and runs a worker; the returned func stops it.
func embedWorker(t *testing.T, r *rig, emb *llm.Embedder, model string, n int, seed uint64) (stop func()) {
	t.Helper()
	ctx := context.Background()
	r.mem.UseVectors(memory.NewVectors(emb, r.st, model, 1<<20), func(ctx context.Context, chatID string) error {
		return r.queue.Embed(ctx, chatID)
	})
	must(t, r.st.SeedRecord(ctx, models.SeedSpec{SpaceID: "console:local:ada", Character: "Maren", ChatID: r.chatID, N: n, Seed: seed}))
	w := jobs.NewWorker(r.redis, r.queue, r.mem, r.st, jobs.WorkerOptions{PollInterval: 100 * time.Millisecond, SweepInterval: time.Hour,
		FirstRetry: 200 * time.Millisecond, Embed: true}, nil)
	if got, err := w.Sweep(ctx); err != nil || got < 1 {
		t.Fatalf("the sweep enqueued %d jobs (%v), want the embedding", got, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	return func() {
		cancel()
		<-done
	}
}
