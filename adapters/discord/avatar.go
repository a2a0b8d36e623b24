package discord

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// A card with a picture and no avatar URL speaks through a webhook of its
// own, made with the picture as its avatar: Discord takes an avatar URL per
// message, but a picture only when a webhook is made or changed.

// avatarHookPrefix starts the names of the webhooks made for a card's
// picture: "troupe:<card>:<picture>", each part a short hash.
const avatarHookPrefix = webhookName + ":"

// maxChannelWebhooks is how many webhooks Discord allows in a channel.
const maxChannelWebhooks = 15

// errCodeMaxWebhooks is Discord's "Maximum number of webhooks reached".
const errCodeMaxWebhooks = 30007

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:4])
}

// avatarHookName names the webhook of a card's picture; the card part lets
// a webhook made for an older picture of the card be changed, not doubled.
func avatarHookName(cardID string, image []byte) string {
	return avatarHookPrefix + shortHash([]byte(cardID)) + ":" + shortHash(image)
}

// avatarType is the picture's type when it is one Discord takes as an
// avatar, else "".
func avatarType(image []byte) string {
	switch typ := http.DetectContentType(image); typ {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return typ
	}
	return ""
}

// avatarDataURI is the picture as Discord takes an avatar, or "" when it is
// not an image Discord shows.
func avatarDataURI(image []byte) string {
	typ := avatarType(image)
	if typ == "" {
		return ""
	}
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(image)
}

// usesPicture reports whether sp speaks through a webhook with its card's
// picture.
func (sp speaker) usesPicture() bool {
	return sp.avatar == "" && sp.cardID != "" && len(sp.image) > 0 && avatarType(sp.image) != ""
}

// speakerHook returns the webhook sp speaks through in channelID, and the
// key its slot is cached under: the card's own when it uses its picture
// (falling back to the channel's), else the channel's.
func (a *Adapter) speakerHook(ctx context.Context, s *discordgo.Session, channelID string, sp speaker) (*discordgo.Webhook, string, error) {
	if sp.usesPicture() {
		key := channelID + "/" + sp.cardID
		h, err := a.avatarWebhook(ctx, s, channelID, key, sp)
		if err == nil {
			return h, key, nil
		}
		if !errors.Is(err, errNoWebhook) {
			a.log.Warn("webhook with the card's picture; using the channel's", "channel_id", channelID, "card_id", sp.cardID, "err", err)
		}
	}
	h, err := a.webhook(ctx, s, channelID)
	return h, channelID, err
}

// avatarWebhook finds, changes or makes the webhook of sp's picture in
// channelID. In a channel at Discord's limit it takes over another card's
// picture webhook (the one used least recently); with none to take it
// returns errNoWebhook.
func (a *Adapter) avatarWebhook(ctx context.Context, s *discordgo.Session, channelID, key string, sp speaker) (*discordgo.Webhook, error) {
	if a.hooks.denied(channelID) {
		return nil, errNoWebhook
	}
	sl := a.hooks.slot(key)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	name := avatarHookName(sp.cardID, sp.image)
	if sl.hook != nil && sl.hook.Name == name && a.hooks.owns(sl.hook.ID, key) {
		a.hooks.use(sl.hook.ID, key)
		return sl.hook, nil
	}
	list, err := s.ChannelWebhooks(channelID, discordgo.WithContext(ctx))
	if forbidden(err) {
		a.hooks.deny(channelID)
		return nil, errNoWebhook
	}
	if err != nil {
		return nil, err
	}
	cardPart := avatarHookPrefix + shortHash([]byte(sp.cardID)) + ":"
	var older, spare *discordgo.Webhook
	for _, w := range list {
		if !a.ownHook(w) || !strings.HasPrefix(w.Name, avatarHookPrefix) {
			continue
		}
		switch {
		case w.Name == name:
			return a.keepAvatarHook(sl, key, w), nil
		case strings.HasPrefix(w.Name, cardPart):
			older = w
		case spare == nil || a.hooks.lastUsed(w.ID).Before(a.hooks.lastUsed(spare.ID)):
			// Another card's: taken over when the channel is full, the
			// one spoken through least recently first.
			spare = w
		}
	}
	uri := avatarDataURI(sp.image)
	if older == nil && len(list) < maxChannelWebhooks {
		w, err := s.WebhookCreate(channelID, name, uri, discordgo.WithContext(ctx))
		if err == nil && w.Token != "" {
			a.log.Info("created webhook with the card's picture", "channel_id", channelID, "card_id", sp.cardID, "webhook_id", w.ID)
			return a.keepAvatarHook(sl, key, w), nil
		}
		if err == nil {
			return nil, errors.New("discord: created webhook has no token")
		}
		if forbidden(err) {
			a.hooks.deny(channelID)
			return nil, errNoWebhook
		}
		if _, code := restStatus(err); code != errCodeMaxWebhooks {
			return nil, err
		}
	}
	target := older
	if target == nil {
		target = spare
	}
	if target == nil {
		return nil, errNoWebhook
	}
	w, err := s.WebhookEdit(target.ID, name, uri, "", discordgo.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	if w.Token == "" {
		w.Token = target.Token
	}
	a.log.Info("changed webhook to the card's picture", "channel_id", channelID, "card_id", sp.cardID, "webhook_id", w.ID)
	return a.keepAvatarHook(sl, key, w), nil
}

// ownHook reports whether w is a webhook this bot made.
func (a *Adapter) ownHook(w *discordgo.Webhook) bool {
	app, me := a.app(), a.bot()
	return w.Type == discordgo.WebhookTypeIncoming && w.Token != "" &&
		((app != "" && w.ApplicationID == app) || (w.User != nil && w.User.ID == me))
}

// keepAvatarHook caches w in the slot of key and makes key its owner: a card
// whose webhook was taken over finds out on its next message.
func (a *Adapter) keepAvatarHook(sl *hookSlot, key string, w *discordgo.Webhook) *discordgo.Webhook {
	sl.hook = w
	a.hooks.remember(w.ID)
	a.hooks.use(w.ID, key)
	return w
}
