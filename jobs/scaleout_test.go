package jobs_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/models"
)

// TestTwoWorkersNeverShareAChat runs two workers (as two troupe worker
// processes would) on one database and one Redis, with ten chats owing a
// compaction each: no chat's job runs in both at once, and each chat gets
// exactly one summary.
func TestTwoWorkersNeverShareAChat(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 0)
			ctx := context.Background()
			var chats []string
			for i := 0; i < 10; i++ {
				chats = append(chats, seedNamedChat(t, r.st, i, 40))
			}
			var mu sync.Mutex
			inFlight, maxInFlight := map[string]int{}, 0
			chatOf := regexp.MustCompile(`Chat(\d+) line`)
			r.scribe.Break = func(kind string, _ int) (openaitest.Answer, bool) { return openaitest.Answer{}, false }
			base := r.scribe.Respond
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				key := ""
				if m := chatOf.FindStringSubmatch(req.Messages[len(req.Messages)-1].Content + req.Messages[1].Content); m != nil {
					key = m[1]
				}
				mu.Lock()
				inFlight[key]++
				maxInFlight = max(maxInFlight, inFlight[key])
				mu.Unlock()
				time.Sleep(30 * time.Millisecond)
				mu.Lock()
				inFlight[key]--
				mu.Unlock()
				return base(req)
			})
			for _, id := range chats {
				must(t, r.queue.Compact(ctx, id, false))
			}
			w1 := r.startWorker(t)
			w2 := r.startWorker(t)
			defer w1()
			defer w2()
			deadline := time.Now().Add(40 * time.Second)
			for {
				done := 0
				for _, id := range chats {
					if sums, _ := r.st.ChatSummaries(ctx, id); len(sums) >= 1 {
						done++
					}
				}
				if done == len(chats) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d chats compacted", done, len(chats))
				}
				time.Sleep(50 * time.Millisecond)
			}
			must(t, r.queue.Drain(ctx, 10*time.Second))
			for _, id := range chats {
				if sums, _ := r.st.ChatSummaries(ctx, id); len(sums) != 1 {
					t.Errorf("chat %s has %d summaries, want 1", id, len(sums))
				}
			}
			if maxInFlight != 1 {
				t.Errorf("a chat's scribe calls overlapped: %d at once", maxInFlight)
			}
		})
	}
}

// seedNamedChat stores chat number n with beats whose text names it.
func seedNamedChat(t *testing.T, st *models.Store, n, beats int) string {
	t.Helper()
	ctx := context.Background()
	ch := fmt.Sprintf("console:ada/maren%d", n)
	_, err := st.EnsureChannel(ctx, models.Channel{ID: ch, Platform: "console", ExternalID: ch, SpaceID: "console:local:ada"})
	must(t, err)
	chat, err := st.StartChat(ctx, ch, "maren", "console:local:ada", fmt.Sprint("chat ", n), &models.Message{Role: "assistant", AuthorName: "Maren", Content: "Hello."})
	must(t, err)
	head := chat.HeadID
	for i := 0; i < beats; i++ {
		u := &models.Message{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf("Chat%d line %d: I ask about the lamp and the storm and the sea and the boat.", n, i)}
		a := &models.Message{Role: "assistant", AuthorName: "Maren", Content: fmt.Sprintf("Chat%d line %d: *She answers slowly, watching the rain on the glass.*", n, i)}
		must(t, st.Append(ctx, chat.ID, head, head, []*models.Message{u, a}))
		head = a.ID
	}
	return chat.ID
}
