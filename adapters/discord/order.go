package discord

import (
	"github.com/bwmarrin/discordgo"
)

// The gateway delivers every event of the shard on one goroutine, in order.
// Handing an event to the engine may take a while — a message's pictures
// and voice notes are downloaded and read before it is stored — so the
// adapter does not do it there: each channel's events wait in their own
// queue (a.queues) and are submitted one after the other, in the order the
// gateway delivered them, while the gateway goes on with other channels and
// answers slash commands within Discord's three seconds.

// inOrder runs fn after the events of channelID queued before it, on the
// channel's own goroutine, as counted work; it reports false (and runs
// nothing) once the adapter has stopped.
func (a *Adapter) inOrder(s *discordgo.Session, channelID, where string, fn func()) bool {
	if !a.begin() {
		return false
	}
	a.queues.Do(channelID, func() {
		defer a.wg.Done()
		defer a.recovered(s, where, func() string { return channelID })
		fn()
	})
	return true
}
