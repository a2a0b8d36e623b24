package telegram

import (
	"context"
	"fmt"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
	"troupe/cards"
)

// Callback data of the inline buttons.
const (
	dataYes  = "cf:y:"
	dataNo   = "cf:n:"
	dataCard = "card:"
	// maxData is Telegram's limit on callback data, in bytes.
	maxData = 64
)

// sink renders what the pipeline writes for one inbound message: the typing
// action until the first text, a reply streamed by editing its messages at
// most once per editInterval, the final text split at Telegram's limit.
// Model text goes out as escaped HTML, troupe's own notices as plain text.
type sink struct {
	a       *Adapter
	chatID  int64
	replyTo int
	// userID is the asker, whose private chat with the bot has their id;
	// 0 when the sink answers no one in particular.
	userID int64
	// origin is, for an answer sent to the asker's private chat instead
	// of the group it was asked in, that group; nil otherwise.
	origin *origin
	// lang is the user's language for the adapter's own texts.
	lang string

	mu sync.Mutex
	// name is the speaker of the reply being written in a scene, shown in
	// bold before its first piece; "" outside a scene.
	name   string
	typing chan struct{}
	// parts are the messages of the reply being streamed, with the text
	// each one shows.
	parts     []part
	lastWrite time.Time
	// holdUntil is when flood control lets the chat be written again.
	holdUntil time.Time
	// swipes, when the pipeline offered them, are the keyboard the reply
	// being finished gets once delivered.
	swipes *bot.Swipes
}

type part struct {
	id   int
	text string
}

// origin is the group message whose answer went to a private chat.
type origin struct {
	chatID  int64
	replyTo int
	lang    string
}

var (
	_ bot.Sink       = (*sink)(nil)
	_ bot.Confirmer  = (*sink)(nil)
	_ bot.Speaking   = (*sink)(nil)
	_ bot.Whispering = (*sink)(nil)
	_ bot.Confiding  = (*sink)(nil)
)

func (a *Adapter) newSink(ev event) *sink {
	return &sink{a: a, chatID: ev.chatID, replyTo: ev.replyTo, userID: ev.userID, lang: ev.lang}
}

// Whisper sends the rest of what the sink writes to the asker's private
// chat, as a /whisper's answer is: the answer to their whisper, written
// again by /regen. A sink already there stays.
func (s *sink) Whisper(context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.origin != nil || s.userID == 0 || s.userID == s.chatID {
		return
	}
	s.stopTyping()
	s.origin = &origin{chatID: s.chatID, replyTo: s.replyTo, lang: s.lang}
	s.chatID, s.replyTo, s.parts = s.userID, 0, nil
}

// newPrivateSink answers ev, asked in a group, in the asker's private chat
// with the bot (whose id is the user's).
func (a *Adapter) newPrivateSink(ev event) *sink {
	return &sink{a: a, chatID: ev.userID, userID: ev.userID, origin: &origin{chatID: ev.chatID, replyTo: ev.replyTo, lang: ev.lang}}
}

// Confide shows text to the author alone: in their private chat with the
// bot, which the sink of a command asked in a group writes to (see
// private), or which is the chat itself. When the author never started
// that chat the group hears so, without any of text (cannotWrite). A sink
// of a group chat itself cannot confide: it returns bot.ErrNoPrivateAnswer.
func (s *sink) Confide(ctx context.Context, text string) error {
	if s.origin == nil && (s.userID == 0 || s.chatID != s.userID) {
		return bot.ErrNoPrivateAnswer
	}
	return s.Notice(ctx, text)
}

// Speak names the speaker of the reply that follows: in a scene its name
// comes in bold before the reply; a one-card chat's replies stay as they
// were.
func (s *sink) Speak(_ context.Context, sp bot.Speaker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = ""
	if sp.Scene {
		s.name = sp.Name
	}
}

