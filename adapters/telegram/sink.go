package telegram

import (
	"context"
	"fmt"
	"strings"
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
	// out renders the reply being streamed into its messages; nil until
	// its first text.
	out *bot.Renderer[int]
	// swipes, when the pipeline offered them, are the keyboard the reply
	// being finished gets once delivered.
	swipes *bot.Swipes
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
	s.chatID, s.replyTo, s.out = s.userID, 0, nil
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
	if s.typing != nil || (s.out != nil && len(s.out.Messages()) > 0) {
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
	if strings.TrimSpace(text) == "" {
		// Only whitespace so far: keep showing the typing action.
		return nil
	}
	s.stopTyping()
	s.renderer().Show(ctx, text)
	return nil
}

// Finish shows the final reply: the streamed messages are edited to their
// final pieces (keeping the pace), missing pieces are sent, and pieces the
// final text no longer has are deleted.
func (s *sink) Finish(ctx context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTyping()
	out := s.renderer()
	// A later reply through this sink starts new messages.
	s.out = nil
	err := out.Finish(ctx, text)
	if err != nil && s.origin != nil && forbidden(err) {
		s.swipes = nil
		return s.cannotWrite(ctx, err)
	}
	if err == nil {
		if sent := out.Messages(); len(sent) > 0 {
			s.keyboard(ctx, sent[len(sent)-1])
		}
	}
	s.swipes = nil
	return err
}

// renderer returns the renderer of the reply being written, started on its
// first text; s.mu is held.
func (s *sink) renderer() *bot.Renderer[int] {
	if s.out == nil {
		s.out = bot.NewRenderer[int](sinkMessages{s}, bot.RenderOptions{
			Split:        s.pieces,
			EditInterval: s.a.editInterval,
			Now:          s.a.now,
			HoldFor:      retryAfter,
			// A message that is gone or refuses the edit gets the piece
			// anew; after flood control or a failed connection the
			// edit is not known to have failed.
			Replace: func(err error) bool {
				_, api := asAPI(err)
				return api && !isFlood(err)
			},
			Log: s.a.log.With("chat_id", s.chatID),
		})
	}
	return s.out
}

// sinkMessages writes a reply's pieces as messages of the sink's chat, as
// escaped HTML with the scene speaker's name on the first; final writes
// wait out flood control.
type sinkMessages struct{ s *sink }

var _ bot.Messages[int] = sinkMessages{}

func (m sinkMessages) Post(ctx context.Context, i int, piece string, final bool) (int, error) {
	replyTo := 0
	if i == 0 {
		replyTo = m.s.replyTo
	}
	return m.s.a.send(ctx, outMsg{chatID: m.s.chatID, text: piece, head: m.s.head(i), html: true, replyTo: replyTo}, final)
}

func (m sinkMessages) Edit(ctx context.Context, id, i int, piece string, final bool) error {
	return m.s.a.edit(ctx, m.s.chatID, id, m.s.head(i), piece, true, final)
}

func (m sinkMessages) Delete(ctx context.Context, id int) error {
	return m.s.a.deleteMessage(ctx, m.s.chatID, id)
}

// Notice sends troupe's own message as plain text. A reply that was being
// streamed and ends in a notice failed; its partial text is taken back, as
// the pipeline did not store it.
func (s *sink) Notice(ctx context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTyping()
	if s.out != nil {
		if err := s.out.TakeBack(ctx); err != nil {
			s.a.log.Warn("delete partial reply", "chat_id", s.chatID, "err", err)
		}
		s.out = nil
	}
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
