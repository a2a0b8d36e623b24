package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/config"
	"troupe/models/testenv"
	"troupe/prompt"
)

// TestModelBudgets: with a budget of one token a minute per channel, the
// first turn of a channel is answered and spends it; the second gets the
// budget's notice, is counted as over_budget and makes no model call,
// while another channel still plays. Once the minutes have paid the debt
// back, the channel plays again. A global budget stops every channel once
// one spent it.
func TestModelBudgets(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newBenchRig(t, b.DSN)
			clock := time.Now()
			turns := &statsObserver{}
			newPipeline := func(l bot.Limits) *bot.Pipeline {
				return bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory,
					Tokens: prompt.NewEstimator(), Limits: l, Now: func() time.Time { return clock }, Observer: turns})
			}
			ctx := context.Background()
			say := func(p *bot.Pipeline, channel string, i int) []string {
				t.Helper()
				in := inbound(channel, i)
				in.Channel.Platform = "telegram"
				s := &discardSink{}
				must(t, handle(ctx, p, in, s))
				return s.notices
			}
			overBudget := func() int {
				turns.mu.Lock()
				defer turns.mu.Unlock()
				n := 0
				for _, ts := range turns.turns {
					if ts.Outcome == "over_budget" {
						n++
					}
				}
				return n
			}

			p := newPipeline(bot.Limits{ChannelTokensPerMinute: 1})
			if notices := say(p, b.Name+"-a", 1); r.fake.Count() != 1 || len(notices) != 0 {
				t.Fatalf("first turn: %d model calls, notices %q; want one call", r.fake.Count(), notices)
			}
			notices := say(p, b.Name+"-a", 2)
			if r.fake.Count() != 1 {
				t.Errorf("the turn over the channel's budget called the model")
			}
			if len(notices) != 1 || !strings.Contains(notices[0], "used up its share") {
				t.Errorf("the turn over budget was told %q, want the budget's notice", notices)
			}
			if n := overBudget(); n != 1 {
				t.Errorf("over_budget turns counted = %d, want 1", n)
			}
			if notices := say(p, b.Name+"-b", 1); r.fake.Count() != 2 || len(notices) != 0 {
				t.Errorf("another channel: %d model calls in all, notices %q; want it answered", r.fake.Count(), notices)
			}
			clock = clock.Add(24 * time.Hour)
			if say(p, b.Name+"-a", 3); r.fake.Count() != 3 {
				t.Errorf("the channel still over budget after a day")
			}

			p = newPipeline(bot.Limits{TokensPerMinute: 1})
			before := r.fake.Count()
			say(p, b.Name+"-c", 1)
			notices = say(p, b.Name+"-d", 1)
			if r.fake.Count() != before+1 || len(notices) != 1 || !strings.Contains(notices[0], "used up its share") {
				t.Errorf("global budget: %d model calls for two channels, notices %q; want one call and the notice", r.fake.Count()-before, notices)
			}
		})
	}
}

// TestStartAndCardButtonsTakeFromTheRate: /start and a card button switch
// the channel's chat, so they take from the user's rate like messages.
func TestStartAndCardButtonsTakeFromTheRate(t *testing.T) {
	r := newBenchRig(t, testenv.Backends(t)[0].DSN)
	clock := time.Now()
	p := bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory,
		Limits: bot.Limits{PerMinute: 2}, Now: func() time.Time { return clock }})
	ctx := context.Background()
	in := inbound("rate", 1)
	in.Channel.Platform = "telegram"
	card, _ := r.p.Cards().Default()
	start := func(args string) []string {
		t.Helper()
		s := &discardSink{}
		must(t, p.Exec(ctx, in, bot.Command{Name: "start", Args: args}, s))
		return s.notices
	}
	button := func() []string {
		t.Helper()
		s := &discardSink{}
		if err := p.Submit(ctx, bot.Event{Kind: bot.EventButton, In: in, Card: card.ID}, s).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		return s.notices
	}
	if n := append(start(card.ID), start("")...); len(n) != 0 {
		t.Fatalf("two /start within the rate were told %q", n)
	}
	if n := start(card.ID); len(n) != 1 || !strings.Contains(n[0], "wait a moment") {
		t.Errorf("a third /start in a minute at a rate of 2 was told %q, want the rate's notice", n)
	}
	clock = clock.Add(time.Minute)
	if n := append(button(), start("")...); len(n) != 0 {
		t.Fatalf("a card button and a /start within the rate were told %q", n)
	}
	if n := button(); len(n) != 1 || !strings.Contains(n[0], "wait a moment") {
		t.Errorf("a card button over the rate was told %q, want the rate's notice", n)
	}
}