// pieces cuts a reply so the first piece fits with the speaker's name.
func (s *sink) pieces(text string) []string {
	if s.name == "" {
		return splitMessage(text)
	}
	return splitWithin(text, maxText-utf16Len(s.name)-1)
}

// head is what piece i of the reply starts with: the speaker's name on the
// first.
func (s *sink) head(i int) string {
	if i == 0 {
		return s.name
	}
	return ""
}

// Typing shows the typing action, repeated until the first text.
func (s *sink) Typing(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.typing != nil || len(s.parts) > 0 {
		return
	}
	stop := make(chan struct{})
	s.typing = stop
	s.a.wg.Add(1)
	go func() {
		defer s.a.wg.Done()
		s.a.keepTyping(ctx, s.chatID, stop)
	}()
}

// stopTyping ends the typing action; s.mu is held.
func (s *sink) stopTyping() {
	if s.typing != nil {
		close(s.typing)
		s.typing = nil
	}
}

// close releases the sink when its message is handled.
func (s *sink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTyping()
}

// Update shows the reply so far, unless the chat was written less than
// editInterval ago or flood control holds it; Finish catches up.
func (s *sink) Update(ctx context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pieces := s.pieces(text)
	if len(pieces) == 0 {
		// Only whitespace so far: keep showing the typing action.
		return nil
	}
	s.stopTyping()
	now := s.a.now()
	if now.Before(s.holdUntil) || (len(s.parts) > 0 && now.Before(s.lastWrite.Add(s.a.editInterval))) {
		return nil
	}
	return s.render(ctx, pieces, false)
}

// Finish shows the final reply: the streamed messages are edited to their
// final pieces (keeping the pace), missing pieces are sent, and pieces the
// final text no longer has are deleted.
func (s *sink) Finish(ctx context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTyping()
	pieces := s.pieces(text)
	err := s.render(ctx, pieces, true)
	if err != nil && s.origin != nil && forbidden(err) {
		s.parts = nil
		return s.cannotWrite(ctx, err)
	}
	if err == nil {
		for _, p := range s.parts[min(len(pieces), len(s.parts)):] {
			if derr := s.a.deleteMessage(ctx, s.chatID, p.id); derr != nil {
				s.a.log.Warn("delete surplus reply part", "chat_id", s.chatID, "err", derr)
			}
		}
		if n := min(len(pieces), len(s.parts)); n > 0 {
			s.keyboard(ctx, s.parts[n-1].id)
		}
	}
	s.swipes = nil
	// A later reply through this sink starts new messages.
	s.parts = nil
	return err
}

// render brings the reply's messages to pieces. Streaming (final false) is
// best effort: a failed write is retried by a later call. Final writes wait
// out the pace and flood control, and a piece whose message can no longer
// be edited is sent anew, so the reply is never lost.
func (s *sink) render(ctx context.Context, pieces []string, final bool) error {
	for i, piece := range pieces {
		if i < len(s.parts) && s.parts[i].text == piece {
			continue
		}
		if final {
			wait := s.holdUntil
			if i < len(s.parts) {
				wait = later(wait, s.lastWrite.Add(s.a.editInterval))
			}
			if err := sleep(ctx, wait.Sub(s.a.now())); err != nil {
				return err
			}
		}
		var err error
		if i < len(s.parts) {
			err = s.a.edit(ctx, s.chatID, s.parts[i].id, s.head(i), piece, true, final)
			if err == nil {
				s.parts[i].text = piece
			} else if _, api := asAPI(err); api && final && !isFlood(err) {
				// The message is gone or refuses the edit: send the piece anew.
				s.a.log.Warn("final edit refused, sending the piece anew", "chat_id", s.chatID, "err", err)
				var id int
				if id, err = s.a.send(ctx, outMsg{chatID: s.chatID, text: piece, head: s.head(i), html: true}, true); err == nil {
					s.parts[i] = part{id: id, text: piece}
				}
			}
		} else {
			var id int
			replyTo := 0
			if i == 0 {
				replyTo = s.replyTo
			}
			id, err = s.a.send(ctx, outMsg{chatID: s.chatID, text: piece, head: s.head(i), html: true, replyTo: replyTo}, final)
			if err == nil {
				s.parts = append(s.parts, part{id: id, text: piece})
			}
		}
		s.lastWrite = s.a.now()
		if err != nil {
			if d, ok := retryAfter(err); ok {
				s.holdUntil = s.a.now().Add(d)
			}
			if final {
				return err
			}
			s.a.log.Debug("stream update skipped", "chat_id", s.chatID, "err", err)
			return nil
		}
	}
	return nil
}

