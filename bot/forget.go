package bot

import (
	"context"
	"errors"
	"strings"

	"troupe/models"
)

// cmdForget asks to confirm, then deletes the channel's current chat (or an
// earlier chat of the channel named by id) and everything only it supports.
func (cm *commands) cmdForget(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := cm.p.langOf(in)
	if !in.CanManage {
		return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
	}
	if cm.p.opt.Memory == nil {
		return sink.Notice(ctx, cm.p.text(lang, msgInternal))
	}
	ch, err := cm.store.Channel(ctx, in.Channel.Key())
	if errors.Is(err, models.ErrNotFound) {
		return sink.Notice(ctx, cm.p.text(lang, msgNothingToForget))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "forget", err)
	}
	chatID := strings.TrimSpace(args)
	if chatID == "" {
		chatID = ch.CurrentChatID
	}
	chat, err := cm.store.Chat(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !forgettableHere(chat, in)) {
		if _, terr := cm.store.Tombstone(ctx, chatID); terr == nil {
			return sink.Notice(ctx, cm.p.text(lang, msgAlreadyForgotten))
		}
		return sink.Notice(ctx, cm.p.text(lang, msgNoSuchChat, chatID))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "forget", err)
	}
	text := cm.p.text(lang, msgForgetQuestion, chat.Name, chat.ID)
	return cm.ask(ctx, in, text, sink, question{Action: actionForget, ChatID: chat.ID})
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
func (cm *commands) forget(ctx context.Context, in Inbound, chat models.Chat, sink Sink) error {
	lang := cm.p.langOf(in)
	if !forgettableHere(chat, in) {
		return sink.Notice(ctx, cm.p.text(lang, msgNoSuchChat, chat.ID))
	}
	var wasCurrent bool
	err := cm.p.withLane(ctx, in, func() error {
		ch, err := cm.store.Channel(ctx, in.Channel.Key())
		if err != nil {
			return err
		}
		wasCurrent = ch.CurrentChatID == chat.ID
		f, err := cm.p.opt.Memory.ForgetChat(ctx, chat.ID)
		if err != nil {
			return err
		}
		if cm.p.opt.Jobs != nil {
			// Every card the chat cast lost it from its memory in the space.
			for _, card := range f.Cards {
				if err := cm.p.opt.Jobs.MemoryChanged(ctx, card, f.SpaceID); err != nil {
					// The sweeper finds the owed consolidation.
					cm.log.Warn("enqueue consolidation after forget", "chat_id", chat.ID, "card_id", card, "err", err)
				}
			}
		}
		return nil
	})
	if errors.Is(err, models.ErrNotFound) {
		return sink.Notice(ctx, cm.p.text(lang, msgAlreadyForgotten))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "forget", err)
	}
	cm.p.opt.Observer.Forgotten(in.Channel.Platform)
	if err := sink.Notice(ctx, cm.p.text(lang, msgForgotten, chat.Name)); err != nil {
		return err
	}
	if !wasCurrent {
		return nil
	}
	// The channel goes on with a fresh chat and the greeting.
	return cm.p.Greet(ctx, in, sink)
}

// cmdMemory shows the character's memory: in a group, to the asker alone
// and only what this chat's prompts may hold (groupMemory); elsewhere the
// owner's whole report (ownerMemory). The admin subcommand "delete-recap
// CHAT" takes the hard path.
func (cm *commands) cmdMemory(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := cm.p.langOf(in)
	if cm.p.opt.Memory == nil {
		return sink.Notice(ctx, cm.p.text(lang, msgInternal))
	}
	sub, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	if _, private := sink.(Confiding); sub == "" && in.Channel.Group && !private {
		// Nowhere to show it to the asker alone: nothing of it in the group.
		return refuse(ctx, sink, cm.mtext(lang, msgMemoryAskPrivately))
	}
	cs, ok, err := cm.commandChat(ctx, in, sink, lang, "memory")
	if !ok {
		return err
	}
	switch strings.ToLower(sub) {
	case "":
	case "delete-recap":
		if !in.CanManage {
			return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
		}
		chat, err := cm.store.Chat(ctx, strings.TrimSpace(rest))
		if err != nil || chat.CardID != cs.card.ID || chat.SpaceID != cs.chat.SpaceID {
			return sink.Notice(ctx, cm.p.text(lang, msgNoSuchChat, strings.TrimSpace(rest)))
		}
		// In a scene every cast card's recap of the chat goes.
		keys, err := cm.p.opt.Memory.DeleteRecap(ctx, chat.ID, "")
		if err != nil {
			if errors.Is(err, models.ErrNotFound) {
				return sink.Notice(ctx, cm.p.text(lang, msgNoSuchChat, chat.ID))
			}
			return cm.p.internal(ctx, sink, "delete recap", err)
		}
		for _, k := range keys {
			if cm.p.opt.Jobs != nil {
				_ = cm.p.opt.Jobs.MemoryChanged(ctx, k.CardID, k.SpaceID)
			}
		}
		return sink.Notice(ctx, cm.p.text(lang, msgRecapDeleted, chat.ID))
	default:
		return sink.Notice(ctx, "/memory [delete-recap CHAT-ID]")
	}
	if in.Channel.Group {
		return cm.groupMemory(ctx, lang, cs, sink)
	}
	return cm.ownerMemory(ctx, lang, cs, sink)
}
