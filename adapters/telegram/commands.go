package telegram

import (
	"context"
	"errors"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
)

// command runs /start, the adapter's own command: the greeting, or a
// keyboard to choose the card when there are several. Every other command,
// known or not, goes to the engine, which answers unknown ones with the
// help. The error is the pipeline's, already logged.
func (a *Adapter) command(ctx context.Context, ev event) error {
	in := ev.in
	if in.Channel.Group {
		in.CanManage = a.canManage(ctx, ev.chatID, ev.userID)
	}
	s := a.newSink(ev)
	defer s.close()
	err := a.start(ctx, ev, in, s)
	if err != nil {
		a.log.Warn("command failed", "chat_id", ev.chatID, "command", ev.cmd.Name, "err", err)
	}
	return err
}

// start greets. "/start ID" (a deep link) binds that card first; with
// several cards and no argument the user chooses on a keyboard.
func (a *Adapter) start(ctx context.Context, ev event, in bot.Inbound, s *sink) error {
	cards := a.p.Cards()
	if arg := ev.cmd.Args; arg != "" {
		if c, ok := cards.Find(arg); ok {
			return a.bindAndGreet(ctx, ev, in, c.ID, s)
		}
	}
	list := cards.List()
	if len(list) < 2 {
		return a.p.Greet(ctx, in, s)
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	for _, c := range list {
		if len(dataCard)+len(c.ID) > maxData {
			a.log.Warn("card id too long for a button", "card_id", c.ID)
			continue
		}
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(c.Name, dataCard+c.ID)))
		if len(rows) == 100 {
			break
		}
	}
	kb := tgbotapi.NewInlineKeyboardMarkup(rows...)
	_, err := a.send(ctx, outMsg{chatID: ev.chatID, text: say(ev.lang, txtChooseCard), replyTo: ev.replyTo, markup: &kb}, true)
	return err
}

// bindAndGreet makes cardID the chat's card and shows its greeting (or,
// when the chat already plays it, its last message).
func (a *Adapter) bindAndGreet(ctx context.Context, ev event, in bot.Inbound, cardID string, s *sink) error {
	if in.Channel.Group && !in.CanManage {
		return s.Notice(ctx, say(ev.lang, txtNotAllowed))
	}
	err := a.p.Bind(ctx, in.Channel, cardID)
	if errors.Is(err, bot.ErrNoCard) {
		return s.Notice(ctx, say(ev.lang, txtUnknownCard))
	}
	if err != nil {
		_ = s.Notice(ctx, say(ev.lang, txtFailed))
		return err
	}
	return a.p.Greet(ctx, in, s)
}

// isAnswer reports whether a button's data answers a yes/no question.
func isAnswer(data string) bool {
	return strings.HasPrefix(data, dataYes) || strings.HasPrefix(data, dataNo)
}

// answer submits a yes/no press to the engine, in the chat's order.
func (a *Adapter) answer(ctx context.Context, ev event, s *sink) bot.Receipt {
	yes := strings.HasPrefix(ev.data, dataYes)
	token := ev.data[len(dataYes):]
	// In a group someone other than the asker may press; the pipeline
	// refuses them and the keyboard must stay for the asker.
	if !ev.in.Channel.Group {
		a.spawn(func() { a.dropKeyboard(ctx, ev) })
	}
	return a.p.Submit(ctx, bot.Event{Kind: bot.EventButton, In: ev.in, Token: token, Yes: yes}, s)
}

// button handles a press of a card-choosing button; the callback query
// itself was answered when it arrived. The error is the pipeline's,
// already logged.
func (a *Adapter) button(ctx context.Context, ev event) error {
	in := ev.in
	s := a.newSink(event{chatID: ev.chatID})
	defer s.close()
	if !strings.HasPrefix(ev.data, dataCard) {
		a.log.Debug("unknown button", "chat_id", ev.chatID, "data", ev.data)
		return nil
	}
	if in.Channel.Group {
		in.CanManage = a.canManage(ctx, ev.chatID, ev.userID)
	}
	if !in.Channel.Group || in.CanManage {
		a.dropKeyboard(ctx, ev)
	}
	err := a.bindAndGreet(ctx, ev, in, strings.TrimPrefix(ev.data, dataCard), s)
	if err != nil {
		a.log.Warn("button failed", "chat_id", ev.chatID, "err", err)
	}
	return err
}

func (a *Adapter) dropKeyboard(ctx context.Context, ev event) {
	if err := a.clearKeyboard(ctx, ev.chatID, ev.msgID); err != nil {
		a.log.Warn("remove keyboard", "chat_id", ev.chatID, "err", err)
	}
}
