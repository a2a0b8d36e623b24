package bot

import (
	"context"
	"errors"

	"strings"
	"time"

	"troupe/memory"
	"troupe/models"
)

// cmdForget asks to confirm, then deletes the channel's current chat (or an
// earlier chat of the channel named by id) and everything only it supports.
func (p *Pipeline) cmdForget(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := p.langOf(in)
	if !in.CanManage {
		return sink.Notice(ctx, p.text(lang, msgNotAllowed))
	}
	if p.opt.Memory == nil {
		return sink.Notice(ctx, p.text(lang, msgInternal))
	}
	ch, err := p.opt.Store.Channel(ctx, in.Channel.Key())
	if errors.Is(err, models.ErrNotFound) {
		return sink.Notice(ctx, p.text(lang, msgNothingToForget))
	}
	if err != nil {
		return p.internal(ctx, sink, "forget", err)
	}
	chatID := strings.TrimSpace(args)
	if chatID == "" {
		chatID = ch.CurrentChatID
	}
	chat, err := p.opt.Store.Chat(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !forgettableHere(chat, in)) {
		if _, terr := p.opt.Store.Tombstone(ctx, chatID); terr == nil {
			return sink.Notice(ctx, p.text(lang, msgAlreadyForgotten))
		}
		return sink.Notice(ctx, p.text(lang, msgNoSuchChat, chatID))
	}
	if err != nil {
		return p.internal(ctx, sink, "forget", err)
	}
	text := p.text(lang, msgForgetQuestion, chat.Name, chat.ID)
	return p.ask(ctx, in, text, sink, question{Action: actionForget, ChatID: chat.ID})
}

// forgettableHere reports whether /forget run in in's channel may delete
// chat: one of this channel's chats, in the space the channel is in now.
// A chat the channel played before it moved to another space (made
// private or public) belongs to the old space's audience, and a GM here
// may not be one of theirs.
func forgettableHere(chat models.Chat, in Inbound) bool {
	return chat.ChannelID == in.Channel.Key() && chat.SpaceID == in.Channel.Space()
}

// forget runs a confirmed /forget.
func (p *Pipeline) forget(ctx context.Context, in Inbound, chat models.Chat, sink Sink) error {
	lang := p.langOf(in)
	if !forgettableHere(chat, in) {
		return sink.Notice(ctx, p.text(lang, msgNoSuchChat, chat.ID))
	}
	var wasCurrent bool
	err := p.withLane(ctx, in, func() error {
		ch, err := p.opt.Store.Channel(ctx, in.Channel.Key())
		if err != nil {
			return err
		}
		wasCurrent = ch.CurrentChatID == chat.ID
		f, err := p.opt.Memory.ForgetChat(ctx, chat.ID)
		if err != nil {
			return err
		}
		if p.opt.Jobs != nil {
			// Every card the chat cast lost it from its memory in the space.
			for _, card := range f.Cards {
				if err := p.opt.Jobs.MemoryChanged(ctx, card, f.SpaceID); err != nil {
					// The sweeper finds the owed consolidation.
					p.log.Warn("enqueue consolidation after forget", "chat_id", chat.ID, "card_id", card, "err", err)
				}
			}
		}
		return nil
	})
	if errors.Is(err, models.ErrNotFound) {
		return sink.Notice(ctx, p.text(lang, msgAlreadyForgotten))
	}
	if err != nil {
		return p.internal(ctx, sink, "forget", err)
	}
	p.opt.Observer.Forgotten(in.Channel.Platform)
	if err := sink.Notice(ctx, p.text(lang, msgForgotten, chat.Name)); err != nil {
		return err
	}
	if !wasCurrent {
		return nil
	}
	// The channel goes on with a fresh chat and the greeting.
	return p.Greet(ctx, in, sink)
}

// cmdMemory shows the resident summary as it is injected, with counts; the
// admin subcommands "rebuild" and "delete-recap CHAT" take the hard path.
func (p *Pipeline) cmdMemory(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := p.langOf(in)
	if p.opt.Memory == nil {
		return sink.Notice(ctx, p.text(lang, msgInternal))
	}
	cs, ok, err := p.commandChat(ctx, in, sink, lang, "memory")
	if !ok {
		return err
	}
	sub, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	switch strings.ToLower(sub) {
	case "":
	case "delete-recap":
		if !in.CanManage {
			return sink.Notice(ctx, p.text(lang, msgNotAllowed))
		}
		chat, err := p.opt.Store.Chat(ctx, strings.TrimSpace(rest))
		if err != nil || chat.CardID != cs.card.ID || chat.SpaceID != cs.chat.SpaceID {
			return sink.Notice(ctx, p.text(lang, msgNoSuchChat, strings.TrimSpace(rest)))
		}
		// In a scene every cast card's recap of the chat goes.
		keys, err := p.opt.Memory.DeleteRecap(ctx, chat.ID, "")
		if err != nil {
			if errors.Is(err, models.ErrNotFound) {
				return sink.Notice(ctx, p.text(lang, msgNoSuchChat, chat.ID))
			}
			return p.internal(ctx, sink, "delete recap", err)
		}
		for _, k := range keys {
			if p.opt.Jobs != nil {
				_ = p.opt.Jobs.MemoryChanged(ctx, k.CardID, k.SpaceID)
			}
		}
		return sink.Notice(ctx, p.text(lang, msgRecapDeleted, chat.ID))
	default:
		return sink.Notice(ctx, "/memory [delete-recap CHAT-ID]")
	}
	rep, err := p.opt.Memory.Report(ctx, cs.card.ID, cs.chat.SpaceID)
	if err != nil {
		return p.internal(ctx, sink, "memory report", err)
	}
	var b strings.Builder
	if rep.Resident == "" {
		b.WriteString(p.text(lang, msgNoMemory, cs.card.Name))
	} else {
		b.WriteString(rep.Resident)
	}
	b.WriteString("\n\n")
	last := "—"
	if !rep.LastConsolidation.IsZero() {
		last = rep.LastConsolidation.UTC().Format(time.RFC3339)
	}
	b.WriteString(p.text(lang, msgMemoryCounts, rep.Merged, rep.Owed, last))
	p.writeRecord(ctx, &b, lang, cs)
	p.writeBeliefs(ctx, &b, lang, cs)
	writeFailures(&b, rep.Failures, func(key msgKey, args ...any) string { return p.text(lang, key, args...) })
	return sink.Notice(ctx, b.String())
}

// maxShownFailures bounds the failing jobs /memory lists.
const maxShownFailures = 5

// writeFailures lists the memory work that failed and stays owed: what, how
// often in a row, when last, when it is tried next, and why.
func writeFailures(b *strings.Builder, fs []memory.JobFailure, text func(msgKey, ...any) string) {
	kinds := map[string]msgKey{memory.KindCompact: msgJobCompact, memory.KindRecap: msgJobRecap, memory.KindConsolidate: msgJobConsolidate}
	for i, f := range fs {
		if i == maxShownFailures {
			b.WriteString("\n…")
			break
		}
		what := f.Kind
		if k, ok := kinds[f.Kind]; ok {
			what = text(k)
		}
		next := text(msgNextTrySweep)
		if !f.NextTry.IsZero() {
			next = f.NextTry.UTC().Format(time.RFC3339)
		}
		b.WriteString("\n")
		b.WriteString(text(msgMemoryFailure, what, f.Key, f.Attempts, f.At.UTC().Format(time.RFC3339), next, truncateRunes(f.Reason, 300)))
	}
}
