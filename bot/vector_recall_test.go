package bot_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
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

// conceptEmbedder gives texts that mean the same thing in other words the
// same vector, as a real embedding model would (nearly): each word counts
// as its concept, and a text naming no concept gets the fake's hash vector,
// which is like nothing else.
func conceptEmbedder(input string, dim int) []float32 {
	concepts := map[string]string{"compass": "direction", "needle": "direction", "navigator's": "direction",
		"buried": "hiding", "hide": "hiding", "hid": "hiding"}
	out := make([]float32, dim)
	found := false
	for _, w := range strings.Fields(strings.ToLower(strings.Trim(input, ".?!"))) {
		c, ok := concepts[strings.Trim(w, ".,?!")]
		if !ok {
			continue
		}
		found = true
		for i, f := range openaitest.Embedding(c, dim) {
			out[i] += f
		}
	}
	if !found {
		return openaitest.Embedding(input, dim)
	}
	return out
}

// vectorRig is a record rig whose memory writes vectors through the fake's
// /embeddings (the real go-openai client), synchronously after each
// recorder run, and whose pipeline recalls by them.
func vectorRig(t *testing.T, b testenv.Backend) (*recordRig, *memory.Vectors) {
	t.Helper()
	r := newRecordRig(t, b, 1)
	r.fake.SetEmbedder(conceptEmbedder)
	rc := config.Default().Recall
	// These tests ask the same question turn after turn to compare
	// sources; a kept block would show the last turn's answer instead.
	rc.KeptChars = 0
	rc.Diagnostics = true
	rc.Embeddings = config.Embeddings{BaseURL: r.fake.URL(), Model: "embed-m", Dimensions: 256}
	emb := llm.NewEmbedder(llm.EmbedConfig{BaseURL: r.fake.URL(), Model: "embed-m", Dimensions: 256})
	vec := memory.NewVectors(emb, r.st, "embed-m", 8<<20)
	// As the queue would, the job runs beside the turn, not in it.
	var jobs sync.WaitGroup
	t.Cleanup(jobs.Wait)
	r.mem.UseVectors(vec, func(_ context.Context, chatID string) error {
		jobs.Add(1)
		go func() {
			defer jobs.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			_, _ = r.mem.Embed(ctx, chatID)
		}()
		return nil
	})
	r.opt.Recall, r.opt.RecallVectors = rc, vec
	r.p = bot.New(r.opt)
	return r, vec
}

// waitVectors waits until the embedding jobs wrote at least n vectors.
func waitVectors(t *testing.T, r *recordRig, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int64
		r.st.DB().Model(&models.RecallVector{}).Where("model = ?", "embed-m").Count(&got)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d vectors written by the embedding job, want one per perception (%d+)", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lastReport is the inspector's record of the chat's last recall.
func lastReport(t *testing.T, r *recordRig, ch string) memory.RecallReport {
	t.Helper()
	ds, err := r.st.RecallDiagnostics(context.Background(), r.chat(t, ch).ID, "", 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("diagnostics: %d (%v)", len(ds), err)
	}
	rep, err := memory.ParseRecallReport(ds[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// waitReport waits for the record of the recall of the turn whose block
// mentions want (diagnostics are written off the turn's path).
func waitReport(t *testing.T, r *recordRig, ch string, done func(memory.RecallReport) bool) memory.RecallReport {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, err := r.st.RecallDiagnostics(context.Background(), r.chat(t, ch).ID, "", 1)
		if err == nil && len(ds) == 1 {
			if rep, err := memory.ParseRecallReport(ds[0].Data); err == nil && done(rep) {
				return rep
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recall record as expected: %+v", lastReport(t, r, ch))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A fact that shares no word and no name with the question comes back by
// vector similarity, found as "vector"; with embeddings off it does not
// (the positive control is the same question with them on). A stalled
// /embeddings leaves the vector source out inside recall.timeout (after
// three quarters of it), and the turn goes on with what words found.
func TestVectorRecallFindsWhatWordsCannot(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r, _ := vectorRig(t, b)
			tellThreeThenNew(t, r, "vr")
			question := "Where did I hide my navigator's needle?"
			r.say(t, "vr", 4, "Ada", question)
			block := recallBlock(t, r.fake)
			if !strings.Contains(block, "brass compass under the old oak") {
				t.Fatalf("embeddings on: the block lacks the compass:\n%s", block)
			}
			if strings.Contains(block, "Juniper") {
				t.Errorf("a memory nothing cued came along:\n%s", block)
			}
			rep := waitReport(t, r, "vr", func(rep memory.RecallReport) bool { return len(rep.Items) > 0 })
			found := false
			for _, it := range rep.Items {
				if strings.Contains(it.Text, "compass") && it.Picked && strings.Join(it.Sources, "+") == "vector" {
					found = true
				}
			}
			if !found {
				t.Errorf("the compass is not picked as found by vector alone: %+v", rep.Items)
			}

			off := r.opt
			off.RecallVectors = nil
			r.p = bot.New(off)
			r.say(t, "vr", 5, "Ada", question)
			if block := recallBlock(t, r.fake); strings.Contains(block, "compass") {
				t.Errorf("embeddings off still recalled the compass:\n%s", block)
			}

			// The endpoint stalls: past its share of recall.timeout the
			// vector source is dropped; words still find Juniper.
			stalled := r.opt
			stalled.Recall.Timeout = 4 * time.Second
			r.p = bot.New(stalled)
			r.fake.SetEmbeddingFault(-1, 0)
			start := time.Now()
			r.say(t, "vr", 6, "Ada", "Where did I hide my navigator's needle, and how is Juniper?")
			block = recallBlock(t, r.fake)
			if !strings.Contains(block, "Juniper") || strings.Contains(block, "compass") {
				t.Errorf("stalled embeddings: block should hold Juniper (words) and not the compass (vector):\n%s", block)
			}
			// The embeddings client's own timeout is 30 s: the cap, not
			// the client, ended the wait.
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("the turn took %s with a stalled endpoint and a 4 s cap", took)
			}
		})
	}
}

// offsetEmbedder is conceptEmbedder as a model whose vectors all share a
// large common part, as some real models' do: unrelated texts score about
// 0.66, the same concept about 0.98.
func offsetEmbedder(input string, dim int) []float32 {
	v := conceptEmbedder(input, dim)
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	common := openaitest.Embedding("what every text shares", dim)
	out := make([]float32, dim)
	for i := range v {
		out[i] = v[i]/float32(math.Sqrt(n)) + 1.4*common[i]
	}
	return out
}

// An embedding model that finds every pair of texts alike (cosine 0.6 and
// more) does not flood recall: its similarities are calibrated against
// what it gives this query's pairs at large before they meet the words'
// relevance, so the compass, of the same concept as the question, is
// recalled, and the unrelated memories do not pass the floor by their raw
// cosine alone.
func TestVectorRecallCalibratesAModelThatFindsAllAlike(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r, _ := vectorRig(t, b)
			r.fake.SetEmbedder(offsetEmbedder)
			tellThreeThenNew(t, r, "vo")
			r.say(t, "vo", 4, "Ada", "Where did I hide my navigator's needle?")
			block := recallBlock(t, r.fake)
			if !strings.Contains(block, "brass compass under the old oak") {
				t.Fatalf("the compass, of the question's concept, is not recalled:\n%s", block)
			}
			for _, unrelated := range []string{"Juniper", "the sea"} {
				if strings.Contains(block, unrelated) {
					t.Errorf("a memory that shares only the model's common part came along (%s):\n%s", unrelated, block)
				}
			}
			rep := waitReport(t, r, "vo", func(rep memory.RecallReport) bool { return len(rep.Items) > 0 })
			for _, it := range rep.Items {
				if !strings.Contains(it.Text, "compass") && slices.Contains(it.Sources, "vector") {
					t.Errorf("an unrelated memory is a vector candidate (relevance %.2f): %q", it.Relevance, it.Text)
				}
			}
			if len(rep.Items) == 0 || !strings.Contains(rep.Items[0].Text, "compass") {
				t.Errorf("the compass is not the first pick: %+v", rep.Items)
			}
		})
	}
}

