package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// tracedRig is a recall rig whose replies keep their prompt traces as
// `troupe serve` configures them from web (token set, web.prompts keep).
func tracedRig(t *testing.T, b testenv.Backend, keep int) *recordRig {
	t.Helper()
	r := newRecallRig(t, b, 1)
	web := config.Default().Web
	web.Token, web.Prompts = "a-token-of-twenty-chars", keep
	r.opt.PromptTraces, r.opt.ModelName = web.PromptTraces(), "m"
	r.p = bot.New(r.opt)
	return r
}

// waitTrace waits for the trace of reply messageID (written off the
// turn's path).
func waitTrace(t *testing.T, st *models.Store, messageID string) models.PromptTrace {
	t.Helper()
	for i := 0; ; i++ {
		tr, err := st.PromptTrace(context.Background(), messageID)
		if err == nil {
			return tr
		}
		if i == 500 {
			t.Fatalf("no prompt trace of reply %s: %v", messageID, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A traced reply keeps the prompt it was built from: its blocks, in the
// order sent, rebuild each message of the request the model got word for
// word; their tokens add up to the prompt's count; the recall block's
// items are listed with their scores and why they were picked, and a kept
// block's items on the next turn. A chat keeps its last web.prompts
// traces, a regenerated reply its own.
func TestPromptTraceOfReplies(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := tracedRig(t, b, 2)
			keptStory(t, r, "tr", "brass compass", "Juniper")
			old := r.chat(t, "tr")
			r.say(t, "tr", 4, "Ada", "Where did I bury the brass compass?")
			sent := lastChatPrompt(t, r.fake)
			asked := r.chat(t, "tr")
			tr := waitTrace(t, r.st, asked.HeadID)

			if tr.ChatID != asked.ID || tr.CardID != asked.CardID || tr.SpaceID != asked.SpaceID || tr.Character == "" || tr.Model != "m" {
				t.Errorf("trace names chat %q card %q space %q character %q model %q; want the reply's", tr.ChatID, tr.CardID, tr.SpaceID, tr.Character, tr.Model)
			}
			if tr.ReportedTokens <= 0 || tr.EstimatedTokens <= 0 {
				t.Errorf("reported %d, estimated %d tokens: want both", tr.ReportedTokens, tr.EstimatedTokens)
			}
			// The blocks rebuild the request, message by message.
			texts := make([][]string, len(sent))
			for _, bl := range tr.Blocks {
				if bl.Message < 0 || bl.Message >= len(sent) {
					t.Fatalf("block %q names message %d of %d", bl.Kind, bl.Message, len(sent))
				}
				if bl.Label == "" {
					t.Errorf("block %q has no label", bl.Kind)
				}
				texts[bl.Message] = append(texts[bl.Message], bl.Text)
			}
			for i, m := range sent {
				if got := strings.Join(texts[i], "\n\n"); got != m.Content {
					t.Errorf("message %d as sent:\n%q\nits blocks:\n%q", i, m.Content, texts[i])
				}
			}
			kinds := blockKinds(tr)
			if len(kinds) < 4 || kinds[0] != prompt.BlockCharacter || kinds[1] != prompt.BlockConventions || kinds[len(kinds)-1] != prompt.BlockNew {
				t.Errorf("block kinds %v: want the character and conventions first, the new message last", kinds)
			}
			if i, j := indexOf(kinds, prompt.BlockRecall), indexOf(kinds, prompt.BlockNew); i < 0 || i > j {
				t.Errorf("block kinds %v: want the recall block before the new message", kinds)
			}
			sum := 0
			for _, bl := range tr.Blocks {
				sum += bl.Tokens
			}
			if d := tr.EstimatedTokens - sum; d < 0 || d > 10 {
				t.Errorf("the blocks count %d tokens, the prompt %d: want within 10", sum, tr.EstimatedTokens)
			}
			var picked []models.PromptRecallItem
			for _, it := range tr.Items {
				if it.Block == prompt.BlockRecall {
					picked = append(picked, it)
				}
			}
			if len(picked) == 0 {
				t.Fatalf("the trace lists no recalled item: %+v", tr.Items)
			}
			for _, it := range picked {
				if it.Total <= 0 || it.Why == "" || (it.Kind != models.RecallPerception && it.Kind != models.RecallBelief) {
					t.Errorf("recalled item %+v: want its kind, scores and why", it)
				}
			}
			if !recalledItemSays(t, r.st, picked, "brass compass") {
				t.Errorf("no recalled item of the trace is the compass: %+v", picked)
			}
			if !slicesHas(tr.Sources, old.ID) || tr.Sources[0] != asked.ID {
				t.Errorf("sources %v: want its own chat first and the chat the compass was told in", tr.Sources)
			}

			// The next turn sends the block again in place: its items are
			// the kept block's.
			r.say(t, "tr", 5, "Ada", "Is the brass compass still under the oak?")
			next := waitTrace(t, r.st, r.chat(t, "tr").HeadID)
			if indexOf(blockKinds(next), prompt.BlockKeptRecall) < 0 {
				t.Errorf("next turn's blocks %v: want the kept recall block", blockKinds(next))
			}
			var kept []string
			for _, it := range next.Items {
				if it.Block == prompt.BlockKeptRecall {
					kept = append(kept, it.ID)
				}
			}
			for _, it := range picked {
				if !slicesHas(kept, it.ID) {
					t.Errorf("next turn's kept items %v lack %s", kept, it.ID)
				}
			}

			// A regenerated reply has its own trace; the chat keeps its
			// last two.
			r.exec(t, "tr", "regen")
			regen := r.chat(t, "tr").HeadID
			waitTrace(t, r.st, regen)
			list, err := r.st.ChatPromptTraces(ctx, asked.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].MessageID != regen || len(list[0].Blocks) != 0 {
				t.Errorf("chat keeps %d traces (newest %v), want 2, the regenerated reply's first, without blocks", len(list), list)
			}
			if _, err := r.st.PromptTrace(ctx, asked.HeadID); err != models.ErrNotFound {
				t.Errorf("the oldest trace beyond web.prompts: got %v, want ErrNotFound", err)
			}
		})
	}
}

// Without web.token nothing is traced, whatever web.prompts says.
func TestNoPromptTraceWithoutWebToken(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecallRig(t, b, 1)
			web := config.Default().Web
			web.Prompts = 50
			r.opt.PromptTraces = web.PromptTraces()
			r.p = bot.New(r.opt)
			keptStory(t, r, "nt", "brass compass", "Juniper")
			r.say(t, "nt", 4, "Ada", "Where did I bury the brass compass?")
			if err := r.p.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			var n int64
			if err := r.st.DB().Model(&models.PromptTrace{}).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d traces stored without web.token, want 0", n)
			}
		})
	}
}

