package bot_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/models"
	"troupe/models/testenv"
)

// statsObserver keeps the turns it is told of.
type statsObserver struct {
	mu    sync.Mutex
	turns []bot.TurnStats
}

func (o *statsObserver) TurnObserved(t bot.TurnStats) {
	o.mu.Lock()
	o.turns = append(o.turns, t)
	o.mu.Unlock()
}
func (*statsObserver) Forgotten(string)  {}
func (*statsObserver) SendFailed(string) {}
func (*statsObserver) Panicked(string)   {}

// TestGateBoundsPipelineWorkNotModelCalls runs six channels at once through
// a pipeline with one slot and a model that answers only once all six calls
// have arrived: the turns queue for the slot (and report it), but all six
// model calls are in flight together, because a turn gives its slot back
// before it calls the model.
func TestGateBoundsPipelineWorkNotModelCalls(t *testing.T) {
	dsns := []string{"sqlite://" + filepath.Join(t.TempDir(), "gate.db")}
	if testenv.Available() {
		dsns = append(dsns, testenv.FreshPostgresDB(t))
	}
	for _, dsn := range dsns {
		t.Run(dsn[:6], func(t *testing.T) {
			ctx := context.Background()
			st, err := models.Open(ctx, dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			fake := openaitest.NewServer(t)
			// Each model call waits until all the channels' calls have
			// arrived: if a turn held the one slot while the model wrote,
			// the others could not reach the model and the wait would end
			// at its deadline instead.
			const channels = 6
			var mu sync.Mutex
			arrived := 0
			all := make(chan struct{})
			var timedOut atomic.Int32
			fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				mu.Lock()
				if arrived++; arrived == channels {
					close(all)
				}
				mu.Unlock()
				select {
				case <-all:
				case <-time.After(20 * time.Second):
					timedOut.Add(1)
				}
				return openaitest.DefaultResponder(req)
			})
			client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
			card, err := cards.LoadCard("../examples/cards/lantern-keeper.json")
			if err != nil {
				t.Fatal(err)
			}
			lib, _ := cards.NewLibrary([]cards.Card{card}, "")
			obs := &statsObserver{}
			p := bot.New(bot.Options{Store: st, Cards: lib, Model: client, MemoryConfig: config.Default().Memory,
				Logger: slog.New(slog.DiscardHandler), Observer: obs, ConcurrentTurns: 1})
			if p.ConcurrentTurns() != 1 {
				t.Fatalf("ConcurrentTurns = %d, want 1", p.ConcurrentTurns())
			}
			var wg sync.WaitGroup
			sinks := make([]*discardSink, channels)
			for i := range channels {
				sinks[i] = &discardSink{}
				wg.Go(func() {
					if err := handle(ctx, p, inbound(fmt.Sprint("gate-", i), i), sinks[i]); err != nil {
						t.Errorf("channel %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			if arrived != channels {
				t.Fatalf("%d model calls, want %d", arrived, channels)
			}
			if n := timedOut.Load(); n > 0 {
				t.Errorf("%d model calls waited in vain for the others: a turn held its slot while the model wrote", n)
			}
			queued := 0
			for _, ts := range obs.turns {
				if ts.Outcome != "answered" {
					t.Errorf("turn outcome %q", ts.Outcome)
				}
				if ts.Queued > 0 {
					queued++
				}
			}
			if len(obs.turns) != channels || queued == 0 {
				t.Errorf("%d turns observed, %d of them queued; want %d turns and some queued behind the one slot", len(obs.turns), queued, channels)
			}
			for i, s := range sinks {
				if len(s.notices) > 0 {
					t.Errorf("channel %d got notices %q", i, s.notices)
				}
			}
		})
	}
}
