package discord

import (
	"sync"

	"github.com/bwmarrin/discordgo"
)

// The gateway delivers every event of the shard on one goroutine, in order.
// Handing an event to the engine may take a while — a message's pictures
// and voice notes are downloaded and read before it is stored — so the
// adapter does not do it there: each channel's events wait in their own
// queue and are submitted one after the other, in the order the gateway
// delivered them, while the gateway goes on with other channels and
// answers slash commands within Discord's three seconds.

// queues holds, per channel, the events waiting to be submitted.
type queues struct {
	mu      sync.Mutex
	waiting map[string][]queued
}

// queued is one event's submission: fn, run under a recover that names
// where and tells the channel.
type queued struct {
	s     *discordgo.Session
	where string
	fn    func()
}

// inOrder runs fn after the events of channelID queued before it, on the
// channel's own goroutine, as counted work; it reports false (and runs
// nothing) once the adapter has stopped.
func (a *Adapter) inOrder(s *discordgo.Session, channelID, where string, fn func()) bool {
	if !a.begin() {
		return false
	}
	q := &a.queues
	q.mu.Lock()
	if q.waiting == nil {
		q.waiting = map[string][]queued{}
	}
	waiting, running := q.waiting[channelID]
	q.waiting[channelID] = append(waiting, queued{s: s, where: where, fn: fn})
	q.mu.Unlock()
	if !running {
		go a.drainQueue(channelID)
	}
	return true
}

// drainQueue submits channelID's waiting events in order until none is
// left. Each event was counted when queued.
func (a *Adapter) drainQueue(channelID string) {
	q := &a.queues
	for {
		q.mu.Lock()
		waiting := q.waiting[channelID]
		if len(waiting) == 0 {
			delete(q.waiting, channelID)
			q.mu.Unlock()
			return
		}
		ev := waiting[0]
		q.waiting[channelID] = waiting[1:]
		q.mu.Unlock()
		a.runQueued(channelID, ev)
	}
}

// runQueued runs one queued event, recovering a panic in it.
func (a *Adapter) runQueued(channelID string, ev queued) {
	defer a.wg.Done()
	defer a.recovered(ev.s, ev.where, func() string { return channelID })
	ev.fn()
}