// Forgetting chat A deletes every prompt trace that holds its words: its
// own, and chat B's whose recall showed what was told in A (filed under
// the items' chats, not found by their text). A trace in another space
// stays. The control: before the forget a trace holds A's
// word.
func TestForgetDeletesPromptTracesHoldingItsWords(t *testing.T) {
	const word = "Zephyrine"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := tracedRig(t, b, 20)
			r.say(t, "fa", 1, "Ada", "I hid the silver key inside the "+word+" teapot.")
			r.say(t, "fa", 2, "Ada", "*I look at the sea for a while.*")
			told := r.chat(t, "fa")
			waitTrace(t, r.st, told.HeadID)

			// A chat of another space, which holds nothing of A.
			in := inbound("fc", 3)
			in.Channel.SpaceID, in.Text = "elsewhere", "*I watch the gulls over the harbour.*"
			if err := handle(ctx, r.p, in, &discardSink{}); err != nil {
				t.Fatal(err)
			}
			quiet := waitTrace(t, r.st, r.chat(t, "fc").HeadID)
			if slicesHas(quiet.Sources, told.ID) {
				t.Fatalf("another space's trace is filed under chat A: %v", quiet.Sources)
			}
			r.say(t, "fb", 4, "Ada", "Where did I hide the silver key?")
			asker := r.chat(t, "fb")
			if block := recallBlock(t, r.fake); !strings.Contains(block, word) {
				t.Fatalf("chat B's recall block lacks A's word:\n%s", block)
			}
			waitTrace(t, r.st, r.chat(t, "fb").HeadID)
			r.say(t, "fb", 5, "Ada", "Is it still there?")
			waitTrace(t, r.st, r.chat(t, "fb").HeadID)
			if n := tracesWith(t, r.st, word, asker.ID); n == 0 {
				t.Fatal("no trace of chat B holds A's word before the forget: the test checks nothing")
			}

			forgetConfirmed(t, r.p, r.st, "fa", told.ID)

			if n := tracesWith(t, r.st, word, ""); n != 0 {
				t.Errorf("after the forget %d traces still hold A's word", n)
			}
			var filed int64
			if err := r.st.DB().Model(&models.PromptTraceItem{}).Where("from_chat = ? OR chat_id = ?", told.ID, told.ID).Count(&filed).Error; err != nil {
				t.Fatal(err)
			}
			if filed != 0 {
				t.Errorf("%d trace filings of chat A remain", filed)
			}
			if _, err := r.st.PromptTrace(ctx, quiet.MessageID); err != nil {
				t.Errorf("the other space's trace, which holds nothing of A: %v, want kept", err)
			}
		})
	}
}

