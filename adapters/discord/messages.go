package discord

import (
	"context"
	"strings"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

func (a *Adapter) onMessageCreate(s *discordgo.Session, mc *discordgo.MessageCreate) {
	if mc.Message == nil || !a.human(mc.Message) {
		return
	}
	m := *mc.Message
	a.enqueue(s, m.ChannelID, &queued{msg: &m})
}

// onMessageUpdate applies an edit; see the package comment for what counts.
func (a *Adapter) onMessageUpdate(s *discordgo.Session, mu *discordgo.MessageUpdate) {
	if mu.Message == nil || mu.EditedTimestamp == nil || !a.human(mu.Message) {
		return
	}
	text := a.clean(mu.Message)
	if text == "" {
		return
	}
	l := a.lanes.lookup(mu.ChannelID)
	if l == nil {
		return
	}
	prep := l.edit(mu.ID, mu.Content, text)
	if prep == nil {
		return
	}
	// Still waiting in the pipeline (a reply is being written): the edit
	// replaces the text the next turn will use.
	revised := prep.in
	revised.MessageID, revised.Text = mu.ID, text
	if a.p.Submit(a.work, bot.Event{Kind: bot.EventEdit, In: revised}, nopSink{}).Revised() {
		a.log.Debug("edit replaced a waiting message", "channel_id", mu.ChannelID, "message_id", mu.ID)
		return
	}
	a.log.Debug("edit passed on as a new message", "channel_id", mu.ChannelID, "message_id", mu.ID)
	a.enqueue(s, mu.ChannelID, &queued{edit: prep})
}

// human reports whether m was written by a person (not a bot, a webhook, the
// system or this bot) as an ordinary message or reply.
func (a *Adapter) human(m *discordgo.Message) bool {
	if m.Author == nil || m.WebhookID != "" || m.Author.Bot || m.Author.System || m.Author.ID == a.bot() {
		return false
	}
	return m.Type == discordgo.MessageTypeDefault || m.Type == discordgo.MessageTypeReply
}

// enqueue puts q in its channel's lane and starts the lane's worker if none
// runs.
func (a *Adapter) enqueue(s *discordgo.Session, channelID string, q *queued) {
	l := a.lanes.push(channelID, q)
	if l == nil {
		return
	}
	if !a.spawn(func() { a.drain(s, l) }) {
		a.log.Warn("message arrived while stopping; not handled", "channel_id", channelID)
	}
}

// drain hands a lane's messages to the engine one by one, in the order the
// gateway delivered them.
func (a *Adapter) drain(s *discordgo.Session, l *lane) {
	ctx := a.work
	for {
		q, ok := l.pop()
		if !ok {
			return
		}
		var prep prepared
		var msgID string
		if q.edit != nil {
			prep = *q.edit
		} else {
			p, ok := a.accept(ctx, s, q.msg)
			if !ok {
				continue
			}
			prep, msgID = p, q.msg.ID
		}
		seq := l.hand(msgID, prep)
		r := a.newReply(s, prep.pl, func() { l.begun(seq) })
		r.ref = q.msg
		// Submit returns once the message is stored and queued in the
		// channel's order; the next one may follow at once.
		rc := a.p.Submit(ctx, bot.Event{Kind: bot.EventMessage, In: prep.in}, r)
		if !a.spawn(func() {
			if err := rc.Wait(ctx); err != nil {
				a.log.Warn("turn failed", "channel_id", prep.pl.channelID, "err", err)
			}
		}) {
			return
		}
	}
}

// accept decides whether m is a turn and prepares it.
func (a *Adapter) accept(ctx context.Context, s *discordgo.Session, m *discordgo.Message) (prepared, bool) {
	if m.GuildID != "" && m.Content == "" && len(m.Attachments) == 0 && len(m.Embeds) == 0 && len(m.StickerItems) == 0 && !a.mentions(m) {
		a.hint.Do(func() {
			a.log.Warn("a guild message arrived with empty content: switch on the Message Content intent " +
				"for this bot in the Discord developer portal (Bot → Privileged Gateway Intents)")
		})
		return prepared{}, false
	}
	pl := a.place(ctx, s, m.GuildID, m.ChannelID)
	if !a.allowed(pl) {
		return prepared{}, false
	}
	b, ok, err := a.bound(ctx, pl)
	if err != nil {
		a.log.Error("channel binding", "channel_id", pl.channelID, "err", err)
		return prepared{}, false
	}
	if !ok || (b.mentionOnly && !a.mentions(m) && !a.repliesToCharacter(m)) {
		return prepared{}, false
	}
	text := a.clean(m)
	if text == "" {
		return prepared{}, false
	}
	in := bot.Inbound{
		Channel:    pl.ref(m.Author.ID),
		AuthorID:   m.Author.ID,
		AuthorName: displayName(m.Author, m.Member),
		Text:       text,
		MessageID:  m.ID,
		Received:   m.Timestamp,
	}
	return prepared{in: in, pl: pl}, true
}

// mentions reports whether m mentions the bot.
func (a *Adapter) mentions(m *discordgo.Message) bool {
	id := a.bot()
	for _, u := range m.Mentions {
		if u != nil && u.ID == id {
			return true
		}
	}
	return false
}

// repliesToCharacter reports whether m replies to the bot or a webhook
// message of the bot's.
func (a *Adapter) repliesToCharacter(m *discordgo.Message) bool {
	r := m.ReferencedMessage
	if r == nil || r.Author == nil {
		return false
	}
	return r.Author.ID == a.bot() || (r.WebhookID != "" && a.hooks.ours(r.WebhookID))
}

// clean is m's text for the story: the bot's own mention removed, other
// mentions as @name.
func (a *Adapter) clean(m *discordgo.Message) string {
	text := m.Content
	botID := a.bot()
	for _, u := range m.Mentions {
		if u == nil {
			continue
		}
		with := "@" + displayName(u, nil)
		if u.ID == botID {
			with = ""
		}
		text = strings.ReplaceAll(text, "<@"+u.ID+">", with)
		text = strings.ReplaceAll(text, "<@!"+u.ID+">", with)
	}
	return strings.TrimSpace(text)
}

// displayName is how the story calls a user: the guild nickname, else the
// global display name, else the username.
func displayName(u *discordgo.User, m *discordgo.Member) string {
	if m != nil && m.Nick != "" {
		return m.Nick
	}
	if u.GlobalName != "" {
		return u.GlobalName
	}
	return u.Username
}

// nopSink is the sink of an edit, which writes nothing.
type nopSink struct{}

func (nopSink) Typing(context.Context)               {}
func (nopSink) Update(context.Context, string) error { return nil }
func (nopSink) Finish(context.Context, string) error { return nil }
func (nopSink) Notice(context.Context, string) error { return nil }
