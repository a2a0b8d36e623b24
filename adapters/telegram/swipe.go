package telegram

import (
	"context"
	"sync"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
)

var _ bot.Swiping = (*sink)(nil)

// Swipes has the reply being finished carry the swipe keyboard once it is
// delivered (on its last message); a whisper's answer, in the asker's
// private chat, has none either: it is not paged through.
func (s *sink) Swipes(_ context.Context, sw bot.Swipes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.origin != nil {
		return
	}
	s.swipes = &sw
}

// swipeKeyboard is the inline keyboard under a reply that is one of its
// turn's alternatives: the previous one, where it stands, the next one, a
// new one. Buttons with nowhere to go are left out.
func swipeKeyboard(sw bot.Swipes, lang string) tgbotapi.InlineKeyboardMarkup {
	var row []tgbotapi.InlineKeyboardButton
	if sw.N > 1 {
		row = append(row, tgbotapi.NewInlineKeyboardButtonData("◀", bot.SwipeButton(bot.SwipePrev, sw.MessageID)))
	}
	if sw.N < sw.Of {
		row = append(row, tgbotapi.NewInlineKeyboardButtonData("▶", bot.SwipeButton(bot.SwipeNext, sw.MessageID)))
	}
	row = append(row, tgbotapi.NewInlineKeyboardButtonData(say(lang, txtSwipeNew), bot.SwipeButton(bot.SwipeNew, sw.MessageID)))
	return tgbotapi.NewInlineKeyboardMarkup(row)
}

// keyboard puts the swipe keyboard, if the pipeline offered one, under
// msgID, the last message of the reply just delivered, and takes it off
// the chat's reply that had it before; s.mu is held.
func (s *sink) keyboard(ctx context.Context, msgID int) {
	sw := s.swipes
	s.swipes = nil
	if sw == nil || msgID == 0 {
		return
	}
	kb := swipeKeyboard(*sw, s.lang)
	cfg := tgbotapi.NewEditMessageReplyMarkup(s.chatID, msgID, kb)
	if _, err := s.a.do(ctx, "editMessageReplyMarkup", cfg, true); err != nil && !isNotModified(err) {
		s.a.log.Warn("put the swipe keyboard under a reply", "chat_id", s.chatID, "err", err)
		return
	}
	if before := s.a.swiped.swap(s.chatID, msgID); before != 0 && before != msgID {
		if err := s.a.clearKeyboard(ctx, s.chatID, before); err != nil {
			s.a.log.Debug("take the swipe keyboard off an earlier reply", "chat_id", s.chatID, "err", err)
		}
	}
}

// swipedReplies remembers, per chat, the message that has the swipe
// keyboard. Past maxSwiped chats it starts over; a keyboard left behind is
// refused when pressed.
type swipedReplies struct {
	mu sync.Mutex
	m  map[int64]int
}

const maxSwiped = 10000

func (r *swipedReplies) swap(chatID int64, msgID int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil || len(r.m) >= maxSwiped {
		r.m = map[int64]int{}
	}
	before := r.m[chatID]
	r.m[chatID] = msgID
	return before
}

// swipe submits a press of a swipe button as the /swipe it stands for, in
// the chat's order; in a group it first asks whether the presser may
// manage it (who may swipe another's reply).
func (a *Adapter) swipe(ctx context.Context, ev event, cmd bot.Command, s *sink) bot.Receipt {
	in := ev.in
	if in.Channel.Group {
		in.CanManage = a.canManage(ctx, ev.chatID, ev.userID)
	}
	return a.p.Submit(ctx, bot.Event{Kind: bot.EventCommand, In: in, Command: cmd}, s)
}
