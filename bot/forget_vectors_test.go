package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// /forget, asked and confirmed through the pipeline as a user would, takes
// a chat's recall vectors and index terms with its perceptions, and the
// vector cache of the process lets go of them: a new chat of the same card
// in the same space, asked the question that found the fact by vector
// alone, does not recall it, and the cache no longer holds it. The
// positive control is the same question, in another chat, before the
// forget.
func TestForgetTakesVectorsAndTermsThroughThePipeline(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, vec := vectorRig(t, b)
			const question = "Where did I hide my navigator's needle?"
			const fact = "brass compass under the old oak"

			// The fact is told in channel fa, its vectors written by the job.
			r.say(t, "fa", 1, "Ada", "I buried the brass compass under the old oak.")
			r.say(t, "fa", 2, "Ada", "My grey mare is called Juniper.")
			r.say(t, "fa", 3, "Ada", "*I look at the sea for a while.*")
			told := r.chat(t, "fa")
			var ids, compass []string
			if err := r.st.DB().Model(&models.Perception{}).Where("chat_id = ?", told.ID).Pluck("id", &ids).Error; err != nil {
				t.Fatal(err)
			}
			if err := r.st.DB().Model(&models.Perception{}).Where("chat_id = ? AND text LIKE ?", told.ID, "%compass%").Pluck("id", &compass).Error; err != nil {
				t.Fatal(err)
			}
			if len(ids) < 3 || len(compass) == 0 {
				t.Fatalf("the told chat has %d perceptions, %d of the compass; want 3+ and 1+", len(ids), len(compass))
			}
			waitVectors(t, r, int64(len(ids)))
			count := func(model any) int64 {
				var n int64
				if err := r.st.DB().Model(model).Where("item_id IN ?", ids).Count(&n).Error; err != nil {
					t.Fatal(err)
				}
				return n
			}
			if v, terms := count(&models.RecallVector{}), count(&models.RecallTerm{}); v != int64(len(ids)) || terms == 0 {
				t.Fatalf("before the forget: %d vectors and %d index terms of the chat's %d perceptions", v, terms, len(ids))
			}

			// Positive control: asked in another chat of the space, the
			// question finds the compass by vector, so the cache holds it.
			r.say(t, "fb", 4, "Ada", question)
			if block := recallBlock(t, r.fake); !strings.Contains(block, fact) {
				t.Fatalf("before the forget the block lacks the compass:\n%s", block)
			}
			var before []string
			r.st.DB().Model(&models.Message{}).Where("chat_id = ? AND role = ? AND content = ?", r.chat(t, "fb").ID, "user", question).Pluck("id", &before)
			if len(before) != 1 {
				t.Fatalf("%d questions stored in fb, want 1", len(before))
			}
			var listed []string
			for _, it := range reportOf(t, r, r.chat(t, "fb").ID, before[0]).Items {
				listed = append(listed, it.ID)
			}
			if !hasAny(listed, compass) {
				t.Fatalf("before the forget the inspector does not list the compass %v: %v", compass, listed)
			}
			if got := similarIDs(t, vec, told.SpaceID, question); !hasAny(got, compass) {
				t.Fatalf("before the forget the cache does not find the compass %v: %v", compass, got)
			}

			// /forget in fa, confirmed by the asker.
			if notices := forgetConfirmed(t, r.p, r.st, "fa", told.ID); !strings.Contains(strings.Join(notices, "\n"), "Forgotten:") {
				t.Fatalf("no forgotten notice: %q", notices)
			}

			// The new chat of fa, same card and space, asks the same way.
			fresh := r.chat(t, "fa")
			if fresh.ID == told.ID || fresh.CardID != told.CardID || fresh.SpaceID != told.SpaceID {
				t.Fatalf("fresh chat %+v, want another of card %s in space %s", fresh, told.CardID, told.SpaceID)
			}
			r.say(t, "fa", 5, "Ada", question)
			if block := recallBlock(t, r.fake); strings.Contains(block, "compass") {
				t.Errorf("the forgotten compass came back:\n%s", block)
			}
			// One more turn has the question recorded and embedded: once
			// its vectors are written, the jobs after the forget have run,
			// and none may have brought a row back; nor does an embedding
			// job for the forgotten chat.
			r.say(t, "fa", 6, "Ada", "*I wait by the window.*")
			waitVectorsOf(t, r, fresh.ID)
			if res, err := r.mem.Embed(ctx, told.ID); err != nil {
				t.Fatalf("embedding the forgotten chat: %v", err)
			} else if res.Outcome == memory.Written {
				t.Errorf("embedding the forgotten chat wrote: %+v", res)
			}
			if v, terms := count(&models.RecallVector{}), count(&models.RecallTerm{}); v != 0 || terms != 0 {
				t.Errorf("after the forget: %d vectors and %d index terms of the forgotten perceptions remain", v, terms)
			}
			var left int64
			r.st.DB().Model(&models.RecallVector{}).Where("chat_id = ?", told.ID).Count(&left)
			if left != 0 {
				t.Errorf("%d vectors of the forgotten chat remain", left)
			}
			if got := similarIDs(t, vec, told.SpaceID, question); hasAny(got, ids) {
				t.Errorf("the vector cache still finds forgotten items %v among %v", ids, got)
			}
			// The inspector's record of the question's recall lists no
			// forgotten item among its candidates.
			var asked []string
			r.st.DB().Model(&models.Message{}).Where("chat_id = ? AND role = ? AND content = ?", fresh.ID, "user", question).Pluck("id", &asked)
			if len(asked) != 1 {
				t.Fatalf("%d questions stored in the fresh chat, want 1", len(asked))
			}
			rep := reportOf(t, r, fresh.ID, asked[0])
			for _, it := range rep.Items {
				if hasAny([]string{it.ID}, ids) || strings.Contains(it.Text, "compass") {
					t.Errorf("a forgotten item is a candidate: %+v", it)
				}
			}
		})
	}
}

