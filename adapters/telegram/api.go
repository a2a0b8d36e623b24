package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// callTimeout bounds one API call other than a long poll.
const callTimeout = 30 * time.Second

// ctxClient binds the library's context-free requests to a context, so
// shutdown cancels a long poll and a slow call gives up.
type ctxClient struct {
	ctx context.Context
	c   *http.Client
}

func (c ctxClient) Do(req *http.Request) (*http.Response, error) {
	return c.c.Do(req.WithContext(c.ctx))
}

// bot returns the connected API with its requests bound to ctx.
func (a *Adapter) bot(ctx context.Context) *tgbotapi.BotAPI {
	b := *a.api
	b.Client = ctxClient{ctx: ctx, c: a.httpc}
	return &b
}

// do sends c. With wait, flood control (429) is waited out as often as
// a.maxWaits allows; without, the 429 comes back at once.
func (a *Adapter) do(ctx context.Context, method string, c tgbotapi.Chattable, wait bool) (*tgbotapi.APIResponse, error) {
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		resp, err := a.bot(cctx).Request(c)
		cancel()
		if err == nil {
			return resp, nil
		}
		err = apiError(method, a.cfg.Token.Value(), err)
		d, limited := retryAfter(err)
		if !limited || !wait || attempt >= a.maxWaits {
			return nil, err
		}
		a.log.Warn("flood control: waiting", "method", method, "retry_after", d)
		if err := sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// outMsg is a message to send.
type outMsg struct {
	chatID int64
	text   string
	// html sends text escaped in HTML parse mode, falling back to plain text
	// when Telegram refuses the entities.
	html bool
	// head is a scene speaker's name, shown in bold before text.
	head    string
	replyTo int
	markup  *tgbotapi.InlineKeyboardMarkup
}

// send sends m and returns the new message's id.
func (a *Adapter) send(ctx context.Context, m outMsg, wait bool) (int, error) {
	cfg := tgbotapi.NewMessage(m.chatID, headPlain(m.head)+m.text)
	cfg.DisableWebPagePreview = true
	if m.replyTo != 0 {
		cfg.ReplyToMessageID = m.replyTo
		cfg.AllowSendingWithoutReply = true
	}
	if m.markup != nil {
		cfg.ReplyMarkup = *m.markup
	}
	if m.html {
		cfg.Text, cfg.ParseMode = headHTML(m.head)+escapeHTML(m.text), tgbotapi.ModeHTML
	}
	resp, err := a.do(ctx, "sendMessage", cfg, wait)
	if err != nil && m.html && isBadEntities(err) {
		a.log.Warn("html refused, sending plain text", "chat_id", m.chatID, "err", err)
		cfg.Text, cfg.ParseMode = headPlain(m.head)+m.text, ""
		resp, err = a.do(ctx, "sendMessage", cfg, wait)
	}
	if err != nil {
		return 0, err
	}
	var msg tgbotapi.Message
	if err := json.Unmarshal(resp.Result, &msg); err != nil {
		return 0, fmt.Errorf("telegram: sendMessage: decode result: %w", err)
	}
	return msg.MessageID, nil
}

// edit replaces a message's text (after head, a scene speaker's name, when
// not ""). "Message is not modified" is success.
func (a *Adapter) edit(ctx context.Context, chatID int64, msgID int, head, text string, html, wait bool) error {
	cfg := tgbotapi.NewEditMessageText(chatID, msgID, headPlain(head)+text)
	cfg.DisableWebPagePreview = true
	if html {
		cfg.Text, cfg.ParseMode = headHTML(head)+escapeHTML(text), tgbotapi.ModeHTML
	}
	_, err := a.do(ctx, "editMessageText", cfg, wait)
	if err != nil && html && isBadEntities(err) {
		a.log.Warn("html refused, editing as plain text", "chat_id", chatID, "err", err)
		cfg.Text, cfg.ParseMode = headPlain(head)+text, ""
		_, err = a.do(ctx, "editMessageText", cfg, wait)
	}
	if isNotModified(err) {
		return nil
	}
	return err
}

// clearKeyboard removes a message's inline keyboard.
func (a *Adapter) clearKeyboard(ctx context.Context, chatID int64, msgID int) error {
	cfg := tgbotapi.NewEditMessageReplyMarkup(chatID, msgID, tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}})
	_, err := a.do(ctx, "editMessageReplyMarkup", cfg, true)
	if isNotModified(err) || isMessageGone(err) {
		return nil
	}
	return err
}

func (a *Adapter) deleteMessage(ctx context.Context, chatID int64, msgID int) error {
	_, err := a.do(ctx, "deleteMessage", tgbotapi.NewDeleteMessage(chatID, msgID), true)
	if isMessageGone(err) {
		return nil
	}
	return err
}

func (a *Adapter) chatAction(ctx context.Context, chatID int64) error {
	_, err := a.do(ctx, "sendChatAction", tgbotapi.NewChatAction(chatID, tgbotapi.ChatTyping), false)
	return err
}

func (a *Adapter) answerCallback(ctx context.Context, id, text string) error {
	_, err := a.do(ctx, "answerCallbackQuery", tgbotapi.NewCallback(id, text), true)
	return err
}

// canManage reports whether a group member is the group's creator or an
// administrator; on error it says no, and asks again next time. An answer
// is remembered for permTTL (permCache). It is called in the chat's order
// (inOrder), so flood control on the call holds up that chat alone.
func (a *Adapter) canManage(ctx context.Context, chatID, userID int64) bool {
	key := permKey{chatID: chatID, userID: userID}
	if manage, ok := a.perms.get(key, a.now()); ok {
		return manage
	}
	cfg := tgbotapi.GetChatMemberConfig{ChatConfigWithUser: tgbotapi.ChatConfigWithUser{ChatID: chatID, UserID: userID}}
	resp, err := a.do(ctx, "getChatMember", cfg, true)
	if err != nil {
		a.log.Warn("get chat member", "chat_id", chatID, "user_id", userID, "err", err)
		return false
	}
	var m tgbotapi.ChatMember
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		a.log.Warn("get chat member: decode result", "chat_id", chatID, "user_id", userID, "err", err)
		return false
	}
	manage := m.IsCreator() || m.IsAdministrator()
	a.perms.put(key, manage, a.now())
	return manage
}

// setWebhook points Telegram at url with a secret token. The library's
// WebhookConfig predates secret_token, so the request is built here.
func (a *Adapter) setWebhook(ctx context.Context, hook *url.URL, secret string) error {
	params := tgbotapi.Params{"url": hook.String(), "secret_token": secret}
	if err := params.AddInterface("allowed_updates", allowedUpdates); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := a.bot(cctx).MakeRequest("setWebhook", params)
		cancel()
		if err == nil {
			return nil
		}
		err = apiError("setWebhook", a.cfg.Token.Value(), err)
		d, limited := retryAfter(err)
		if !limited || attempt >= a.maxWaits {
			return err
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
