package bot

import (
	"context"
	"errors"
	"strings"
	"time"

	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
)

// turn stores a batch of user messages as one turn and writes the reply to
// the last message's sink.
func (p *Pipeline) turn(ctx context.Context, batch []pendingMsg) error {
	lead := leadOf(batch)
	in, sink := lead.in, lead.sink
	release, queued, err := p.gate.enter(ctx)
	defer release()
	if err != nil {
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = sink.Notice(nctx, p.text(p.langOf(in), msgNotStored))
		return err
	}
	start := time.Now()
	if resuming(batch) {
		// A resume's channel comes from rows read before it was queued:
		// the space it names is where the channel was then. The channel
		// stays where it is now instead of moving back.
		if ch, err := p.opt.Store.Channel(ctx, in.Channel.Key()); err == nil {
			if now, ok := refInSpace(in.Channel, ch.SpaceID); ok {
				in.Channel = now
			}
		}
	}
	cs, err := p.resolve(ctx, in)
	if errors.Is(err, ErrNoCard) {
		// Refused with the notice: the messages do not wait for a card.
		if rows, ierr := p.opt.Store.Inbox(ctx, in.Channel.Key()); ierr == nil {
			_ = p.opt.Store.DropInbox(ctx, inboxIDs(rows))
		}
		return sink.Notice(ctx, p.text(p.opt.Language, msgNoCard))
	}
	if err != nil {
		p.log.Error("resolve channel", "channel", in.Channel.Key(), "err", err)
		_ = sink.Notice(ctx, p.text(p.opt.Language, msgNotStored))
		return err
	}
	lang := p.language(cs.card)
	st, err := p.storeInbox(ctx, &cs, in, sink)
	if err != nil {
		p.log.Error("store user message", "chat_id", cs.chat.ID, "err", err)
		_ = sink.Notice(ctx, p.text(lang, msgNotStored))
		return err
	}
	if st.head == "" && st.refused {
		return nil // every waiting message was refused, each with a notice
	}
	if st.head == "" {
		return p.replayedUnanswered(ctx, cs, batch, sink, release)
	}
	return p.replies(ctx, cs, st.rt, replyPlan{parent: st.head, expectHead: st.head, user: cs.user, persona: cs.persona, group: in.Channel.Group, start: start, queued: queued, release: release,
		stored: st.stored, ahead: st.ahead, images: st.images}, sink)
}

// storedTurn is what storeInbox stored and who answers.
type storedTurn struct {
	// head is the new head; "" when nothing was left to store.
	head string
	// stored are the user messages stored, ending at head.
	stored []*models.Message
	// refused: some waiting messages were too long for any prompt.
	refused bool
	rt      route
	// ahead are the reads of the reply's prompt started beside the store
	// (readBeside); nil when none were.
	ahead *aheadReads
	// images are the pictures of the stored messages, as data URLs.
	images []string
}