// Rerank re-orders the candidates and so decides what is picked: with one
// item to pick, the reranker's favourite wins, whichever it is. A failing
// or stalled rerank leaves recall going without it.
func TestRerankDecidesThePickAndItsFailureIsHarmless(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r, _ := vectorRig(t, b)
			tellThreeThenNew(t, r, "rr")
			opt := r.opt
			opt.Recall.MaxItems = 1
			opt.Reranker = llm.NewReranker(llm.RerankConfig{BaseURL: r.fake.URL(), Model: "rerank-m"})
			r.p = bot.New(opt)
			question := "Tell me about the brass compass and Juniper."
			mmrPick := func(rep memory.RecallReport) string {
				for _, it := range rep.Items {
					if it.Why == "mmr" {
						return it.Text
					}
				}
				return ""
			}
			n := 4
			for _, favourite := range []string{"Juniper", "compass", "Juniper"} {
				r.fake.SetReranker(func(_, doc string) float64 {
					if strings.Contains(doc, favourite) {
						return 0.95
					}
					return 0.05
				})
				r.say(t, "rr", n, "Ada", question)
				rep := waitReport(t, r, "rr", func(rep memory.RecallReport) bool { return strings.Contains(mmrPick(rep), favourite) })
				if got := mmrPick(rep); !strings.Contains(got, favourite) {
					t.Errorf("reranker favouring %s: picked %q", favourite, got)
				}
				n++
			}
			for _, fault := range []struct {
				name    string
				latency time.Duration
				status  int
			}{{"failing", 0, 500}, {"stalled", -1, 0}} {
				r.fake.SetRerankFault(fault.latency, fault.status)
				o := opt
				o.Recall.Timeout = 4 * time.Second
				r.p = bot.New(o)
				r.say(t, "rr", n, "Ada", question)
				n++
				if block := recallBlock(t, r.fake); !strings.Contains(block, "Juniper") && !strings.Contains(block, "compass") {
					t.Errorf("%s rerank: no recall block:\n%s", fault.name, block)
				}
			}
			var reranks int
			for _, req := range r.fake.Requests() {
				if req.Path == "/v1/rerank" {
					reranks++
				}
			}
			if reranks != 5 {
				t.Errorf("%d rerank requests, want 5 (one per turn)", reranks)
			}
		})
	}
}

// tellThreeThenNew tells Maren three things in channel ch (the compass,
// the mare, the sea), waits for their vectors and starts a new chat.
func tellThreeThenNew(t *testing.T, r *recordRig, ch string) {
	t.Helper()
	r.say(t, ch, 1, "Ada", "I buried the brass compass under the old oak.")
	r.say(t, ch, 2, "Ada", "My grey mare is called Juniper.")
	r.say(t, ch, 3, "Ada", "*I look at the sea for a while.*")
	waitVectors(t, r, 3)
	r.exec(t, ch, "new")
}
