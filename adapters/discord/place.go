package discord

import (
	"context"
	"sync"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

// place is where a conversation happens on Discord.
type place struct {
	// channelID is the channel, thread or DM channel messages go to.
	channelID string
	// parentID is a thread's parent channel; empty otherwise.
	parentID string
	// guildID is empty in direct messages.
	guildID string
}

func (pl place) dm() bool { return pl.guildID == "" }

// ref is the pipeline's name for the place; userID is the author, whose DM
// space it is.
func (pl place) ref(userID string) bot.ChannelRef {
	if pl.dm() {
		return bot.ChannelRef{Platform: bot.PlatformDiscord, ID: pl.channelID, SpaceKind: bot.SpaceUser, SpaceID: userID}
	}
	return bot.ChannelRef{Platform: bot.PlatformDiscord, ID: pl.channelID, SpaceKind: bot.SpaceGuild, SpaceID: pl.guildID, Group: true, ParentID: pl.parentID}
}

// hookChannel is the channel whose webhook speaks here.
func (pl place) hookChannel() string {
	if pl.parentID != "" {
		return pl.parentID
	}
	return pl.channelID
}

// threadID is the thread to name when executing the parent's webhook.
func (pl place) threadID() string {
	if pl.parentID != "" {
		return pl.channelID
	}
	return ""
}

// places finds out whether a guild channel is a thread, and its parent. The
// gateway's state knows channels and threads from GUILD_CREATE and
// THREAD_CREATE; anything else is asked of the REST API once and remembered.
type places struct {
	mu sync.Mutex
	m  map[string]place
}

func (a *Adapter) place(ctx context.Context, s *discordgo.Session, guildID, channelID string) place {
	if guildID == "" {
		return place{channelID: channelID}
	}
	a.places.mu.Lock()
	pl, ok := a.places.m[channelID]
	a.places.mu.Unlock()
	if ok {
		return pl
	}
	pl = place{channelID: channelID, guildID: guildID}
	var ch discordgo.Channel
	if c, err := s.State.Channel(channelID); err == nil {
		s.State.RLock()
		ch = *c
		s.State.RUnlock()
	} else if c, err := s.Channel(channelID, discordgo.WithContext(ctx)); err == nil {
		ch = *c
	} else {
		// Taking it for a plain channel is safe: a thread's own binding
		// still counts, and its replies fall back to the bot.
		a.log.Warn("look up channel", "channel_id", channelID, "err", err)
		return pl
	}
	if ch.IsThread() {
		pl.parentID = ch.ParentID
	}
	a.places.mu.Lock()
	if a.places.m == nil {
		a.places.m = map[string]place{}
	}
	if len(a.places.m) > 50000 {
		clear(a.places.m)
	}
	a.places.m[channelID] = pl
	a.places.mu.Unlock()
	return pl
}

// allowed reports whether the configuration lets the bot play at pl.
func (a *Adapter) allowed(pl place) bool {
	if pl.dm() {
		return a.cfg.AllowDMs
	}
	if len(a.guilds) > 0 && !a.guilds[pl.guildID] {
		return false
	}
	if len(a.channels) > 0 && !a.channels[pl.channelID] && (pl.parentID == "" || !a.channels[pl.parentID]) {
		return false
	}
	return true
}

// speakerOf is how a reply shows the speaker the engine names.
func speakerOf(sp bot.Speaker) speaker {
	return speaker{name: sp.Name, avatar: sp.AvatarURL, lang: sp.Language, cardID: sp.CardID, image: sp.Image}
}
