package bot

import (
	"context"
	"errors"
	"strings"
	"time"

	"troupe/memory"
	"troupe/models"
)

// turn stores a batch of user messages as one turn and writes the reply to
// the last message's sink.
func (p *Pipeline) turn(ctx context.Context, batch []pendingMsg) error {
	last := batch[len(batch)-1]
	in, sink := last.in, last.sink
	release, queued, err := p.gate.enter(ctx)
	defer release()
	if err != nil {
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = sink.Notice(nctx, p.text(p.langOf(in), msgNotStored))
		return err
	}
	start := time.Now()
	st, err := p.resolve(ctx, in)
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, p.text(p.opt.Language, msgNoCard))
	}
	if err != nil {
		p.log.Error("resolve channel", "channel", in.Channel.Key(), "err", err)
		_ = sink.Notice(ctx, p.text(p.opt.Language, msgNotStored))
		return err
	}
	lang := p.language(st.card)
	if batch, err = p.refuseOversize(ctx, st, batch); err != nil || len(batch) == 0 {
		return err
	}
	last = batch[len(batch)-1]
	in, sink = last.in, last.sink
	// Most messages are new: store them first and look for the ones stored
	// before only when the unique dedup key says there are some.
	msgs := userMessages(batch, nil)
	err = p.appendTurn(ctx, &st, msgs)
	if errors.Is(err, models.ErrDuplicate) {
		var seen map[string]bool
		if seen, err = p.opt.Store.SeenDedupKeys(ctx, dedupKeys(batch)); err != nil {
			p.log.Error("dedup", "chat_id", st.chat.ID, "err", err)
			_ = sink.Notice(ctx, p.text(lang, msgNotStored))
			return err
		}
		if msgs = userMessages(batch, seen); len(msgs) == 0 {
			return p.replayedUnanswered(ctx, st, batch, sink, release)
		}
		err = p.appendTurn(ctx, &st, msgs)
	}
	if errors.Is(err, models.ErrDuplicate) {
		return nil
	}
	if err != nil {
		p.log.Error("store user message", "chat_id", st.chat.ID, "err", err)
		_ = sink.Notice(ctx, p.text(lang, msgNotStored))
		return err
	}
	head := msgs[len(msgs)-1].ID
	return p.reply(ctx, st, replyPlan{parent: head, expectHead: head, user: st.user, persona: st.persona, group: in.Channel.Group, start: start, queued: queued, release: release}, sink)
}

// replayedUnanswered writes the missing reply when a platform delivers again
// a message that was stored but never answered (a crash or a shutdown
// between storing it and storing the reply); any other duplicate is ignored.
func (p *Pipeline) replayedUnanswered(ctx context.Context, st chatState, batch []pendingMsg, sink Sink, release func()) error {
	last := batch[len(batch)-1].in
	if last.MessageID == "" || st.chat.HeadID == "" {
		return nil
	}
	head, err := p.opt.Store.Message(ctx, st.chat.HeadID)
	if err != nil || head.Role != memory.RoleUser || head.DedupKey == nil || *head.DedupKey != dedupKey(last) {
		return nil
	}
	return p.reply(ctx, st, replyPlan{parent: head.ID, expectHead: head.ID, user: st.user, persona: st.persona, group: last.Channel.Group, start: time.Now(), release: release}, sink)
}

// appendTurn stores a turn's user messages at the chat's head.
func (p *Pipeline) appendTurn(ctx context.Context, st *chatState, msgs []*models.Message) error {
	err := p.opt.Store.Append(ctx, st.chat.ID, st.chat.HeadID, st.chat.HeadID, msgs)
	if errors.Is(err, models.ErrStale) {
		// Another replica moved the head; re-read and try once more.
		if st.chat, err = p.opt.Store.Chat(ctx, st.chat.ID); err == nil {
			err = p.opt.Store.Append(ctx, st.chat.ID, st.chat.HeadID, st.chat.HeadID, msgs)
		}
	}
	return err
}

