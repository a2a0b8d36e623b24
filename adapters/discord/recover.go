package discord

import (
	"github.com/bwmarrin/discordgo"
)

// guarded wraps h, a gateway event handler, so that a panic in it is
// recovered (see recovered) and the event's channel, from channel, told.
func guarded[E any](a *Adapter, where string, channel func(*E) string, h func(*discordgo.Session, *E)) func(*discordgo.Session, *E) {
	return func(s *discordgo.Session, e *E) {
		defer a.recovered(s, where, func() string { return channel(e) })
		h(s, e)
	}
}

// recovered, deferred, recovers a panic in the adapter's handling of an
// event: the engine logs and counts it, and the channel that channel
// returns, unless "" (or channel is nil), gets the engine's short notice.
// The gateway and the other channels go on.
func (a *Adapter) recovered(s *discordgo.Session, where string, channel func() string) {
	v := recover()
	if v == nil {
		return
	}
	notice := a.p.Recovered(where, v)
	if s == nil || channel == nil {
		return
	}
	channelID := safeChannel(channel)
	if channelID == "" {
		return
	}
	a.spawn(func() {
		if _, err := s.ChannelMessageSend(channelID, notice); err != nil {
			a.log.Warn("send the notice of a recovered panic", "channel_id", channelID, "err", err)
		}
	})
}

// safeChannel is channel(), or "" when an event too broken to name its
// channel panics there.
func safeChannel(channel func() string) (id string) {
	defer func() {
		if recover() != nil {
			id = ""
		}
	}()
	return channel()
}