// storeInbox stores the channel's waiting messages (cs.inbox, those of
// every process) in its chat as one turn's user messages, and returns the
// new head, the messages stored and who answers; "" when none was left to
// store: another process stored them first, all had been stored before
// under their dedup keys, or (refused) those left were too long for any
// prompt and were refused, each told on sink. Nudges (messages of mentions
// only) are not stored: when they were all there was, the head is the
// chat's head as it was. The reads of the reply's prompt that need not wait
// for the messages run beside the store (readBeside).
func (p *Pipeline) storeInbox(ctx context.Context, cs *chatState, in Inbound, sink Sink) (storedTurn, error) {
	var st storedTurn
	for attempt := 0; attempt < 4; attempt++ {
		n, err := p.refuseOversize(ctx, cs, in.Channel.Group, sink)
		if err != nil {
			return storedTurn{}, err
		}
		st.refused = st.refused || n > 0
		if len(cs.inbox) == 0 {
			return storedTurn{refused: st.refused}, nil
		}
		st.rt = routeInbox(*cs, cs.inbox)
		var lines []models.InboxMessage
		for i, r := range cs.inbox {
			if !st.rt.Nudge[i] {
				lines = append(lines, r)
			}
		}
		msgs, _ := inboxMessages(lines)
		ids := inboxIDs(cs.inbox)
		if len(msgs) == 0 {
			// Only nudges: the named characters speak, nothing is stored.
			if err := p.opt.Store.DropInbox(ctx, ids); err != nil {
				return storedTurn{}, err
			}
			return storedTurn{head: cs.chat.HeadID, rt: st.rt}, nil
		}
		ahead := p.readBeside(ctx, *cs, st.rt, msgs)
		err = p.opt.Store.ConsumeTurn(ctx, cs.chat.ID, cs.chat.HeadID, msgs, ids, p.turnRecord(*cs, msgs, true, in.AuthorID))
		if err != nil {
			ahead.stop()
		}
		switch {
		case err == nil:
			images := p.takeHeld(cs.chat.ID, lines, msgs)
			return storedTurn{head: msgs[len(msgs)-1].ID, stored: msgs, rt: st.rt, ahead: ahead, images: images}, nil
		case errors.Is(err, models.ErrDuplicate):
			// A platform delivered again messages stored before: their
			// rows go, the rest are stored.
			if cs.inbox, err = p.dropStored(ctx, cs.inbox); err != nil {
				return storedTurn{}, err
			}
		case errors.Is(err, models.ErrStale), errors.Is(err, models.ErrNotFound):
			// Another process moved the head or stored these messages
			// (or the chat was forgotten): read the channel again.
			if *cs, err = p.resolve(ctx, in); err != nil {
				return storedTurn{}, err
			}
		default:
			return storedTurn{}, err
		}
	}
	return storedTurn{}, models.ErrStale
}

// dropStored deletes the inbox rows whose dedup keys are already stored
// in a chat and returns the others.
func (p *Pipeline) dropStored(ctx context.Context, rows []models.InboxMessage) ([]models.InboxMessage, error) {
	var keys []string
	for _, r := range rows {
		if r.DedupKey != nil {
			keys = append(keys, *r.DedupKey)
		}
	}
	seen, err := p.opt.Store.SeenDedupKeys(ctx, keys)
	if err != nil {
		return nil, err
	}
	var keep []models.InboxMessage
	var drop []string
	for _, r := range rows {
		if r.DedupKey != nil && seen[*r.DedupKey] {
			drop = append(drop, r.ID)
			continue
		}
		keep = append(keep, r)
	}
	return keep, p.opt.Store.DropInbox(ctx, drop)
}

// replayedUnanswered writes the missing reply when the chat ends on a user
// message that was stored but never answered (a crash or a shutdown between
// storing it and storing the reply): when a platform delivers that message
// again, or when Resume asks. Any other duplicate is ignored.
func (p *Pipeline) replayedUnanswered(ctx context.Context, cs chatState, batch []pendingMsg, sink Sink, release func()) error {
	lead, answerHead := leadOf(batch), false
	for _, b := range batch {
		answerHead = answerHead || b.answerHead
	}
	if cs.chat.HeadID == "" || (!answerHead && lead.in.MessageID == "") {
		return nil
	}
	head, err := p.opt.Store.Message(ctx, cs.chat.HeadID)
	if err != nil || head.Role != prompt.RoleUser || head.WhisperTo != "" {
		// An unanswered whisper waits for its writer's /regen: answered
		// here it would reach the channel.
		return nil
	}
	if !answerHead && (head.DedupKey == nil || *head.DedupKey != dedupKey(lead.in)) {
		return nil
	}
	rt := routeTurn(cs.channel.Platform, []routeText{{Text: head.Content}}, cs.routeCast(), cs.lastSpeakerName())
	return p.replies(ctx, cs, rt, replyPlan{parent: head.ID, expectHead: head.ID, user: cs.user, persona: cs.persona, group: lead.in.Channel.Group, start: time.Now(), release: release}, sink)
}

// inboxMessages turns waiting messages into the messages to store, and
// lists their rows.
func inboxMessages(rows []models.InboxMessage) (msgs []*models.Message, ids []string) {
	for _, r := range rows {
		msgs = append(msgs, &models.Message{Role: prompt.RoleUser, AuthorID: r.AuthorID, AuthorName: r.AuthorName, Content: r.Content, DedupKey: r.DedupKey})
	}
	return msgs, inboxIDs(rows)
}

