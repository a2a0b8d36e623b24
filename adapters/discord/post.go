package discord

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/media"
	troupetext "troupe/text"
)

// maxMessage is Discord's message length limit, in characters.
const maxMessage = 2000

// speaker is the character a reply speaks as.
type speaker struct {
	name   string
	avatar string
	lang   string
	// cardID and image let a card with a picture and no avatar URL speak
	// through a webhook made with the picture.
	cardID string
	image  []byte
}

// prefix is what a message posted as the bot starts with: the character's
// name in bold.
func (sp speaker) prefix() string {
	if sp.name == "" {
		return ""
	}
	return "**" + strings.ReplaceAll(sp.name, "*", "\\*") + "**\n"
}

// limit is how long one piece of a reply may be so that it fits with or
// without the prefix.
func (sp speaker) limit() int { return maxMessage - utf8.RuneCountInString(sp.prefix()) }

// hookName is the character's name as a webhook username: at most 80
// characters (Discord refuses longer ones).
func (sp speaker) hookName() string {
	return troupetext.CutRunes(strings.TrimSpace(sp.name), 80)
}

// posted is one message of a reply.
type posted struct {
	id string
	// hook is the webhook that posted it; nil when the bot did.
	hook   *discordgo.Webhook
	prefix string
	// at is when it was last written (the swipe buttons keep the pace).
	at time.Time
}

func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// post sends one piece of the character's text to pl: through the channel's
// webhook when it can, else (or when asBot) as the bot with the name in bold
// (first says whether this is the reply's first message).
func (a *Adapter) post(ctx context.Context, s *discordgo.Session, pl place, sp speaker, content string, first, asBot bool) (*posted, error) {
	return a.send(ctx, s, pl, sp, content, nil, first, asBot)
}

// send is post with a file attached when f is not nil.
func (a *Adapter) send(ctx context.Context, s *discordgo.Session, pl place, sp speaker, content string, f *media.File, first, asBot bool) (*posted, error) {
	if !pl.dm() && !asBot {
		for attempt := 0; attempt < 2; attempt++ {
			h, key, err := a.speakerHook(ctx, s, pl.hookChannel(), sp)
			if err != nil {
				if !errors.Is(err, errNoWebhook) {
					a.log.Warn("find webhook; posting as the bot", "channel_id", pl.channelID, "err", err)
				}
				break
			}
			m, err := s.WebhookThreadExecute(h.ID, h.Token, true, pl.threadID(), &discordgo.WebhookParams{
				Content: content, Username: sp.hookName(), AvatarURL: sp.avatar, AllowedMentions: noMentions(), Files: upload(f),
			}, discordgo.WithContext(ctx))
			if err == nil {
				return &posted{id: m.ID, hook: h, at: time.Now()}, nil
			}
			if gone(err) {
				a.hooks.drop(key)
				continue
			}
			if forbidden(err) {
				a.hooks.deny(pl.hookChannel())
			}
			if !permanent(err) {
				return nil, err
			}
			// Discord refused the webhook message (a name it does not
			// allow, an avatar URL it cannot use): say it as the bot.
			a.log.Warn("webhook refused the message; posting as the bot", "channel_id", pl.channelID, "err", err)
			break
		}
	}
	prefix := ""
	if first {
		prefix = sp.prefix()
	}
	m, err := s.ChannelMessageSendComplex(pl.channelID, &discordgo.MessageSend{
		Content: prefix + content, AllowedMentions: noMentions(), Files: upload(f),
	}, discordgo.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	return &posted{id: m.ID, prefix: prefix, at: time.Now()}, nil
}

// edit replaces the text of a posted message.
func (a *Adapter) edit(ctx context.Context, s *discordgo.Session, pl place, p *posted, content string) error {
	full := p.prefix + content
	if p.hook != nil {
		uri := discordgo.EndpointWebhookMessage(p.hook.ID, p.hook.Token, p.id) + threadQuery(pl)
		_, err := s.RequestWithBucketID("PATCH", uri, &discordgo.WebhookEdit{Content: &full, AllowedMentions: noMentions()},
			discordgo.EndpointWebhookToken("", ""), discordgo.WithContext(ctx))
		return err
	}
	_, err := s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: p.id, Channel: pl.channelID, Content: &full,
		AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
	return err
}

// remove deletes a posted message.
func (a *Adapter) remove(ctx context.Context, s *discordgo.Session, pl place, p *posted) error {
	if p.hook != nil {
		uri := discordgo.EndpointWebhookMessage(p.hook.ID, p.hook.Token, p.id) + threadQuery(pl)
		_, err := s.RequestWithBucketID("DELETE", uri, nil, discordgo.EndpointWebhookToken("", ""), discordgo.WithContext(ctx))
		return err
	}
	return s.ChannelMessageDelete(pl.channelID, p.id, discordgo.WithContext(ctx))
}

func threadQuery(pl place) string {
	if t := pl.threadID(); t != "" {
		return "?" + url.Values{"thread_id": {t}}.Encode()
	}
	return ""
}

// notice posts troupe's own short message at pl as the bot, answering ref
// when given.
func (a *Adapter) notice(ctx context.Context, s *discordgo.Session, pl place, ref *discordgo.Message, text string) error {
	for i, piece := range bot.Split(text, maxMessage) {
		ms := &discordgo.MessageSend{Content: piece, AllowedMentions: noMentions()}
		if i == 0 && ref != nil {
			ms.Reference = &discordgo.MessageReference{MessageID: ref.ID, ChannelID: ref.ChannelID, GuildID: ref.GuildID, FailIfNotExists: new(bool)}
		}
		err := a.retry(ctx, func() error {
			_, err := s.ChannelMessageSendComplex(pl.channelID, ms, discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// retry calls fn until it succeeds, fails for good, or has failed three
// times, pausing longer each time.
func (a *Adapter) retry(ctx context.Context, fn func() error) error {
	wait := a.tuning.retryWait
	var err error
	for attempt := 1; ; attempt++ {
		err = fn()
		if err == nil || permanent(err) || ctx.Err() != nil || attempt == 3 {
			return err
		}
		a.log.Warn("discord request failed; trying again", "attempt", attempt, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait *= 2
	}
}
