package bot_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// An embeddings and a rerank endpoint that refuse the key they are sent
// and quote it whole in their 401: over turns that record, recall (by
// vector, then reranked), embed and fail, and the owner's /memory, the
// key is in no row of any table, no log line (debug included) and no
// message; the embedding job's record keeps the failure's kind.
func TestSideEndpointKeyInNoRowLogOrMessage(t *testing.T) {
	const sideKey = "sk-troupe-SECRET-side-key-123"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			logs := &testenv.Buffer{}
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			r := newRecordRig(t, b, 1)
			side := openaitest.NewServer(t)
			side.RequireKey("sk-the-key-it-wants")

			client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, log)
			r.mem = memory.NewService(r.st, llm.Scribe{C: client, JSON: true}, memory.ConfigFrom(config.Default().Memory, "en"), log)
			emb := llm.NewEmbedder(llm.EmbedConfig{BaseURL: side.URL(), APIKey: sideKey, Model: "embed-m", Dimensions: 64})
			vec := memory.NewVectors(emb, r.st, "embed-m", 1<<20)
			r.mem.UseVectors(vec, func(ctx context.Context, chatID string) error {
				_, _ = r.mem.Embed(ctx, chatID) // at once, as a test wants it
				return nil
			})
			rc := config.Default().Recall
			rc.Diagnostics = true
			rc.Embeddings = config.Embeddings{BaseURL: side.URL(), APIKey: sideKey, Model: "embed-m", Dimensions: 64}
			rc.Rerank = config.Rerank{BaseURL: side.URL(), APIKey: sideKey, Model: "rerank-m"}
			r.opt.Memory, r.opt.Jobs, r.opt.Logger = r.mem, recordJobs{mem: r.mem, runs: &r.runs}, log
			r.opt.Recall, r.opt.RecallVectors = rc, vec
			r.opt.Reranker = llm.NewReranker(llm.RerankConfig{BaseURL: side.URL(), APIKey: sideKey, Model: "rerank-m"})
			r.p = bot.New(r.opt)

			r.say(t, "keys", 1, "Ada", "I buried the brass compass under the old oak.")
			r.say(t, "keys", 2, "Ada", "My grey mare is called Juniper, and the compass was my father's.")
			r.say(t, "keys", 3, "Ada", "Where is the brass compass, and how is Juniper?")
			shown := r.exec(t, "keys", "memory")

			var sawEmbed, sawRerank bool
			for _, req := range side.Requests() {
				sawEmbed = sawEmbed || req.Path == "/v1/embeddings"
				sawRerank = sawRerank || req.Path == "/v1/rerank"
			}
			if !sawEmbed || !sawRerank {
				t.Fatalf("the side endpoints were not called (embeddings %v, rerank %v): the test shows nothing", sawEmbed, sawRerank)
			}
			rec, err := r.st.Job(ctx, memory.KindEmbed, r.chat(t, "keys").ID)
			if err != nil || rec.Outcome != models.OutcomeFailed {
				t.Fatalf("embedding job record %+v (%v), want a failure", rec, err)
			}
			if want := "auth: embeddings, HTTP 401"; rec.Reason != want {
				t.Errorf("the job record's reason is %q, want %q", rec.Reason, want)
			}
			if where := rowsHolding(t, r.st, sideKey); len(where) > 0 {
				t.Errorf("the key is stored in %v", where)
			}
			if strings.Contains(logs.String(), sideKey) {
				t.Errorf("the key is in the log:\n%s", logs)
			}
			if !strings.Contains(logs.String(), "err_kind=auth") {
				t.Errorf("no warning names the failure's kind:\n%s", logs)
			}
			if strings.Contains(shown, sideKey) {
				t.Errorf("/memory shows the key:\n%s", shown)
			}
		})
	}
}