func inboxIDs(rows []models.InboxMessage) []string {
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
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
	// whisper, for the answer to a whisper, names the only two who
	// perceive it.
	whisper []string
	// stored are the user messages the turn stored, ending at parent; nil
	// when it stored none.
	stored []*models.Message
	// ahead are the reads started beside the store (readBeside), for the
	// first reply; nil when none were.
	ahead *aheadReads
	// spoken collects the replies to speak once all are written (replies);
	// nil queues each at once.
	spoken *[]speech
	// images are the pictures of the messages the turn stored (data
	// URLs), sent with each reply of that turn only.
	images []string
}

// replyOne writes the answer of cs's speaking member to the branch ending
// at rp.parent and returns the stored reply's id ("" when none was stored:
// the user heard why).
func (p *Pipeline) replyOne(ctx context.Context, cs chatState, rp replyPlan, sink Sink) (string, error) {
	lang := p.language(cs.card)
	if p.overBudget(ctx, cs, sink) {
		return "", nil
	}
	// What does not need the branch is read while the branch is.
	pre := p.readAhead(ctx, cs, rp)
	br, err := p.loadBranch(ctx, cs, rp, pre.branch)
	if err != nil {
		pre.recall.stop()
		p.log.Error("load branch", "chat_id", cs.chat.ID, "err", err)
		_ = sink.Notice(ctx, p.text(lang, msgInternal))
		return "", err
	}
	built, urgent, err := p.prompt(ctx, cs, br, rp, pre)
	if err != nil {
		p.opt.Observer.TurnObserved(TurnStats{Platform: cs.channel.Platform, Outcome: "too_large", Pipeline: time.Since(rp.start)})
		p.log.Warn("prompt too large", "chat_id", cs.chat.ID, "err", err)
		p.afterTurn(ctx, cs, TurnDone{ChatID: cs.chat.ID, CardID: cs.chat.CardID, SpaceID: cs.chat.SpaceID, CompactionDue: true, Urgent: true})
		return "", sink.Notice(ctx, p.text(lang, msgTooLarge))
	}
	if built.shortened {
		_ = sink.Notice(ctx, p.text(lang, msgLeftOut))
	}
	// The slot covers database work only: platform calls (typing, the
	// reply) and the model are made without it.
	pipelineTime := time.Since(rp.start)
	if rp.release != nil {
		rp.release()
	}
	// The recall block is kept while the model answers: it belongs to the
	// new message, stored already, and the turn ends only once it is
	// written, so the chat's next turn finds it.
	defer p.keepRecall(ctx, built.keep)()
	speak(ctx, sink, cs.card, cs.scene())
	sink.Typing(ctx)
	var acc strings.Builder
	charged := p.chargePrompt(cs, built)
	modelStart := time.Now()
	res, err := p.opt.Model.Stream(ctx, ModelRequest{Messages: built.messages, MaxTokens: p.opt.MaxReplyTokens, Images: rp.images}, func(delta string) error {
		acc.WriteString(delta)
		if uerr := sink.Update(ctx, acc.String()); uerr != nil {
			p.log.Warn("stream update", "chat_id", cs.chat.ID, "err", uerr)
		}
		return nil
	})
	modelDone := time.Now()
	p.settleCharge(cs, charged, res)
	releaseStore := func() {}
	if rp.release != nil && err == nil {
		// Storing the reply is pipeline work too: it waits for a slot.
		var waited time.Duration
		releaseStore, waited, _ = p.gate.enterToFinish(ctx)
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
		p.opt.Observer.TurnObserved(TurnStats{Platform: cs.channel.Platform, Outcome: "interrupted", Pipeline: pipelineTime})
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = sink.Notice(nctx, p.text(lang, msgInterrupted))
		return "", nil
	}
	if err != nil {
		p.opt.Observer.TurnObserved(TurnStats{Platform: cs.channel.Platform, Outcome: "failed", Pipeline: pipelineTime, Model: modelDone.Sub(modelStart), PromptMessages: len(built.messages)})
		p.warnFailure("model call failed", err, "chat_id", cs.chat.ID)
		if rp.whisper != nil {
			// Only the writer can retry a whisper, and privately: the
			// notice says so instead of inviting anyone's /regen.
			_ = sink.Notice(ctx, p.stext(lang, msgWhisperFailed, cs.speakerName(), modelErrorKind(err)))
		} else {
			_ = sink.Notice(ctx, p.modelErrorText(lang, err))
		}
		// Unanswered messages pile up while the model fails: they are
		// beats of their own to compaction, which may now be owed.
		if plan := memory.PlanCompaction(memory.TurnsOf(br.Uncovered), p.compactParams(), false); plan.Due || urgent {
			p.afterTurn(ctx, cs, TurnDone{ChatID: cs.chat.ID, CardID: cs.chat.CardID, SpaceID: cs.chat.SpaceID, CompactionDue: true, Urgent: urgent})
		}
		return "", nil
	}
	msg := &models.Message{Role: prompt.RoleAssistant, AuthorName: cs.card.Name, Content: storable(text),
		PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, SpeakerCardID: cs.speakerCard()}
	if cs.scene() {
		msg.AuthorName = cs.speakerName()
	}
	reply := []*models.Message{msg}
	rec := p.turnRecord(cs, reply, false, "")
	if rp.whisper != nil {
		rec.Present, rec.Whisper = rp.whisper, rp.whisper
	}
	if err := p.opt.Store.AppendTurn(ctx, cs.chat.ID, rp.expectHead, rp.parent, reply, rec); err != nil {
		p.log.Error("store reply", "chat_id", cs.chat.ID, "err", err)
		_ = sink.Notice(ctx, p.text(lang, msgInternal))
		return "", err
	}
	stored := time.Now()
	releaseStore()
	p.writeTrace(built.trace, msg.ID, res.PromptTokens)
	if rp.whisper == nil {
		p.offerReply(ctx, sink, *msg)
	}
	if err := sink.Finish(ctx, text); err != nil {
		p.opt.Observer.SendFailed(cs.channel.Platform)
		p.log.Error("deliver reply", "chat_id", cs.chat.ID, "channel", cs.channel.ID, "err", err)
	} else if rp.whisper == nil {
		// A whisper's answer is never spoken: its file would reach the
		// channel.
		p.speakReply(ctx, cs, rp, text, sink)
	}
	delivered := time.Now()
	if p.opt.Tokens != nil && res.PromptTokens > 0 {
		p.opt.Tokens.Observe(cs.chat.ID, built.estimated, res.PromptTokens)
	}
	turns := append(memory.TurnsOf(br.Uncovered), prompt.Turn{ID: msg.ID, Role: prompt.RoleAssistant, Content: text})
	plan := memory.PlanCompaction(turns, p.compactParams(), false)
	// The pipeline's own time: up to the model call, and from the model's
	// answer to the stored reply plus the bookkeeping after delivery (the
	// delivery itself is the platform's time).
	own := pipelineTime + stored.Sub(afterModel) + time.Since(delivered)
	p.opt.Observer.TurnObserved(TurnStats{Platform: cs.channel.Platform, Outcome: "answered", Pipeline: own, Queued: rp.queued, Model: modelDone.Sub(modelStart),
		PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, PromptMessages: len(built.messages), Recall: built.recall})
	p.afterTurn(ctx, cs, TurnDone{ChatID: cs.chat.ID, CardID: cs.chat.CardID, SpaceID: cs.chat.SpaceID, CompactionDue: plan.Due || urgent, Urgent: urgent})
	p.recordOwed(ctx, cs)
	return msg.ID, nil
}

// afterTurn tells the job queue what the turn left owed.
func (p *Pipeline) afterTurn(ctx context.Context, cs chatState, td TurnDone) {
	if p.opt.Jobs == nil {
		return
	}
	if err := p.opt.Jobs.AfterTurn(ctx, td); err != nil {
		// The sweeper finds owed work again; the turn itself is done.
		p.log.Warn("enqueue after turn", "chat_id", cs.chat.ID, "err", err)
	}
}

func (p *Pipeline) compactParams() memory.CompactParams {
	m := p.opt.MemoryConfig
	return memory.CompactParams{Keep: m.Keep, Period: m.Period, MinCutChars: m.MinCutChars, ManualMinCutChars: m.ManualMinCutChars}
}

// modelErrorKind names what went wrong with a model call, briefly.
func modelErrorKind(err error) string {
	var me *ModelError
	if errors.As(err, &me) {
		return me.Kind
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "error"
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
