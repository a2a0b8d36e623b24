package telegram

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
	"troupe/media"
)

// eventKind is what the adapter does with an update.
type eventKind int

const (
	// evText is a message for the character.
	evText eventKind = iota
	// evCommand is a slash command.
	evCommand
	// evCallback is an inline keyboard button press.
	evCallback
	// evNotice is an update answered by the adapter alone (message too
	// long, rate limited, user not allowed).
	evNotice
)

// event is an update the adapter acts on.
type event struct {
	update tgbotapi.Update
	kind   eventKind
	chatID int64
	userID int64
	// lang is the user's language for the adapter's own texts.
	lang string
	in   bot.Inbound
	cmd  bot.Command
	// msgID is the user's message, or the bot's message whose button was
	// pressed.
	msgID int
	// replyTo is the message a reply answers: the trigger in a group, none
	// in a private chat.
	replyTo    int
	callbackID string
	data       string
	// notice is the text of an evNotice, or the alert a refused button
	// press is answered with.
	notice string
}

// router decides which updates count and what they mean; it is pure, so
// its rules are tested on sample updates.
type router struct {
	self        tgbotapi.User
	allowGroups bool
	allowed     *allowList
	// maxImage is media.max_image_bytes, which picks a photo's size;
	// source builds where a file's bytes come from (nil in tests of the
	// rules alone).
	maxImage int64
	source   func(fileID string) media.Source
}

// route turns an update into an event, or says why it is ignored.
func (r router) route(u tgbotapi.Update) (event, string) {
	switch {
	case u.Message != nil:
		return r.message(u)
	case u.CallbackQuery != nil:
		return r.callback(u)
	case u.EditedMessage != nil:
		return event{}, "edited message"
	}
	return event{}, "unsupported update"
}

func (r router) message(u tgbotapi.Update) (event, string) {
	m := u.Message
	if m.From == nil || m.Chat == nil {
		return event{}, "no sender"
	}
	if m.From.IsBot {
		return event{}, "from a bot"
	}
	ref, why := r.channel(m.Chat, m.From)
	if why != "" {
		return event{}, why
	}
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	// A picture, voice note or file without a word is played all the
	// same.
	items := mediaItems(m, r.maxImage, r.source)
	if strings.TrimSpace(text) == "" && len(items) == 0 {
		return event{}, "no text"
	}
	ev := event{
		update: u, kind: evText, chatID: m.Chat.ID, userID: m.From.ID, lang: langOf(m.From.LanguageCode),
		msgID: m.MessageID,
		in: bot.Inbound{
			Channel: ref, AuthorID: strconv.FormatInt(m.From.ID, 10), AuthorName: displayName(m.From),
			MessageID: strconv.Itoa(m.MessageID), CanManage: !ref.Group, Received: m.Time(),
		},
	}
	// A command's caption is the command alone: its picture or file
	// goes nowhere.
	if _, isCmd := bot.ParseCommand(text); !isCmd {
		ev.in.Media = items
	}
	if ref.Group {
		ev.replyTo = m.MessageID
	}
	if !r.allowed.has(m.From) {
		if ref.Group {
			return event{}, "user not allowed"
		}
		ev.kind, ev.notice = evNotice, say(ev.lang, txtDenied)
		return ev, ""
	}
	if cmd, ok := bot.ParseCommand(text); ok {
		if to := commandTarget(text); to != "" && !strings.EqualFold(to, r.self.UserName) {
			return event{}, "command for another bot"
		}
		ev.kind, ev.cmd, ev.in.Text = evCommand, cmd, strings.TrimSpace(text)
		return ev, ""
	}
	replied := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == r.self.ID
	if replied {
		// In a scene the bot's replies start with their speaker's name
		// in bold: a reply to one is for that character.
		if name := leadName(m.ReplyToMessage.Text, m.ReplyToMessage.Entities); name != "" {
			ev.in.Addressed = []string{name}
		}
	}
	if ref.Group {
		mentioned := mentions(text, r.self.UserName)
		if !mentioned && !replied {
			return event{}, "not addressed to the bot"
		}
		text = stripMention(text, r.self.UserName)
		if text == "" && len(items) == 0 {
			return event{}, "no text"
		}
	}
	// Every message that gets here is addressed to the bot: a private
	// chat's, or a group's that mentions or answers it.
	ev.in.Text, ev.in.Mentioned = text, true
	return ev, ""
}