// Notice sends troupe's own message as plain text. A reply that was being
// streamed and ends in a notice failed; its partial text is taken back, as
// the pipeline did not store it.
func (s *sink) Notice(ctx context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTyping()
	for _, p := range s.parts {
		if err := s.a.deleteMessage(ctx, s.chatID, p.id); err != nil {
			s.a.log.Warn("delete partial reply", "chat_id", s.chatID, "err", err)
		}
	}
	s.parts = nil
	err := s.a.notice(ctx, s.chatID, s.replyTo, text)
	if err != nil && s.origin != nil && forbidden(err) {
		return s.cannotWrite(ctx, err)
	}
	return err
}

// cannotWrite tells the group an answer was asked in that the bot may not
// write to the asker privately (they never started a chat with it, or
// blocked it), without any of the answer; err is why.
func (s *sink) cannotWrite(ctx context.Context, err error) error {
	s.a.log.Info("cannot write to the asker privately", "chat_id", s.origin.chatID, "err", err)
	return s.a.notice(ctx, s.origin.chatID, s.origin.replyTo, fmt.Sprintf(say(s.origin.lang, txtStartPrivate), s.a.rt.self.UserName))
}

// Confirm asks a yes/no question with two inline buttons whose callback
// data carries the token; the press comes back as a callback query.
func (s *sink) Confirm(ctx context.Context, question, token string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTyping()
	yes, no := dataYes+token, dataNo+token
	if len(yes) > maxData || len(no) > maxData {
		return &APIError{Method: "sendMessage", Code: 400, Description: "confirmation token too long for callback data"}
	}
	lang := "en"
	if cards.GuessLanguage(question) == "zh" {
		lang = "zh"
	}
	kb := tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData(say(lang, txtYes), yes),
		tgbotapi.NewInlineKeyboardButtonData(say(lang, txtNo), no),
	))
	pieces := splitMessage(question)
	for i, p := range pieces {
		m := outMsg{chatID: s.chatID, text: p, replyTo: s.replyTo}
		if i == len(pieces)-1 {
			m.markup = &kb
		}
		if _, err := s.a.send(ctx, m, true); err != nil {
			return err
		}
	}
	return nil
}

// notice sends troupe's own text, plain, split at the limit.
func (a *Adapter) notice(ctx context.Context, chatID int64, replyTo int, text string) error {
	for i, p := range splitMessage(text) {
		m := outMsg{chatID: chatID, text: p}
		if i == 0 {
			m.replyTo = replyTo
		}
		if _, err := a.send(ctx, m, true); err != nil {
			return err
		}
	}
	return nil
}

// keepTyping repeats the typing action (which Telegram shows for about five
// seconds) until stop is closed, ctx ends or typingMax passes.
func (a *Adapter) keepTyping(ctx context.Context, chatID int64, stop <-chan struct{}) {
	bot.KeepDoing(ctx, stop, a.typingEvery, a.typingMax, func() {
		if err := a.chatAction(ctx, chatID); err != nil && ctx.Err() == nil {
			a.log.Debug("typing action", "chat_id", chatID, "err", err)
		}
	})
}

func isFlood(err error) bool {
	_, ok := retryAfter(err)
	return ok
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
