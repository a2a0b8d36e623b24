package discord

import (
	"context"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/config"
)

// place is where a conversation happens on Discord.
type place struct {
	// channelID is the channel, thread or DM channel messages go to.
	channelID string
	// parentID is a thread's parent channel; empty otherwise.
	parentID string
	// guildID is empty in direct messages.
	guildID string
	// audience is the channel whose audience the place has: the channel
	// itself, a public thread's parent, a private thread itself.
	audience string
	// private is true when @everyone cannot view the audience channel (or
	// it is a private thread): its story is for fewer people than the
	// guild's public channels.
	private bool
	// unknown is true when the channel could not be looked up, so neither
	// its parent nor its audience is known.
	unknown bool
	// space is discord.space, how the place's memory space is chosen.
	space string
}

func (pl place) dm() bool { return pl.guildID == "" }

// ref is the pipeline's name for the place; userID is the author, whose DM
// space it is. A guild channel's space follows discord.space: with
// "audience", a private channel or thread is a space of its own (a public
// thread shares its parent's) and the public channels share the guild's;
// "channel" gives every channel its own; "guild" one per guild. The
// guild's space keeps the id it always had, so memory written before
// discord.space existed stays where it was.
func (pl place) ref(userID string) bot.ChannelRef {
	if pl.dm() {
		return bot.ChannelRef{Platform: bot.PlatformDiscord, ID: pl.channelID, SpaceKind: bot.SpaceUser, SpaceID: userID}
	}
	ref := bot.ChannelRef{Platform: bot.PlatformDiscord, ID: pl.channelID, SpaceKind: bot.SpaceGuild, SpaceID: pl.guildID, Group: true, ParentID: pl.parentID}
	if pl.space == config.SpaceChannel || (pl.space != config.SpaceGuild && pl.private) {
		ref.SpaceKind, ref.SpaceID = bot.SpaceChannel, channelSpace(pl.guildID, pl.audience)
	}
	return ref
}

// channelSpace is the SpaceID of a channel's own space; guildOf reads the
// guild back.
func channelSpace(guildID, channelID string) string { return guildID + "/" + channelID }