func (r router) callback(u tgbotapi.Update) (event, string) {
	q := u.CallbackQuery
	if q.From == nil || q.Message == nil || q.Message.Chat == nil {
		return event{}, "callback without a message"
	}
	ref, why := r.channel(q.Message.Chat, q.From)
	if why != "" {
		// Answered all the same, or the client spins until it gives up.
		return event{update: u, kind: evCallback, chatID: q.Message.Chat.ID, userID: q.From.ID, lang: langOf(q.From.LanguageCode),
			msgID: q.Message.MessageID, callbackID: q.ID, data: q.Data, notice: say(langOf(q.From.LanguageCode), txtNotHere)}, ""
	}
	ev := event{
		update: u, kind: evCallback, chatID: q.Message.Chat.ID, userID: q.From.ID, lang: langOf(q.From.LanguageCode),
		msgID: q.Message.MessageID, callbackID: q.ID, data: q.Data,
		in: bot.Inbound{Channel: ref, AuthorID: strconv.FormatInt(q.From.ID, 10), AuthorName: displayName(q.From), CanManage: !ref.Group},
	}
	if !r.allowed.has(q.From) {
		ev.notice = say(ev.lang, txtDenied)
	}
	return ev, ""
}

// channel names the conversation a chat is, or says why it is not one.
func (r router) channel(c *tgbotapi.Chat, from *tgbotapi.User) (bot.ChannelRef, string) {
	id := strconv.FormatInt(c.ID, 10)
	switch c.Type {
	case "private":
		return bot.ChannelRef{Platform: bot.PlatformTelegram, ID: id, SpaceKind: bot.SpaceUser, SpaceID: strconv.FormatInt(from.ID, 10)}, ""
	case "group", "supergroup":
		if !r.allowGroups {
			return bot.ChannelRef{}, "groups are off"
		}
		return bot.ChannelRef{Platform: bot.PlatformTelegram, ID: id, SpaceKind: bot.SpaceGroup, SpaceID: id, Group: true}, ""
	}
	return bot.ChannelRef{}, "chat type " + c.Type
}

// commandTarget returns the bot a command names ("/cmd@name"), or "".
func commandTarget(text string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	first, _, _ = strings.Cut(first, "\n")
	_, to, _ := strings.Cut(first, "@")
	return to
}

// mentions reports whether text contains @name as a whole word.
func mentions(text, name string) bool {
	_, _, ok := findMention(text, name)
	return ok
}

func findMention(text, name string) (int, int, bool) {
	if name == "" {
		return 0, 0, false
	}
	lower, at := strings.ToLower(text), "@"+strings.ToLower(name)
	for from := 0; ; {
		i := strings.Index(lower[from:], at)
		if i < 0 {
			return 0, 0, false
		}
		start, end := from+i, from+i+len(at)
		if (start == 0 || !isNameByte(text[start-1])) && (end == len(text) || !isNameByte(text[end])) {
			return start, end, true
		}
		from = end
	}
}

// stripMention removes every @name from text.
func stripMention(text, name string) string {
	for {
		start, end, ok := findMention(text, name)
		if !ok {
			return strings.TrimSpace(text)
		}
		text = text[:start] + text[end:]
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func displayName(u *tgbotapi.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = u.UserName
	}
	if name == "" {
		name = strconv.FormatInt(u.ID, 10)
	}
	return name
}

// allowList is telegram.allowed_users: user ids, or usernames; empty
// allows everyone. Users are matched by id: the Bot API cannot look a
// username up, so a username entry is bound to the id of the first user
// seen with it, and from then on only that id matches it (a name can be
// given up and taken by someone else). Bindings last while the process
// runs.
type allowList struct {
	ids map[int64]bool

	mu sync.Mutex
	// names maps a lowercase username to the id it was first seen with,
	// 0 until then.
	names map[string]int64
}

func newAllowList(entries []string) *allowList {
	l := &allowList{ids: map[int64]bool{}, names: map[string]int64{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if id, err := strconv.ParseInt(e, 10, 64); err == nil {
			l.ids[id] = true
		} else if e != "" {
			l.names[strings.ToLower(strings.TrimPrefix(e, "@"))] = 0
		}
	}
	return l
}

// usernames lists the username entries, for the warning at start.
func (l *allowList) usernames() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for n := range l.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (l *allowList) has(u *tgbotapi.User) bool {
	if l == nil || (len(l.ids) == 0 && len(l.names) == 0) {
		return true
	}
	if l.ids[u.ID] {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	name := strings.ToLower(u.UserName)
	for n, id := range l.names {
		if id == u.ID {
			return true
		}
		if n == name && id == 0 {
			l.names[n] = u.ID
			return true
		}
	}
	return false
}