// Another process (a second serve replica) has its own vector cache, which
// the /forget here cannot reach: the first time its turn's search meets a
// forgotten vector it reloads the pair from the store, so the forgotten
// vectors leave that cache too, and the fact is not recalled there either.
func TestForgetReachesAnotherProcesssVectorCache(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, _ := vectorRig(t, b)
			const question = "Where did I hide my navigator's needle?"
			r.say(t, "fa", 1, "Ada", "I buried the brass compass under the old oak.")
			r.say(t, "fa", 2, "Ada", "My grey mare is called Juniper.")
			r.say(t, "fa", 3, "Ada", "*I look at the sea for a while.*")
			told := r.chat(t, "fa")
			var ids []string
			r.st.DB().Model(&models.Perception{}).Where("chat_id = ?", told.ID).Pluck("id", &ids)
			if len(ids) < 3 {
				t.Fatalf("the told chat has %d perceptions, want 3+", len(ids))
			}
			waitVectors(t, r, int64(len(ids)))

			other := memory.NewVectors(llm.NewEmbedder(llm.EmbedConfig{BaseURL: r.fake.URL(), Model: "embed-m", Dimensions: 256}), r.st, "embed-m", 8<<20)
			opt := r.opt
			opt.RecallVectors = other
			replica := bot.New(opt)
			ask := func(ch string, n int) string {
				t.Helper()
				in := inbound(ch, n)
				in.Text = question
				must(t, handle(ctx, replica, in, &discardSink{}))
				return recallBlock(t, r.fake)
			}
			// Positive control: the replica recalls the compass, by its cache.
			if block := ask("fb", 4); !strings.Contains(block, "brass compass under the old oak") {
				t.Fatalf("before the forget the replica's block lacks the compass:\n%s", block)
			}
			if got := similarIDs(t, other, told.SpaceID, question); !hasAny(got, ids) {
				t.Fatalf("the replica's cache holds none of the told chat's items: %v", got)
			}

			forgetConfirmed(t, r.p, r.st, "fa", told.ID)

			if block := ask("fc", 5); strings.Contains(block, "compass") {
				t.Errorf("the replica recalled the forgotten compass:\n%s", block)
			}
			if got := similarIDs(t, other, told.SpaceID, question); hasAny(got, ids) {
				t.Errorf("the replica's cache still holds forgotten items %v among %v", ids, got)
			}
		})
	}
}

// similarIDs returns the items the vector source finds for text among
// Maren's in space, however little alike.
func similarIDs(t *testing.T, vec *memory.Vectors, space, text string) []string {
	t.Helper()
	v := *vec
	v.MinSimilarity = -1
	found, err := v.Similar(context.Background(), space, "Maren", text, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.ID
	}
	return out
}

func hasAny(got, want []string) bool {
	for _, g := range got {
		for _, w := range want {
			if g == w {
				return true
			}
		}
	}
	return false
}

// reportOf waits for the inspector's record of the recall made for the
// turn ending in message id (written off the turn's path).
func reportOf(t *testing.T, r *recordRig, chatID, id string) memory.RecallReport {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, err := r.st.RecallDiagnostics(context.Background(), chatID, id, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 {
			rep, err := memory.ParseRecallReport(ds[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recall record for message %s", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitVectorsOf waits until every perception of the chat has its vector.
func waitVectorsOf(t *testing.T, r *recordRig, chatID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var p, v int64
		r.st.DB().Model(&models.Perception{}).Where("chat_id = ? AND mode <> ?", chatID, "none").Count(&p)
		r.st.DB().Model(&models.RecallVector{}).Where("chat_id = ?", chatID).Count(&v)
		if p > 0 && v == p {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chat's %d perceptions have %d vectors", p, v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
