package bot

import (
	"context"
	"sync"
	"time"

	"troupe/prompt"
)

// tokenBudget is a bucket of model tokens per key, refilled at perMin a
// minute up to perMin. A turn starts while its bucket holds tokens and is
// charged what it spent, which may leave the bucket in debt: the next turns
// wait until the debt is paid back. perMin 0 is off.
type tokenBudget struct {
	mu      sync.Mutex
	perMin  int
	buckets map[string]*tokenLevel
}

type tokenLevel struct {
	tokens float64
	last   time.Time
}

// maxBudgetKeys bounds the buckets kept; past it the full ones go.
const maxBudgetKeys = 100000

// level refills key's bucket to now and returns it; b.mu is held.
func (b *tokenBudget) level(key string, now time.Time) *tokenLevel {
	if b.buckets == nil {
		b.buckets = map[string]*tokenLevel{}
	}
	l, ok := b.buckets[key]
	if !ok {
		if len(b.buckets) >= maxBudgetKeys {
			b.evict(now)
		}
		l = &tokenLevel{tokens: float64(b.perMin), last: now}
		b.buckets[key] = l
	}
	if now.After(l.last) {
		l.tokens = min(float64(b.perMin), l.tokens+now.Sub(l.last).Minutes()*float64(b.perMin))
		l.last = now
	}
	return l
}

// evict drops the buckets that are full again: they hold no information.
func (b *tokenBudget) evict(now time.Time) {
	for k, l := range b.buckets {
		if l.tokens+now.Sub(l.last).Minutes()*float64(b.perMin) >= float64(b.perMin) {
			delete(b.buckets, k)
		}
	}
}

// spent reports whether key's bucket holds no token.
func (b *tokenBudget) spent(key string, now time.Time) bool {
	if b.perMin <= 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.level(key, now).tokens < 1
}

// charge takes n tokens (gives them back when n is negative) from key's
// bucket.
func (b *tokenBudget) charge(key string, n int, now time.Time) {
	if b.perMin <= 0 || n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.level(key, now)
	l.tokens = min(float64(b.perMin), l.tokens-float64(n))
}

// modelBudget holds the token budgets of the pipeline's model calls: one
// per channel and one for all of them (limits.channel_tokens_per_minute,
// limits.tokens_per_minute). Both are this process's: replicas each keep
// their own.
type modelBudget struct {
	channel, global tokenBudget
	// count counts a prompt's tokens when the turn did not.
	count TokenCounter
}

func newModelBudget(l Limits, count TokenCounter) *modelBudget {
	if l.ChannelTokensPerMinute <= 0 && l.TokensPerMinute <= 0 {
		return nil
	}
	if count == nil {
		count = prompt.NewEstimator()
	}
	return &modelBudget{channel: tokenBudget{perMin: l.ChannelTokensPerMinute}, global: tokenBudget{perMin: l.TokensPerMinute}, count: count}
}

// over names the budget a turn of channel would overdraw: "channel",
// "global", or "" when it may call the model.
func (b *modelBudget) over(channel string, now time.Time) string {
	switch {
	case b == nil:
		return ""
	case b.channel.spent(channel, now):
		return "channel"
	case b.global.spent("", now):
		return "global"
	}
	return ""
}

// charge takes n tokens from both budgets of channel.
func (b *modelBudget) charge(channel string, n int, now time.Time) {
	if b == nil {
		return
	}
	b.channel.charge(channel, n, now)
	b.global.charge("", n, now)
}

// overBudget tells the turn's sink, when a model budget is spent, that no
// reply comes now, and counts the turn; the user message stays stored for
// /regen.
func (p *Pipeline) overBudget(ctx context.Context, cs chatState, sink Sink) bool {
	scope := p.tokens.over(cs.channel.ID, p.opt.Now())
	if scope == "" {
		return false
	}
	p.opt.Observer.TurnObserved(TurnStats{Platform: cs.channel.Platform, Outcome: "over_budget"})
	p.log.Info("model budget spent: no model call", "chat_id", cs.chat.ID, "budget", scope)
	if err := sink.Notice(ctx, p.gtext(p.language(cs.card), msgOverBudget)); err != nil {
		p.log.Warn("budget notice", "chat_id", cs.chat.ID, "err", err)
	}
	return true
}

// chargePrompt takes the prompt's tokens from the budgets before the model
// is called, so that turns running at once see each other's spending, and
// returns what it took.
func (p *Pipeline) chargePrompt(cs chatState, prompt builtPrompt) int {
	if p.tokens == nil {
		return 0
	}
	n := prompt.estimated
	if n <= 0 {
		n = p.tokens.count.Estimate(cs.chat.ID, prompt.messages)
	}
	p.tokens.charge(cs.channel.ID, n, p.opt.Now())
	return n
}

// settleCharge replaces the prompt's charge by what the call cost: the
// tokens the API reported, else the prompt's count and the reply's
// estimate.
func (p *Pipeline) settleCharge(cs chatState, charged int, res ModelResult) {
	if p.tokens == nil {
		return
	}
	cost := res.PromptTokens + res.CompletionTokens
	if res.PromptTokens <= 0 {
		cost = charged + res.CompletionTokens
		if res.CompletionTokens <= 0 {
			cost = charged + prompt.EstimateTokens(res.Text)
		}
	}
	p.tokens.charge(cs.channel.ID, cost-charged, p.opt.Now())
}
