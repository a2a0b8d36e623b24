package bot

import (
	"context"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"troupe/memory"
	"troupe/models"
)

// Limits bound what one user can ask of the pipeline.
type Limits struct {
	// PerMinute is how many messages a user may send per minute, across
	// channels of a platform; 0 turns the limit off.
	PerMinute int
	// MaxChars is the longest message taken; 0 means no limit.
	MaxChars int
}

// rateLimiter is a token bucket per user.
type rateLimiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	perMin  int
}

type bucket struct {
	tokens float64
	last   time.Time
	warned bool
}

// allow takes a token for key. It returns whether the message may go on and,
// when it may not, whether this is the first refusal of the streak (the one
// that gets a polite notice).
func (r *rateLimiter) allow(key string, now time.Time) (ok, notify bool) {
	if r.perMin <= 0 {
		return true, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buckets == nil {
		r.buckets = map[string]*bucket{}
	}
	b, found := r.buckets[key]
	if !found {
		b = &bucket{tokens: float64(r.perMin), last: now}
		r.buckets[key] = b
		if len(r.buckets) > 100000 {
			r.evict(now)
		}
	}
	b.tokens = min(float64(r.perMin), b.tokens+now.Sub(b.last).Minutes()*float64(r.perMin))
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		b.warned = false
		return true, false
	}
	notify = !b.warned
	b.warned = true
	return false, notify
}

// evict drops buckets that have refilled: they hold no information.
func (r *rateLimiter) evict(now time.Time) {
	for k, b := range r.buckets {
		if now.Sub(b.last) > time.Minute {
			delete(r.buckets, k)
		}
	}
}

// overRate takes a token of in's user's rate. Over the limit it tells the
// user once per streak and reports true. The console's one local user is
// not limited.
func (p *Pipeline) overRate(ctx context.Context, in Inbound, sink Sink) (bool, error) {
	if in.Channel.Platform == PlatformConsole {
		return false, nil
	}
	ok, notify := p.rate.allow(in.UserKey(), p.opt.Now())
	if ok {
		return false, nil
	}
	if notify {
		return true, sink.Notice(ctx, p.text(p.langOf(in), msgSlowDown))
	}
	return true, nil
}

func tooLong(text string, max int) bool {
	return max > 0 && utf8.RuneCountInString(text) > max
}

// promptLimit is the most tokens a prompt may count: the context window
// less the reply's reserve, with the count's margin. ok is false when no
// window is known.
func (p *Pipeline) promptLimit() (limit int, ok bool) {
	if p.opt.Tokens == nil || p.opt.ContextWindow <= 0 {
		return 0, false
	}
	return int(float64(p.opt.ContextWindow-p.opt.MaxReplyTokens) / promptMargin), true
}

// countPrompt counts msgs for the chat: the estimate, and near the limit
// the precise count. A prompt already over by its estimate is not counted
// precisely: the precise count never lowers it, and on a huge message it
// would only cost time.
func (p *Pipeline) countPrompt(chatID string, msgs []memory.Message, limit int) int {
	est := p.opt.Tokens.Estimate(chatID, msgs)
	if est <= limit && float64(est)*nearLimit > float64(limit)*promptMargin {
		est = max(est, p.opt.Tokens.Precise(chatID, msgs))
	}
	return est
}

// fitPrompt assembles in within the context window, leaving out what it
// must (memory.FitPrompt). urgent is true when anything was left out: a
// compaction is owed now. ErrPromptTooLarge means even the message being
// answered does not fit beside the prompt's fixed parts.
func (p *Pipeline) fitPrompt(st chatState, in memory.AssembleInput) (builtPrompt, bool, error) {
	limit, ok := p.promptLimit()
	if !ok {
		return builtPrompt{messages: toPrompt(memory.Assemble(in))}, false, nil
	}
	f, err := memory.FitPrompt(in, p.opt.MemoryConfig.Keep, func(msgs []memory.Message) int { return p.countPrompt(st.chat.ID, msgs, limit) }, limit)
	if err != nil {
		return builtPrompt{}, true, ErrPromptTooLarge
	}
	urgent := f.Dropped > 0 || f.Shortened
	if urgent {
		p.log.Warn("prompt over budget: left out older messages", "chat_id", st.chat.ID, "dropped", f.Dropped, "shortened", f.Shortened, "estimate", f.Tokens, "limit", limit)
	}
	return builtPrompt{messages: toPrompt(f.Messages), estimated: f.Tokens, shortened: f.Shortened}, urgent, nil
}

// refuseOversize takes out of batch the messages no prompt could ever
// hold: those over the context window, less the reply's reserve, beside the
// prompt's fixed parts (the character, the conventions, the post-history
// instructions). Each is stored off the branch as refused (kept for the
// record, never sent, never a beat) and its author told at once, so one
// oversize message cannot wedge the chat. It returns the rest of the batch.
func (p *Pipeline) refuseOversize(ctx context.Context, st chatState, batch []pendingMsg) ([]pendingMsg, error) {
	limit, ok := p.promptLimit()
	if !ok {
		return batch, nil
	}
	rp := replyPlan{user: st.user, persona: st.persona, group: batch[len(batch)-1].in.Channel.Group}
	lang := p.language(st.card)
	// The bare prompt leaves out lore and the resident: skip their work.
	st.card.Book, st.resident = nil, ""
	kept := make([]pendingMsg, 0, len(batch))
	fixed := -1
	for _, b := range batch {
		msg := models.Message{Role: memory.RoleUser, AuthorName: b.in.AuthorName, Content: storable(b.in.Text)}
		bare := p.promptInput(st, models.Branch{Uncovered: []models.Message{msg}}, rp, p.bareLore(st, rp)).Bare()
		n := p.countPrompt(st.chat.ID, memory.Assemble(bare), limit)
		if n <= limit {
			kept = append(kept, b)
			continue
		}
		if fixed < 0 {
			bare.History = nil
			fixed = p.countPrompt(st.chat.ID, memory.Assemble(bare), limit)
		}
		refused := userMessages([]pendingMsg{b}, nil)[0]
		err := p.opt.Store.AppendRefused(ctx, st.chat.ID, st.chat.HeadID, refused)
		if errors.Is(err, models.ErrDuplicate) {
			continue // delivered again: refused and told the first time
		}
		if err != nil {
			p.log.Error("store refused message", "chat_id", st.chat.ID, "err", err)
			_ = b.sink.Notice(ctx, p.text(lang, msgNotStored))
			return nil, err
		}
		p.opt.Observer.TurnObserved(TurnStats{Platform: st.channel.Platform, Outcome: "refused"})
		p.log.Info("refused a message no prompt can hold", "chat_id", st.chat.ID, "message_id", refused.ID, "tokens", n-fixed, "room", limit-fixed)
		notice := p.text(lang, msgRefusedContext, n-fixed, limit-fixed)
		if fixed >= limit {
			notice = p.text(lang, msgCardFillsContext, fixed, limit)
		}
		if err := b.sink.Notice(ctx, notice); err != nil {
			p.log.Warn("refusal notice", "chat_id", st.chat.ID, "err", err)
		}
	}
	return kept, nil
}
