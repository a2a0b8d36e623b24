package discord

import (
	"context"
	"strings"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

// onMessageCreate hands a person's message to the engine. The gateway
// calls it on its one goroutine (SyncEvents), in the order Discord sent the
// messages; the message is submitted in that order among its channel's
// events (inOrder), and Submit returns once it is ordered in its channel:
// that order is the channel's. The engine decides whether the channel plays.
func (a *Adapter) onMessageCreate(s *discordgo.Session, mc *discordgo.MessageCreate) {
	if mc.Message == nil || !a.human(mc.Message) {
		return
	}
	m := mc.Message
	ctx := a.work
	in, pl, ok := a.inbound(ctx, s, m)
	if !ok {
		return
	}
	r := a.newReply(s, pl)
	r.ref = m
	a.inOrder(s, pl.channelID, "discord_message", func() {
		rc := a.p.Submit(ctx, bot.Event{Kind: bot.EventMessage, In: in}, r)
		if rc.Ignored() {
			a.log.Debug("message ignored: the channel does not play for it", "channel_id", pl.channelID, "message_id", m.ID)
		}
		// The queued event is counted until this returns, so the count
		// of the turn's wait may be added here.
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := rc.Wait(ctx); err != nil {
				a.log.Warn("turn failed", "channel_id", pl.channelID, "err", err)
			}
			a.log.Debug("message handled", "channel_id", pl.channelID, "message_id", m.ID)
		}()
	})
}

// onMessageUpdate hands an edit to the engine, which changes the text of
// the message if it still waits for its turn; see the package comment.
func (a *Adapter) onMessageUpdate(s *discordgo.Session, mu *discordgo.MessageUpdate) {
	if mu.Message == nil || mu.EditedTimestamp == nil || !a.human(mu.Message) {
		return
	}
	text := a.clean(mu.Message)
	if text == "" {
		return
	}
	pl := a.place(a.work, s, mu.GuildID, mu.ChannelID)
	in := bot.Inbound{Channel: pl.ref(mu.Author.ID), AuthorID: mu.Author.ID, MessageID: mu.ID, Text: text}
	// After the message itself, which may still wait in the channel's
	// queue.
	a.inOrder(s, pl.channelID, "discord_edit", func() {
		if a.p.Submit(a.work, bot.Event{Kind: bot.EventEdit, In: in}, nopSink{}).Revised() {
			a.log.Debug("edit replaced a waiting message", "channel_id", mu.ChannelID, "message_id", mu.ID)
			return
		}
		a.log.Debug("edit left alone: its message is not waiting", "channel_id", mu.ChannelID, "message_id", mu.ID)
	})
}

// human reports whether m was written by a person (not a bot, a webhook, the
// system or this bot) as an ordinary message or reply.
func (a *Adapter) human(m *discordgo.Message) bool {
	if m.Author == nil || m.WebhookID != "" || m.Author.Bot || m.Author.System || m.Author.ID == a.bot() {
		return false
	}
	return m.Type == discordgo.MessageTypeDefault || m.Type == discordgo.MessageTypeReply
}

// inbound turns m into the engine's message, with where its reply goes;
// false for a message with neither text nor media, or in a place the
// configuration leaves out.
func (a *Adapter) inbound(ctx context.Context, s *discordgo.Session, m *discordgo.Message) (bot.Inbound, place, bool) {
	if m.GuildID != "" && m.Content == "" && len(m.Attachments) == 0 && len(m.Embeds) == 0 && len(m.StickerItems) == 0 && !a.mentions(m) {
		a.hint.Do(func() {
			a.log.Warn("a guild message arrived with empty content: switch on the Message Content intent " +
				"for this bot in the Discord developer portal (Bot → Privileged Gateway Intents)")
		})
		return bot.Inbound{}, place{}, false
	}
	pl := a.place(ctx, s, m.GuildID, m.ChannelID)
	text := a.clean(m)
	if !a.allowed(pl) {
		a.log.Debug("message ignored: not allowed here", "channel_id", pl.channelID, "message_id", m.ID)
		return bot.Inbound{}, place{}, false
	}
	items := a.mediaOf(m)
	if text == "" && len(items) == 0 {
		return bot.Inbound{}, place{}, false
	}
	in := bot.Inbound{
		Channel:    pl.ref(m.Author.ID),
		AuthorID:   m.Author.ID,
		AuthorName: displayName(m.Author, m.Member),
		Text:       text,
		MessageID:  m.ID,
		Received:   m.Timestamp,
		Media:      items,
	}
	speaker, toCharacter := a.repliesTo(ctx, s, pl, m)
	in.Mentioned = a.mentions(m) || toCharacter
	if speaker != "" {
		in.Addressed = []string{speaker}
	}
	return in, pl, true
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

// repliesTo reports whether m replies to the character (a message of the
// bot's, or of one of troupe's webhooks in this channel) and, for a webhook
// message, the name it was posted under: in a scene the cast member the
// reply is for. The channel's webhooks are looked up once after a restart,
// so replies to messages posted before it still count.
func (a *Adapter) repliesTo(ctx context.Context, s *discordgo.Session, pl place, m *discordgo.Message) (string, bool) {
	r := m.ReferencedMessage
	if r == nil || r.Author == nil {
		return "", false
	}
	if r.WebhookID == "" {
		if r.Author.ID != a.bot() {
			return "", false
		}
		return boldName(r.Content), true
	}
	if r.ChannelID != "" && r.ChannelID != m.ChannelID {
		return "", false
	}
	if !a.hooks.ours(r.WebhookID) && !pl.dm() {
		a.learnHooks(ctx, s, pl.hookChannel())
	}
	if !a.hooks.ours(r.WebhookID) {
		return "", false
	}
	return r.Author.Username, true
}

// boldName is the speaker's name a message posted as the bot starts with
// (speaker.prefix), or "".
func boldName(content string) string {
	rest, ok := strings.CutPrefix(content, "**")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "**\n")
	if !ok {
		return ""
	}
	return strings.ReplaceAll(name, "\\*", "*")
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