// userMessages turns a batch into messages to store, leaving out the
// platform messages in seen and repeats within the batch.
func userMessages(batch []pendingMsg, seen map[string]bool) []*models.Message {
	if seen == nil {
		seen = map[string]bool{}
	}
	var msgs []*models.Message
	for _, b := range batch {
		m := &models.Message{Role: memory.RoleUser, AuthorID: b.in.AuthorID, AuthorName: storable(b.in.AuthorName), Content: storable(b.in.Text)}
		if b.in.MessageID != "" {
			k := dedupKey(b.in)
			if seen[k] {
				continue
			}
			seen[k] = true
			m.DedupKey = &k
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// dedupKeys lists the dedup keys of a batch's platform messages.
func dedupKeys(batch []pendingMsg) []string {
	var keys []string
	for _, b := range batch {
		if b.in.MessageID != "" {
			keys = append(keys, dedupKey(b.in))
		}
	}
	return keys
}

func dedupKey(in Inbound) string { return in.Channel.Key() + ":" + in.MessageID }

// storable makes platform text fit a text column: PostgreSQL refuses NUL
// bytes and invalid UTF-8, so NULs go and invalid bytes become U+FFFD.
func storable(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}

// replyPlan says where a reply goes on the chat's tree.
type replyPlan struct {
	// parent is the message the reply answers; the prompt's branch ends there.
	parent string
	// expectHead is the chat's head when the reply is stored.
	expectHead string
	user       string
	persona    string
	group      bool
	// start is when the pipeline began the turn's own work, after queued
	// in line for a slot of the gate.
	start  time.Time
	queued time.Duration
	// release gives back the turn's gate slot; nil when it holds none.
	release func()
}

// reply writes the model's answer to the branch ending at rp.parent.
func (p *Pipeline) reply(ctx context.Context, st chatState, rp replyPlan, sink Sink) error {
	lang := p.language(st.card)
	br, err := p.opt.Store.LoadBranch(ctx, rp.parent)
	if err != nil {
		p.log.Error("load branch", "chat_id", st.chat.ID, "err", err)
		_ = sink.Notice(ctx, p.text(lang, msgInternal))
		return err
	}
	prompt, urgent, err := p.prompt(ctx, st, br, rp)
	if err != nil {
		p.opt.Observer.TurnObserved(TurnStats{Platform: st.channel.Platform, Outcome: "too_large", Pipeline: time.Since(rp.start)})
		p.log.Warn("prompt too large", "chat_id", st.chat.ID, "err", err)
		p.afterTurn(ctx, st, TurnDone{ChatID: st.chat.ID, CardID: st.card.ID, SpaceID: st.chat.SpaceID, CompactionDue: true, Urgent: true})
		return sink.Notice(ctx, p.text(lang, msgTooLarge))
	}
	if prompt.shortened {
		_ = sink.Notice(ctx, p.text(lang, msgLeftOut))
	}
	// The slot covers database work only: platform calls (typing, the
	// reply) and the model are made without it.
	pipelineTime := time.Since(rp.start)
	if rp.release != nil {
		rp.release()
	}
	sink.Typing(ctx)
	var acc strings.Builder
	modelStart := time.Now()
	res, err := p.opt.Model.Stream(ctx, ModelRequest{Messages: prompt.messages, MaxTokens: p.opt.MaxReplyTokens}, func(delta string) error {
		acc.WriteString(delta)
		if uerr := sink.Update(ctx, acc.String()); uerr != nil {
			p.log.Warn("stream update", "chat_id", st.chat.ID, "err", uerr)
		}
		return nil
	})
	modelDone := time.Now()
	releaseStore := func() {}
	if rp.release != nil && err == nil {
		// Storing the reply is pipeline work too: it waits for a slot.
		var waited time.Duration
		releaseStore, waited, _ = p.gate.enter(ctx)
		defer releaseStore()
		rp.queued += waited
	}
	afterModel := time.Now()
	text := strings.TrimSpace(res.Text)
	if err == nil && text == "" {
		err = &ModelError{Kind: "empty"}
	}
	if err != nil && ctx.Err() != nil {
		// Shutting down (or the platform gave up): the message is kept and
		// the user hears why the reply stopped.
		p.opt.Observer.TurnObserved(TurnStats{Platform: st.channel.Platform, Outcome: "interrupted", Pipeline: pipelineTime})
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = sink.Notice(nctx, p.text(lang, msgInterrupted))
		return nil
	}
	if err != nil {
		p.opt.Observer.TurnObserved(TurnStats{Platform: st.channel.Platform, Outcome: "failed", Pipeline: pipelineTime, Model: modelDone.Sub(modelStart), PromptMessages: len(prompt.messages)})
		p.log.Warn("model call failed", "chat_id", st.chat.ID, "err", err)
		_ = sink.Notice(ctx, p.modelErrorText(lang, err))
		// Unanswered messages pile up while the model fails: they are
		// beats of their own to compaction, which may now be owed.
		if plan := memory.PlanCompaction(memory.TurnsOf(br.Uncovered), p.compactParams(), false); plan.Due || urgent {
			p.afterTurn(ctx, st, TurnDone{ChatID: st.chat.ID, CardID: st.card.ID, SpaceID: st.chat.SpaceID, CompactionDue: true, Urgent: urgent})
		}
		return nil
	}
	msg := &models.Message{Role: memory.RoleAssistant, AuthorName: st.card.Name, Content: storable(text),
		PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens}
	if err := p.opt.Store.Append(ctx, st.chat.ID, rp.expectHead, rp.parent, []*models.Message{msg}); err != nil {
		p.log.Error("store reply", "chat_id", st.chat.ID, "err", err)
		_ = sink.Notice(ctx, p.text(lang, msgInternal))
		return err
	}
	stored := time.Now()
	releaseStore()
	if err := sink.Finish(ctx, text); err != nil {
		p.opt.Observer.SendFailed(st.channel.Platform)
		p.log.Error("deliver reply", "chat_id", st.chat.ID, "channel", st.channel.ID, "err", err)
	}
	delivered := time.Now()
	if p.opt.Tokens != nil && res.PromptTokens > 0 {
		p.opt.Tokens.Observe(st.chat.ID, prompt.estimated, res.PromptTokens)
	}
	turns := append(memory.TurnsOf(br.Uncovered), memory.Turn{ID: msg.ID, Role: memory.RoleAssistant, Content: text})
	plan := memory.PlanCompaction(turns, p.compactParams(), false)
	// The pipeline's own time: up to the model call, and from the model's
	// answer to the stored reply plus the bookkeeping after delivery (the
	// delivery itself is the platform's time).
	own := pipelineTime + stored.Sub(afterModel) + time.Since(delivered)
	p.opt.Observer.TurnObserved(TurnStats{Platform: st.channel.Platform, Outcome: "answered", Pipeline: own, Queued: rp.queued, Model: modelDone.Sub(modelStart),
		PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, PromptMessages: len(prompt.messages)})
	p.afterTurn(ctx, st, TurnDone{ChatID: st.chat.ID, CardID: st.card.ID, SpaceID: st.chat.SpaceID, CompactionDue: plan.Due || urgent, Urgent: urgent})
	return nil
}

// afterTurn tells the job queue what the turn left owed.
func (p *Pipeline) afterTurn(ctx context.Context, st chatState, td TurnDone) {
	if p.opt.Jobs == nil {
		return
	}
	if err := p.opt.Jobs.AfterTurn(ctx, td); err != nil {
		// The sweeper finds owed work again; the turn itself is done.
		p.log.Warn("enqueue after turn", "chat_id", st.chat.ID, "err", err)
	}
}

func (p *Pipeline) compactParams() memory.CompactParams {
	m := p.opt.MemoryConfig
	return memory.CompactParams{Keep: m.Keep, Period: m.Period, MinCutChars: m.MinCutChars, ManualMinCutChars: m.ManualMinCutChars}
}

func (p *Pipeline) modelErrorText(lang string, err error) string {
	var me *ModelError
	if errors.As(err, &me) {
		switch me.Kind {
		case "timeout":
			return p.text(lang, msgModelTimeout)
		case "rate_limited":
			return p.text(lang, msgModelRateLimited)
		case "auth":
			return p.text(lang, msgModelAuth)
		case "empty":
			return p.text(lang, msgEmpty)
		}
		return p.text(lang, msgModelFailed, me.Kind)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return p.text(lang, msgModelTimeout)
	}
	return p.text(lang, msgModelFailed, "error")
}
