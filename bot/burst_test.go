package bot_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"troupe/bot"
	"troupe/config"
	"troupe/jobs"
	"troupe/llm"
	"troupe/models"
)

// TestBurstOfFiftyTwoProcesses sends 50 messages at once to one channel,
// split between two pipelines (two troupe serve processes) on one database
// and one Redis: every message is stored exactly once, on one linear branch,
// and each is answered as part of a turn.
func TestBurstOfFiftyTwoProcesses(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r, rds := rigOn(t, b)
			// A second pipeline with its own lanes: another process.
			st2, err := models.Open(ctx, b.dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st2.Close()
			client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", MaxRetries: -1}, nil)
			lib := r.p.Cards()
			locker := jobs.NewLocker(rds)

			p1Locked := bot.New(bot.Options{Store: r.st, Cards: lib, Model: client, MemoryConfig: config.Default().Memory, Locker: locker, Logger: slog.New(slog.DiscardHandler)})
			p2 := bot.New(bot.Options{Store: st2, Cards: lib, Model: client, MemoryConfig: config.Default().Memory, Locker: locker, Logger: slog.New(slog.DiscardHandler)})
			var wg sync.WaitGroup
			sinks := make([]*discardSink, 50)
			for i := 0; i < 50; i++ {
				sinks[i] = &discardSink{}
				p := p1Locked
				if i%2 == 1 {
					p = p2
				}
				wg.Add(1)
				go func(i int, p *bot.Pipeline) {
					defer wg.Done()
					if err := handle(ctx, p, inbound("burst", i), sinks[i]); err != nil {
						t.Errorf("message %d: %v", i, err)
					}
				}(i, p)
			}
			wg.Wait()
			for i, s := range sinks {
				if len(s.notices) > 0 {
					t.Errorf("message %d got notices %v", i, s.notices)
				}
			}
			ch, err := r.st.Channel(ctx, "console:burst")
			if err != nil {
				t.Fatal(err)
			}
			chat, _ := r.st.Chat(ctx, ch.CurrentChatID)
			br, err := r.st.LoadBranch(ctx, chat.HeadID)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, m := range br.Uncovered {
				if m.Role == "user" {
					seen[m.Content]++
				}
			}
			var all int64
			r.st.DB().Model(&models.Message{}).Where("role = ?", "user").Count(&all)
			if all != 50 || len(seen) != 50 {
				t.Fatalf("stored %d user messages, %d distinct on the head's branch; want 50 and 50", all, len(seen))
			}
			for i := 0; i < 50; i++ {
				if seen[inbound("burst", i).Text] != 1 {
					t.Errorf("message %d appears %d times on the branch", i, seen[inbound("burst", i).Text])
				}
			}
			if last := br.Uncovered[len(br.Uncovered)-1]; last.Role != "assistant" {
				t.Errorf("the branch ends with a %s message: some messages were never answered", last.Role)
			}
			t.Logf("50 messages became %d turns", r.fake.Count())
		})
	}
}
