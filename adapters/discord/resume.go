package discord

import (
	"strconv"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

// resume has the pipeline answer what a process that stopped left accepted
// or unanswered in this shard's channels (bot.Engine.Resume): guild
// channels of the guilds this shard serves, and DMs on shard 0, which is
// the one Discord sends them to.
func (a *Adapter) resume(s *discordgo.Session) {
	ctx := a.work
	err := a.p.Resume(ctx, bot.PlatformDiscord, func(ref bot.ChannelRef) (bot.Sink, bool) {
		guildID := guildOf(ref)
		if !a.ownsGuild(guildID) {
			return nil, false
		}
		pl := a.place(ctx, s, guildID, ref.ID)
		if !a.allowed(pl) {
			return nil, false
		}
		return a.newReply(s, pl), true
	})
	if err != nil && ctx.Err() == nil {
		a.log.Warn("resume unanswered channels", "err", err)
	}
}

// ownsGuild reports whether this shard receives guildID's events ("" for
// DMs): Discord's (guild_id >> 22) % shard_count.
func (a *Adapter) ownsGuild(guildID string) bool {
	if a.cfg.ShardCount <= 1 {
		return true
	}
	if guildID == "" {
		return a.cfg.ShardID == 0
	}
	id, err := strconv.ParseUint(guildID, 10, 64)
	if err != nil {
		return false
	}
	return int((id>>22)%uint64(a.cfg.ShardCount)) == a.cfg.ShardID
}
