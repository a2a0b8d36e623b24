package telegram

import (
	"context"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
	"troupe/cards"
)

// ChooseCard offers the cards on a keyboard, one button each; a press
// comes back as a card-choosing button (see choose).
func (s *sink) ChooseCard(ctx context.Context, list []cards.Card) error {
	var rows [][]tgbotapi.InlineKeyboardButton
	for _, c := range list {
		if len(dataCard)+len(c.ID) > maxData {
			s.a.log.Warn("card id too long for a button", "card_id", c.ID)
			continue
		}
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(c.Name, dataCard+c.ID)))
		if len(rows) == 100 {
			break
		}
	}
	kb := tgbotapi.NewInlineKeyboardMarkup(rows...)
	_, err := s.a.send(ctx, outMsg{chatID: s.chatID, text: say(s.lang, txtChooseCard), replyTo: s.replyTo, markup: &kb}, true)
	return err
}

var _ bot.CardChooser = (*sink)(nil)

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

// choose submits a press of a card-choosing button to the engine, in the
// chat's order; the callback query itself was answered when it arrived.
func (a *Adapter) choose(ctx context.Context, ev event, s *sink) bot.Receipt {
	in := ev.in
	if in.Channel.Group {
		in.CanManage = a.canManage(ctx, ev.chatID, ev.userID)
	}
	// In a group the keyboard stays for those who may choose.
	if !in.Channel.Group || in.CanManage {
		a.spawn(func() { a.dropKeyboard(ctx, ev) })
	}
	return a.p.Submit(ctx, bot.Event{Kind: bot.EventButton, In: in, Card: strings.TrimPrefix(ev.data, dataCard)}, s)
}

func (a *Adapter) dropKeyboard(ctx context.Context, ev event) {
	if err := a.clearKeyboard(ctx, ev.chatID, ev.msgID); err != nil {
		a.log.Warn("remove keyboard", "chat_id", ev.chatID, "err", err)
	}
}
