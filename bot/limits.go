package bot

import (
	"context"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"troupe/models"
	"troupe/prompt"
)

// Limits bound what one user can ask of the pipeline.
type Limits struct {
	// PerMinute is how many messages a user may send per minute, across
	// channels of a platform; 0 turns the limit off.
	PerMinute int
	// MaxChars is the longest message taken; 0 means no limit.
	MaxChars int
	// ChannelTokensPerMinute and TokensPerMinute are the model's token
	// budgets of one channel and of the whole pipeline; 0 is off.
	ChannelTokensPerMinute int
	TokensPerMinute        int
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
func (p *Pipeline) countPrompt(chatID string, msgs []prompt.Message, limit int) int {
	est := p.opt.Tokens.Estimate(chatID, msgs)
	if est <= limit && float64(est)*nearLimit > float64(limit)*promptMargin {
		est = max(est, p.opt.Tokens.Precise(chatID, msgs))
	}
	return est
}

// refuseOversize refuses the waiting messages (cs.inbox) that no prompt
// can hold, however much older text is left out: each is stored as refused
// (off the branch, never sent to the model), leaves the inbox and is told
// on sink. cs.inbox keeps the others. It returns how many it refused.
func (p *Pipeline) refuseOversize(ctx context.Context, cs *chatState, group bool, sink Sink) (int, error) {
	limit, ok := p.promptLimit()
	if !ok || len(cs.inbox) == 0 {
		return 0, nil
	}
	rp := replyPlan{user: cs.user, persona: cs.persona, group: group}
	lang := p.language(cs.card)
	// The bare prompt leaves out lore and the resident: skip their work.
	bareState := *cs
	bareState.card.Book, bareState.resident = nil, ""
	kept := cs.inbox[:0:0]
	fixed, refused := -1, 0
	for _, row := range cs.inbox {
		msgs, ids := inboxMessages([]models.InboxMessage{row})
		bare := p.material(bareState, models.Branch{Uncovered: []models.Message{*msgs[0]}}, rp, p.bareLore(bareState, rp)).Input().Bare()
		n := p.countPrompt(cs.chat.ID, prompt.Assemble(bare), limit)
		if n <= limit {
			kept = append(kept, row)
			continue
		}
		if fixed < 0 {
			bare.History = nil
			fixed = p.countPrompt(cs.chat.ID, prompt.Assemble(bare), limit)
		}
		err := p.opt.Store.AppendRefused(ctx, cs.chat.ID, cs.chat.HeadID, msgs[0])
		again := errors.Is(err, models.ErrDuplicate) // refused and told the first time
		if err != nil && !again {
			p.log.Error("store refused message", "chat_id", cs.chat.ID, "err", err)
			_ = sink.Notice(ctx, p.text(lang, msgNotStored))
			return refused, err
		}
		if err := p.opt.Store.DropInbox(ctx, ids); err != nil {
			return refused, err
		}
		refused++
		if again {
			continue
		}
		p.opt.Observer.TurnObserved(TurnStats{Platform: cs.channel.Platform, Outcome: "refused"})
		p.log.Info("refused a message no prompt can hold", "chat_id", cs.chat.ID, "message_id", msgs[0].ID, "tokens", n-fixed, "room", limit-fixed)
		notice := p.text(lang, msgRefusedContext, n-fixed, limit-fixed)
		if fixed >= limit {
			notice = p.text(lang, msgCardFillsContext, fixed, limit)
		}
		if err := sink.Notice(ctx, notice); err != nil {
			p.log.Warn("refusal notice", "chat_id", cs.chat.ID, "err", err)
		}
	}
	cs.inbox = kept
	return refused, nil
}
