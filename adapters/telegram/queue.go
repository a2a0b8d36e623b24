package telegram

import (
	"context"
	"errors"
	"strings"
	"time"

	"troupe/bot"
)

// dispatch hands ev to the engine in its chat's order (inOrder) and
// returns at once: it is called in the order updates arrived, and each
// chat's events reach Submit in that order, one after the other, so a
// command or a button press acts after the messages sent before it. What
// an event waits for before Submit (a permission check, a notice under
// flood control) holds up its own chat only. For a message it returns a
// channel that yields its receipt, which tells when the message is stored,
// and is closed without one when the message was left pending at shutdown;
// nil otherwise. The pipeline applies the per-user limits (rate and length)
// that every platform shares, commands and buttons included.
func (a *Adapter) dispatch(ev event) <-chan bot.Receipt {
	defer a.recovered(ev)
	ctx := a.work
	switch ev.kind {
	case evNotice:
		a.spawn(func() {
			if err := a.notice(ctx, ev.chatID, ev.replyTo, ev.notice); err != nil {
				a.log.Warn("send notice", "chat_id", ev.chatID, "err", err)
			}
			a.finish(ev)
		})
	case evText:
		rcs := make(chan bot.Receipt, 1)
		a.inOrder(ev.chatID, func() {
			defer close(rcs)
			defer a.recovered(ev)
			if ctx.Err() != nil {
				return // stays pending for the next start
			}
			s := a.newSink(ev)
			rc := a.p.Submit(ctx, bot.Event{Kind: bot.EventMessage, In: ev.in}, s)
			a.settleAfter(ev, rc, s, "turn failed")
			rcs <- rc
		})
		return rcs
	case evCommand:
		a.inOrder(ev.chatID, func() {
			defer a.recovered(ev)
			if ctx.Err() != nil {
				return
			}
			a.command(ctx, ev)
		})
	case evCallback:
		// Answer at once: the client shows a spinner until then, and
		// Telegram refuses answers that come late.
		a.spawn(func() {
			if err := a.answerCallback(ctx, ev.callbackID, ev.notice); err != nil {
				a.log.Warn("answer callback", "chat_id", ev.chatID, "err", err)
			}
		})
		if ev.notice != "" {
			a.finish(ev)
			break
		}
		a.inOrder(ev.chatID, func() {
			defer a.recovered(ev)
			if ctx.Err() != nil {
				return
			}
			a.press(ctx, ev)
		})
	}
	return nil
}

// command submits a slash command; in a group it first asks whether its
// author may manage the group.
func (a *Adapter) command(ctx context.Context, ev event) {
	in := ev.in
	if in.Channel.Group {
		in.CanManage = a.canManage(ctx, ev.chatID, ev.userID)
	}
	s := a.newSink(ev)
	if in.Channel.Group && private(ev.cmd) {
		s = a.newPrivateSink(ev)
		if ev.cmd.Name == "whisper" {
			a.spawn(func() { a.withdraw(ctx, ev) })
		}
	}
	a.settleAfter(ev, a.p.Submit(ctx, bot.Event{Kind: bot.EventCommand, In: in, Command: ev.cmd}, s), s, "command "+ev.cmd.Name+" failed")
}

// press submits an inline button press.
func (a *Adapter) press(ctx context.Context, ev event) {
	if cmd, ok := bot.SwipeCommand(ev.data); ok {
		s := a.newSink(event{chatID: ev.chatID, userID: ev.userID, lang: ev.lang})
		a.settleAfter(ev, a.swipe(ctx, ev, cmd, s), s, "swipe button failed")
		return
	}
	switch {
	case isAnswer(ev.data):
		s := a.newSink(event{chatID: ev.chatID})
		a.settleAfter(ev, a.answer(ctx, ev, s), s, "button failed")
	case strings.HasPrefix(ev.data, dataCard):
		s := a.newSink(event{chatID: ev.chatID, lang: ev.lang})
		a.settleAfter(ev, a.choose(ctx, ev, s), s, "button failed")
	default:
		a.log.Debug("unknown button", "chat_id", ev.chatID, "data", ev.data)
		a.finish(ev)
	}
}

// spawn runs fn as work that shutdown waits for.
func (a *Adapter) spawn(fn func()) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer a.recovered(event{})
		fn()
	}()
}

// settleAfter settles ev once the engine finished it.
func (a *Adapter) settleAfter(ev event, rc bot.Receipt, s *sink, what string) {
	a.spawn(func() {
		err := rc.Wait(context.Background())
		s.close()
		a.settle(ev, err)
		if err != nil {
			a.log.Warn(what, "chat_id", ev.chatID, "update_id", ev.update.UpdateID, "err", err)
		}
	})
}

// settle finishes ev unless the pipeline refused it because it is shutting
// down: then the update stays pending and is handled after the restart.
func (a *Adapter) settle(ev event, err error) {
	if errors.Is(err, bot.ErrClosed) {
		return
	}
	a.finish(ev)
}

// finish records ev's update as handled. After the work was cancelled it
// stays pending, to be handled again on the next start.
func (a *Adapter) finish(ev event) {
	if a.inbox == nil || a.work.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.inbox.done(ctx, ev.update.UpdateID); err != nil {
		a.log.Error("record handled update", "update_id", ev.update.UpdateID, "err", err)
	}
}

// private reports whether a command asked in a group is answered in the
// asker's private chat: /memory shows what the others may not have been
// told, and a /whisper's answer is for its writer alone.
func private(cmd bot.Command) bool {
	return cmd.Name == "memory" || cmd.Name == "whisper"
}

// withdraw deletes a /whisper from the group it was written in, which
// Telegram allows where the bot is an admin that may delete messages;
// elsewhere the line stays visible, and the README says so.
func (a *Adapter) withdraw(ctx context.Context, ev event) {
	if err := a.deleteMessage(ctx, ev.chatID, ev.msgID); err != nil {
		a.log.Debug("whisper left in the group", "chat_id", ev.chatID, "err", err)
	}
}
