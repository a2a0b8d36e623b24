package bot_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// inlineJobs runs owed compactions at once, so a benchmark sees a
// deterministic story.
type inlineJobs struct{ mem *memory.Service }

func (j inlineJobs) AfterTurn(ctx context.Context, t bot.TurnDone) error {
	if t.CompactionDue {
		_, err := j.mem.Compact(ctx, t.ChatID, t.Urgent)
		return err
	}
	return nil
}

func (inlineJobs) ChatEnded(context.Context, string) error { return nil }

func (inlineJobs) MemoryChanged(context.Context, string, string) error { return nil }

// discardSink swallows a reply.
type discardSink struct{ notices []string }

func (*discardSink) Typing(context.Context)               {}
func (*discardSink) Update(context.Context, string) error { return nil }
func (*discardSink) Finish(context.Context, string) error { return nil }
func (s *discardSink) Notice(_ context.Context, t string) error {
	s.notices = append(s.notices, t)
	return nil
}

type benchRig struct {
	st     *models.Store
	fake   *openaitest.Server
	p      *bot.Pipeline
	mem    *memory.Service
	client *llm.Client
	turns  *statsObserver
}

func newBenchRig(tb testing.TB, dsn string) *benchRig {
	tb.Helper()
	return newRigWith(tb, dsn, nil, 128000)
}

// newBenchRigClock is a rig on a fresh SQLite file whose pipeline reads now.
func newBenchRigClock(tb testing.TB, now func() time.Time) *benchRig {
	tb.Helper()
	return newRigWith(tb, "sqlite://"+filepath.Join(tb.TempDir(), "clock.db"), now, 128000)
}

func newRigWith(tb testing.TB, dsn string, now func() time.Time, contextWindow int) *benchRig {
	card, err := cards.LoadCard("../examples/cards/lantern-keeper.json")
	if err != nil {
		tb.Fatal(err)
	}
	return newRigCard(tb, dsn, now, contextWindow, card)
}

