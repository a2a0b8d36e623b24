package memory_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"troupe/config"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// TestForgottenWhileTheScribeWrites: a chat forgotten while the scribe
// writes its summary or recap owes nothing: the job ends skipped, without an
// error that would retry it, and writes nothing of the chat.
func TestForgottenWhileTheScribeWrites(t *testing.T) {
	for _, kind := range []string{"summary", "recap"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			for _, b := range testenv.Backends(t) {
				t.Run(b.Name, func(t *testing.T) {
					ctx := context.Background()
					st := testenv.OpenStore(t, b)
					fake := openaitest.NewServer(t)
					client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: -1}, nil)
					mc := config.Default().Memory
					mc.Keep, mc.Period, mc.MinCutChars, mc.ManualMinCutChars = 1, 30, 1, 1
					mem := memory.NewService(st, llm.Scribe{C: client}, memory.ConfigFrom(mc, "en"), nil)
					chat := storyChat(t, st)
					scribe := &memorytest.Scribe{}
					var once sync.Once
					var forgetErr error
					fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
						if memorytest.Kind(req) == kind {
							once.Do(func() { _, forgetErr = mem.ForgetChat(context.Background(), chat.ID) })
						}
						return scribe.Respond(req)
					})
					var res memory.Result
					var err error
					if kind == "summary" {
						res, err = mem.Compact(ctx, chat.ID, true)
					} else {
						res, err = mem.Recap(ctx, chat.ID)
					}
					if forgetErr != nil {
						t.Fatalf("forget while the scribe wrote: %v", forgetErr)
					}
					if err != nil || res.Outcome != memory.Skipped || res.Reason != memory.ReasonForgotten {
						t.Errorf("job = %+v, err %v; want skipped, %q, no error", res, err, memory.ReasonForgotten)
					}
					if sums, _ := st.ChatSummaries(ctx, chat.ID); len(sums) != 0 {
						t.Errorf("%d summaries of the forgotten chat were written", len(sums))
					}
					if _, err := st.Recap(ctx, chat.ID); err == nil {
						t.Error("a recap of the forgotten chat was written")
					}
				})
			}
		})
	}
}

// storyChat stores a chat of a few beats.
func storyChat(t *testing.T, st *models.Store) models.Chat {
	t.Helper()
	ctx := context.Background()
	must(t, st.UpsertCard(ctx, models.Card{ID: "maren", Name: "Maren", Language: "en", Data: "{}"}))
	must(t, st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}))
	_, err := st.EnsureChannel(ctx, models.Channel{ID: "console:story", Platform: "console", ExternalID: "story", SpaceID: "console:local:ada"})
	must(t, err)
	chat, err := st.StartChat(ctx, "console:story", "maren", "console:local:ada", "story", &models.Message{Role: "assistant", Content: "The lamp is lit."})
	must(t, err)
	head := chat.HeadID
	for i := 0; i < 4; i++ {
		msgs := []*models.Message{
			{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf("I climb to step %d of the lighthouse.", i)},
			{Role: "assistant", Content: fmt.Sprintf("Maren follows you to step %d, lantern high.", i)},
		}
		must(t, st.Append(ctx, chat.ID, head, head, msgs))
		head = msgs[1].ID
	}
	return chat
}