// guildOf is the guild of a stored space ("" for a user's DMs).
func guildOf(ref bot.ChannelRef) string {
	switch ref.SpaceKind {
	case bot.SpaceGuild:
		return ref.SpaceID
	case bot.SpaceChannel:
		g, _, _ := strings.Cut(ref.SpaceID, "/")
		return g
	}
	return ""
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

// places finds out whether a guild channel is a thread, its parent, and
// who can see it. The gateway's state knows channels and threads from
// GUILD_CREATE and THREAD_CREATE, and the guild's @everyone role;
// anything else is asked of the REST API once and remembered until a
// CHANNEL_UPDATE, THREAD_UPDATE or @everyone's GUILD_ROLE_UPDATE says it
// changed (forgetPlace).
type places struct {
	mu sync.Mutex
	m  map[string]place
	// gen counts forgets, so that a lookup that raced one is not kept.
	gen uint64
}

func (a *Adapter) place(ctx context.Context, s *discordgo.Session, guildID, channelID string) place {
	if guildID == "" {
		return place{channelID: channelID}
	}
	a.places.mu.Lock()
	pl, ok := a.places.m[channelID]
	gen := a.places.gen
	a.places.mu.Unlock()
	if ok {
		return pl
	}
	pl = place{channelID: channelID, guildID: guildID, audience: channelID, space: a.cfg.Space}
	ch, ok := a.lookChannel(ctx, s, channelID)
	if !ok {
		// Not remembered: the next message asks again. allowed keeps the
		// bot out of a place whose audience it does not know, unless one
		// space holds the whole guild anyway.
		pl.unknown = true
		return pl
	}
	switch {
	case ch.Type == discordgo.ChannelTypeGuildPrivateThread:
		pl.parentID, pl.private = ch.ParentID, true
	case ch.IsThread():
		pl.parentID, pl.audience = ch.ParentID, ch.ParentID
		parent := a.place(ctx, s, guildID, ch.ParentID)
		if parent.unknown {
			pl.unknown = true
			return pl
		}
		pl.private = parent.private
	default:
		pl.private = hidden(s, guildID, ch)
	}
	a.places.mu.Lock()
	defer a.places.mu.Unlock()
	if a.places.gen != gen {
		return pl
	}
	if a.places.m == nil {
		a.places.m = map[string]place{}
	}
	if len(a.places.m) > 50000 {
		clear(a.places.m)
	}
	a.places.m[channelID] = pl
	return pl
}

// lookChannel is the channel with channelID from the gateway's state, else
// from the REST API.
func (a *Adapter) lookChannel(ctx context.Context, s *discordgo.Session, channelID string) (discordgo.Channel, bool) {
	if c, err := s.State.Channel(channelID); err == nil {
		s.State.RLock()
		defer s.State.RUnlock()
		return *c, true
	}
	c, err := s.Channel(channelID, discordgo.WithContext(ctx))
	if err != nil {
		a.log.Warn("look up channel", "channel_id", channelID, "err", err)
		return discordgo.Channel{}, false
	}
	return *c, true
}

// hidden reports whether @everyone cannot view ch: the guild's @everyone
// role (when the state knows it; else taken to view channels, as it does
// by default) with ch's overwrite for that role applied. Overwrites for
// other roles and members only let some people in; the channel is private
// all the same.
func hidden(s *discordgo.Session, guildID string, ch discordgo.Channel) bool {
	perms := int64(discordgo.PermissionViewChannel)
	if r, err := s.State.Role(guildID, guildID); err == nil {
		s.State.RLock()
		perms = r.Permissions
		s.State.RUnlock()
	}
	if perms&discordgo.PermissionAdministrator != 0 {
		return false
	}
	for _, o := range ch.PermissionOverwrites {
		// The @everyone role's id is the guild's.
		if o != nil && o.Type == discordgo.PermissionOverwriteTypeRole && o.ID == guildID {
			perms = perms&^o.Deny | o.Allow
		}
	}
	return perms&discordgo.PermissionViewChannel == 0
}

// forgetPlace drops what the adapter remembers of channelID and of the
// threads in it, after Discord said it changed.
func (a *Adapter) forgetPlace(channelID string) {
	a.places.mu.Lock()
	defer a.places.mu.Unlock()
	a.places.gen++
	for id, pl := range a.places.m {
		if id == channelID || pl.parentID == channelID {
			delete(a.places.m, id)
		}
	}
}

// forgetGuildPlaces drops what the adapter remembers of guildID's
// channels, after its @everyone role changed.
func (a *Adapter) forgetGuildPlaces(guildID string) {
	a.places.mu.Lock()
	defer a.places.mu.Unlock()
	a.places.gen++
	for id, pl := range a.places.m {
		if pl.guildID == guildID {
			delete(a.places.m, id)
		}
	}
}

func (a *Adapter) onChannelUpdate(_ *discordgo.Session, e *discordgo.ChannelUpdate) {
	if e.Channel != nil {
		a.forgetPlace(e.ID)
	}
}

func (a *Adapter) onChannelDelete(_ *discordgo.Session, e *discordgo.ChannelDelete) {
	if e.Channel != nil {
		a.forgetPlace(e.ID)
	}
}

func (a *Adapter) onThreadUpdate(_ *discordgo.Session, e *discordgo.ThreadUpdate) {
	if e.Channel != nil {
		a.forgetPlace(e.ID)
	}
}

func (a *Adapter) onRoleUpdate(_ *discordgo.Session, e *discordgo.GuildRoleUpdate) {
	if e.GuildRole != nil && e.Role != nil && e.Role.ID == e.GuildID {
		a.forgetGuildPlaces(e.GuildID)
	}
}

// allowed reports whether the configuration lets the bot play at pl.
func (a *Adapter) allowed(pl place) bool {
	if pl.dm() {
		return a.cfg.AllowDMs
	}
	if pl.unknown && a.cfg.Space != config.SpaceGuild {
		// Its story could be a private one's, or go into one.
		return false
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