// newRigCard is a rig whose library holds card alone.
func newRigCard(tb testing.TB, dsn string, now func() time.Time, contextWindow int, card cards.Card) *benchRig {
	st, err := models.Open(context.Background(), dsn, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	fake := openaitest.NewServer(tb)
	scribe := &memorytest.Scribe{}
	fake.SetResponder(scribe.Respond)
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	mc := config.Default().Memory
	mem := memory.NewService(st, llm.Scribe{C: client}, memory.ConfigFrom(mc, "en"), slog.New(slog.DiscardHandler))
	lib, _ := cards.NewLibrary([]cards.Card{card}, "")
	turns := &statsObserver{}
	p := bot.New(bot.Options{Store: st, Cards: lib, Model: client, Jobs: inlineJobs{mem}, Memory: mem, Tokens: prompt.NewEstimator(),
		MemoryConfig: mc, Language: "en", ContextWindow: contextWindow, MaxReplyTokens: 256, Now: now, Observer: turns})
	return &benchRig{st: st, fake: fake, p: p, mem: mem, client: client, turns: turns}
}

func inbound(ch string, i int) bot.Inbound {
	return bot.Inbound{Channel: bot.ChannelRef{Platform: "console", ID: ch, SpaceKind: bot.SpaceLocal, SpaceID: "ada"},
		AuthorID: "ada", AuthorName: "Ada", MessageID: fmt.Sprint(i),
		Text: fmt.Sprintf("Beat %d: I climb the stair, look at the sea and ask Maren about the light and her brother.", i)}
}

// BenchmarkPromptGrowth plays a 1000-beat story and reports the prompt
// tokens sent at beats 50, 200, 500 and 1000, next to what replaying the
// whole branch would send.
func BenchmarkPromptGrowth(b *testing.B) {
	counter, err := prompt.NewTokenCounter("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	for n := 0; n < b.N; n++ {
		r := newBenchRig(b, "sqlite://"+filepath.Join(b.TempDir(), "t.db"))
		ctx := context.Background()
		at := map[int]bool{50: true, 200: true, 500: true, 1000: true}
		var first float64
		for beat := 1; beat <= 1000; beat++ {
			if err := handle(ctx, r.p, inbound("story", beat), &discardSink{}); err != nil {
				b.Fatal(err)
			}
			if !at[beat] {
				continue
			}
			var req openaitest.Request
			for _, q := range r.fake.Requests() {
				if memorytest.Kind(q) == "" {
					req = q
				}
			}
			sent := 0
			for _, m := range req.Messages {
				sent += 4 + counter.Count(m.Content)
			}
			full := replayTokens(b, r.st, counter, req)
			if beat == 50 {
				first = float64(sent)
			}
			b.ReportMetric(float64(sent), fmt.Sprintf("tokens@%d", beat))
			b.ReportMetric(float64(full), fmt.Sprintf("replay@%d", beat))
			if beat == 1000 {
				b.ReportMetric(float64(sent)/first, "ratio1000/50")
			}
		}
	}
}

// replayTokens counts what the prompt would be with the whole branch: the
// system message plus every message from the greeting on.
func replayTokens(tb testing.TB, st *models.Store, c *prompt.TokenCounter, req openaitest.Request) int {
	ctx := context.Background()
	ch, err := st.Channel(ctx, "console:story")
	if err != nil {
		tb.Fatal(err)
	}
	chat, _ := st.Chat(ctx, ch.CurrentChatID)
	n := 4 + c.Count(req.Messages[0].Content)
	for id := chat.HeadID; id != ""; {
		m, err := st.Message(ctx, id)
		if err != nil {
			tb.Fatal(err)
		}
		n += 4 + c.Count(m.Content)
		id = m.ParentID
	}
	return n
}

// BenchmarkTurnLongChat measures the pipeline's own time per turn (model
// time excluded; the fake answers at once) in a chat that already holds
// 10,000 messages, on SQLite and PostgreSQL.
func BenchmarkTurnLongChat(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		for _, size := range []int{100, 10000} {
			b.Run(fmt.Sprintf("%s/%dmsgs", be.Name, size), func(b *testing.B) {
				// b.Run calls this once per round: every round gets a fresh database.
				dsn := "sqlite://" + filepath.Join(b.TempDir(), "long.db")
				if be.Name == "postgres" {
					dsn = testenv.FreshPostgresDB(b)
				}
				r := newBenchRig(b, dsn)
				ctx := context.Background()
				if err := handle(ctx, r.p, inbound("long", 0), &discardSink{}); err != nil {
					b.Fatal(err)
				}
				seedLong(b, r.st, "console:long", size)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := handle(ctx, r.p, inbound("long", i+1), &discardSink{}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				var times []time.Duration
				r.turns.mu.Lock()
				for _, ts := range r.turns.turns[1:] {
					times = append(times, ts.Pipeline)
				}
				r.turns.mu.Unlock()
				sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
				if len(times) > 0 {
					b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
				}
			})
		}
	}
}

// seedLong grows the channel's chat to size messages, with a summary
// covering all but the last 20 beats, as a long compacted story has.
func seedLong(tb testing.TB, st *models.Store, channel string, size int) {
	ctx := context.Background()
	ch, _ := st.Channel(ctx, channel)
	chat, _ := st.Chat(ctx, ch.CurrentChatID)
	head := chat.HeadID
	var msgs []*models.Message
	for i := 0; i < size/2; i++ {
		msgs = append(msgs, &models.Message{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf("Seed %d: a line of the old story.", i)},
			&models.Message{Role: "assistant", AuthorName: "Maren", Content: fmt.Sprintf("Seed reply %d: *She nods at the sea.*", i)})
	}
	for len(msgs) > 0 {
		n := min(len(msgs), 500)
		if err := st.Append(ctx, chat.ID, head, head, msgs[:n]); err != nil {
			tb.Fatal(err)
		}
		head = msgs[n-1].ID
		msgs = msgs[n:]
	}
	// Cover all but the last 20 beats.
	through := head
	for i := 0; i < 40; i++ {
		m, _ := st.Message(ctx, through)
		through = m.ParentID
	}
	if _, err := st.InstallSummary(ctx, chat.ID, "", through, "## Story so far\nold\n\n## Characters\n-\n\n## Promises and foreshadowing\n-\n\n## Facts ledger\n-\n\n## Current scene\nnow", size/2-20); err != nil {
		tb.Fatal(err)
	}
}

// sharedBackend is a database and a Redis that several pipelines (several
// troupe processes) share.
type sharedBackend struct{ name, dsn, redis string }

// sharedBackends is SQLite with the embedded Redis, and PostgreSQL with
// Redis when the test services run.
func sharedBackends(t *testing.T) []sharedBackend {
	bs := []sharedBackend{{"sqlite+embedded", "sqlite://" + filepath.Join(t.TempDir(), "t.db"), ""}}
	if testenv.Available() {
		bs = append(bs, sharedBackend{"postgres+redis", testenv.FreshPostgresDB(t), testenv.FreshRedisURL(t)})
	}
	return bs
}

// rigOn is a rig on b's database and a client of b's Redis, both closed
// with the test.
func rigOn(t *testing.T, b sharedBackend) (*benchRig, *jobs.Redis) {
	t.Helper()
	r := newBenchRig(t, b.dsn)
	rds, err := jobs.OpenRedis(context.Background(), b.redis)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rds.Close() })
	return r, rds
}
