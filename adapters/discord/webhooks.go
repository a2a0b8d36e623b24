package discord

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// webhookName names the webhook troupe creates in a channel; each message
// overrides it with the character's name.
const webhookName = "troupe"

// denyFor is how long a channel where the bot may not manage webhooks is left
// alone before the adapter tries again.
const denyFor = 10 * time.Minute

// hooks caches one webhook per channel, created on first use and reused.
type hooks struct {
	mu  sync.Mutex
	m   map[string]*hookSlot
	ids map[string]bool
	// owner and used are, for each webhook of a card's picture, the slot
	// key of the card it speaks for and when it last did.
	owner map[string]string
	used  map[string]time.Time
}

type hookSlot struct {
	// mu serializes the lookup so a channel gets one webhook.
	mu     sync.Mutex
	hook   *discordgo.Webhook
	denied time.Time
	// listed is true once the channel's webhooks were looked up.
	listed bool
}

func (h *hooks) slot(channelID string) *hookSlot {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]*hookSlot{}
	}
	sl, ok := h.m[channelID]
	if !ok {
		sl = &hookSlot{}
		h.m[channelID] = sl
	}
	return sl
}

// ours reports whether id is a webhook this adapter speaks through.
func (h *hooks) ours(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ids[id]
}

func (h *hooks) remember(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[string]bool{}
	}
	h.ids[id] = true
}

// use records that the webhook id speaks for the slot key now.
func (h *hooks) use(id, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner == nil {
		h.owner, h.used = map[string]string{}, map[string]time.Time{}
	}
	h.owner[id], h.used[id] = key, time.Now()
}

// owns reports whether the webhook id still speaks for the slot key.
func (h *hooks) owns(id, key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.owner[id] == key
}

// lastUsed is when the webhook id last spoke (zero when not since start).
func (h *hooks) lastUsed(id string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.used[id]
}

// denied reports whether the bot was refused webhooks in channelID lately.
func (h *hooks) denied(channelID string) bool {
	sl := h.slot(channelID)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return !sl.denied.IsZero() && time.Since(sl.denied) < denyFor
}

// drop forgets the webhook cached under key (it was deleted).
func (h *hooks) drop(key string) {
	sl := h.slot(key)
	sl.mu.Lock()
	sl.hook = nil
	sl.mu.Unlock()
}

// deny records that the bot may not use webhooks in channelID.
func (h *hooks) deny(channelID string) {
	sl := h.slot(channelID)
	sl.mu.Lock()
	sl.hook = nil
	sl.denied = time.Now()
	sl.mu.Unlock()
}

// webhook returns the channel's troupe webhook, finding or creating it. It
// returns errNoWebhook where the bot may not manage webhooks.
func (a *Adapter) webhook(ctx context.Context, s *discordgo.Session, channelID string) (*discordgo.Webhook, error) {
	sl := a.hooks.slot(channelID)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.hook != nil {
		return sl.hook, nil
	}
	if !sl.denied.IsZero() && time.Since(sl.denied) < denyFor {
		return nil, errNoWebhook
	}
	list, err := s.ChannelWebhooks(channelID, discordgo.WithContext(ctx))
	if forbidden(err) {
		sl.denied = time.Now()
		a.log.Info("no Manage Webhooks permission; the character speaks as the bot", "channel_id", channelID)
		return nil, errNoWebhook
	}
	if err != nil {
		return nil, err
	}
	var found *discordgo.Webhook
	for _, w := range list {
		if !a.ownHook(w) {
			continue
		}
		// Every troupe webhook here speaks for a character (replies to
		// its messages count), but the webhooks of cards' pictures are
		// not the channel's.
		a.hooks.remember(w.ID)
		if found == nil && !strings.HasPrefix(w.Name, avatarHookPrefix) {
			found = w
		}
	}
	if found != nil {
		sl.hook = found
		return found, nil
	}
	w, err := s.WebhookCreate(channelID, webhookName, "", discordgo.WithContext(ctx))
	if forbidden(err) {
		sl.denied = time.Now()
		return nil, errNoWebhook
	}
	if err != nil {
		return nil, err
	}
	if w.Token == "" {
		return nil, errors.New("discord: created webhook has no token")
	}
	a.log.Info("created webhook", "channel_id", channelID, "webhook_id", w.ID)
	sl.hook = w
	a.hooks.remember(w.ID)
	return w, nil
}

// learnHooks looks up, once per channel and without creating one, which of
// channelID's webhooks are troupe's, so a reply to a character's message
// posted before a restart still counts.
func (a *Adapter) learnHooks(ctx context.Context, s *discordgo.Session, channelID string) {
	sl := a.hooks.slot(channelID)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.hook != nil || sl.listed || (!sl.denied.IsZero() && time.Since(sl.denied) < denyFor) {
		return
	}
	sl.listed = true
	list, err := s.ChannelWebhooks(channelID, discordgo.WithContext(ctx))
	if forbidden(err) {
		sl.denied = time.Now()
		return
	}
	if err != nil {
		a.log.Debug("look up the channel's webhooks", "channel_id", channelID, "err", err)
		return
	}
	for _, w := range list {
		if !a.ownHook(w) {
			continue
		}
		a.hooks.remember(w.ID)
		if sl.hook == nil && !strings.HasPrefix(w.Name, avatarHookPrefix) {
			sl.hook = w
		}
	}
}
