package bot_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// Issue 15's cost rule for scenes: five cast members present in one
// channel cost one recorder call per batch, not five. The one request
// shows all five present at every event, and its answer gives each of them
// a perception of every event (the engine's defaults), so the single call
// did the work of five.
func TestRecorderOneCallForFiveCastMembers(t *testing.T) {
	names := []string{"Maren", "Orla", "Piet", "Quill", "Rhea"}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Scribe{}
			fake.SetResponder(scribe.Respond)
			client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
			mc := config.Default().Memory
			mem := memory.NewService(st, llm.Scribe{C: client, JSON: true}, memory.ConfigFrom(mc, "en"), slog.New(slog.DiscardHandler))
			base, err := cards.LoadCard("../examples/cards/lantern-keeper.json")
			if err != nil {
				t.Fatal(err)
			}
			var cs []cards.Card
			var ids []string
			for i, n := range names {
				c := base
				c.ID, c.Name = fmt.Sprintf("keeper-%d", i), n
				cs = append(cs, c)
				ids = append(ids, c.ID)
			}
			lib, _ := cards.NewLibrary(cs, "")
			runs := 0
			batch := config.Default().Recorder.Batch
			p := bot.New(bot.Options{Store: st, Cards: lib, Model: client, Memory: mem, Jobs: recordJobs{mem: mem, runs: &runs},
				Tokens: prompt.NewEstimator(), MemoryConfig: mc, Recorder: config.Recorder{Enabled: true, Batch: batch},
				Scene: config.Scene{MaxCast: 8}, Language: "en", ContextWindow: 128000, MaxReplyTokens: 256})
			ref := bot.ChannelRef{Platform: bot.PlatformConsole, ID: "five", SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
			if err := p.BindCast(ctx, ref, ids); err != nil {
				t.Fatal(err)
			}
			// batch+1 user messages: the last makes the batch-th turn recordable.
			for i := 1; i <= batch+1; i++ {
				in := bot.Inbound{Channel: ref, AuthorID: "ada", AuthorName: "Ada", MessageID: fmt.Sprint(i),
					Text: fmt.Sprintf("%s, what do you see from the lamp room (%d)?", names[i%len(names)], i)}
				if err := handle(ctx, p, in, &discardSink{}); err != nil {
					t.Fatal(err)
				}
			}
			var reqs []openaitest.Request
			for _, q := range fake.Requests() {
				if memorytest.Kind(q) == "record" {
					reqs = append(reqs, q)
				}
			}
			if len(reqs) != 1 || scribe.Count("record") != 1 {
				t.Fatalf("%d recorder requests for one batch of a five-member scene, want 1", len(reqs))
			}
			evs := memorytest.RecorderEvents(reqs[0])
			if len(evs) < batch {
				t.Fatalf("the recorder was shown %d events, want the batch's %d turns' at least", len(evs), batch)
			}
			for _, e := range evs {
				for _, n := range names {
					if !slices.Contains(e.Present, n) {
						t.Errorf("event %s shows present %v, want all five cast members", e.ID, e.Present)
						break
					}
				}
			}
			for _, n := range names {
				var got int64
				if err := st.DB().Model(&models.Perception{}).Where("character_name = ?", n).Count(&got).Error; err != nil {
					t.Fatal(err)
				}
				if got != int64(len(evs)) {
					t.Errorf("%s has %d perceptions after the batch of %d events, want one of each", n, got, len(evs))
				}
			}
		})
	}
}