// tracesWith counts the trace rows (of chatID, or any chat for "") whose
// blocks hold text.
func tracesWith(t *testing.T, st *models.Store, text, chatID string) int64 {
	t.Helper()
	q := st.DB().Model(&models.PromptTrace{}).Where("data LIKE ?", "%"+text+"%")
	if chatID != "" {
		q = q.Where("chat_id = ?", chatID)
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// recalledItemSays reports whether one of the items is a perception or
// belief whose text holds text.
func recalledItemSays(t *testing.T, st *models.Store, items []models.PromptRecallItem, text string) bool {
	t.Helper()
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	var n, m int64
	if err := st.DB().Model(&models.Perception{}).Where("id IN ? AND text LIKE ?", ids, "%"+text+"%").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	if err := st.DB().Model(&models.Belief{}).Where("id IN ? AND text LIKE ?", ids, "%"+text+"%").Count(&m).Error; err != nil {
		t.Fatal(err)
	}
	return n+m > 0
}

func blockKinds(tr models.PromptTrace) []string {
	var out []string
	for _, b := range tr.Blocks {
		out = append(out, b.Kind)
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func slicesHas(list []string, s string) bool { return indexOf(list, s) >= 0 }

// BenchmarkTurnPromptTrace measures whole turns (the fake model answers at
// once; recorder and recall on, as served) with prompt traces off and on
// (web.prompts 20), on SQLite and PostgreSQL, in turns a second. The
// traces written in the background are waited for within the time.
func BenchmarkTurnPromptTrace(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		for _, keep := range []int{0, 20} {
			b.Run(fmt.Sprintf("%s/prompts=%d", be.Name, keep), func(b *testing.B) {
				dsn := "sqlite://" + b.TempDir() + "/t.db"
				if be.Name == "postgres" {
					dsn = testenv.FreshPostgresDB(b)
				}
				r := newRecordRigCard(b, testenv.Backend{Name: be.Name, DSN: dsn}, 1<<20, nil)
				r.opt.Recall = config.Default().Recall
				r.opt.PromptTraces = keep
				r.p = bot.New(r.opt)
				text := `*I climb to the lamp room.* "Maren, what did you see on the water tonight?" *I wait.*`
				r.sayTB(b, "t", 0, "Ada", text)
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					r.sayTB(b, "t", i+1, "Ada", text)
				}
				if err := r.p.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
			})
		}
	}
}

// A trace that shows the resident summary holds the words of every chat
// the card's handbook took them from: forgetting one of those chats
// deletes it (filed under the manifest's chats when it was written).
func TestForgetDeletesPromptTracesShowingItsResident(t *testing.T) {
	const fact = "The blue cask in the cellar holds the lamp oil."
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRecordRig(t, b, 1)
			r.fake.SetResponder((&memorytest.Faithful{}).Respond)
			r.opt.Recorder.Enabled, r.opt.PromptTraces = false, 20
			r.p = bot.New(r.opt)
			r.say(t, "va", 1, "Ada", fact)
			r.say(t, "va", 2, "Ada", "*I trim the wick of the great lamp.*")
			told := r.chat(t, "va")
			if res, err := r.mem.Recap(ctx, told.ID); err != nil || res.Outcome != memory.Written {
				t.Fatalf("recap: %+v, %v", res, err)
			}
			consolidate(t, r, told)
			mem, err := r.st.LoadMemory(ctx, told.CardID, told.SpaceID)
			if err != nil || !strings.Contains(mem.Resident, "blue cask") {
				t.Fatalf("the resident lacks A's fact (%v): the test checks nothing\n%s", err, mem.Resident)
			}

			r.say(t, "vc", 3, "Ada", "*I sit down by the lamp.*")
			other := r.chat(t, "vc")
			tr := waitTrace(t, r.st, other.HeadID)
			if indexOf(blockKinds(tr), prompt.BlockResident) < 0 || !slicesHas(tr.Sources, told.ID) {
				t.Fatalf("chat C's trace: blocks %v, sources %v; want the resident, filed under chat A", blockKinds(tr), tr.Sources)
			}
			if n := tracesWith(t, r.st, "blue cask", other.ID); n == 0 {
				t.Fatal("chat C's trace does not hold A's fact: the test checks nothing")
			}

			forgetConfirmed(t, r.p, r.st, "va", told.ID)
			if n := tracesWith(t, r.st, "blue cask", ""); n != 0 {
				t.Errorf("after the forget %d traces still hold A's fact", n)
			}
			if _, err := r.st.PromptTrace(ctx, tr.MessageID); err != models.ErrNotFound {
				t.Errorf("chat C's trace that showed A's resident line: %v, want ErrNotFound", err)
			}
		})
	}
}
