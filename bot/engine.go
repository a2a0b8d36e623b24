package bot

import (
	"context"
	"errors"

	"troupe/cards"
	"troupe/models"
	"troupe/text"
)

// Engine is what a platform adapter needs from troupe. Adapters depend on
// it, never on *Pipeline, and import neither models, memory nor jobs: what
// they keep durable (an update offset) goes through the engine too.
type Engine interface {
	// Submit orders one event (a message, an edit, a command, a button
	// press) in its channel and returns at once; the Receipt tells whether
	// it was ignored, when it was stored and how its work ended. The engine
	// decides which channels play; an EventOpen sets a channel's cards and
	// opens its chat.
	Submit(ctx context.Context, ev Event, sink Sink) Receipt
	// Resume answers what a stopped process left in the inbox.
	Resume(ctx context.Context, platform string, sinkFor func(ChannelRef) (Sink, bool)) error
	Cards() *cards.Library
	// AdapterState and SaveAdapterState keep a small durable value for an
	// adapter (Telegram's update offset); a key never saved reads "".
	AdapterState(ctx context.Context, key string) (string, error)
	SaveAdapterState(ctx context.Context, key, value string) error
	// Recovered is called by an adapter that recovered v, a panic, while
	// handling an event (where names it, such as "discord_message"): the
	// engine logs and counts it and returns the short notice the adapter
	// answers the channel with.
	Recovered(where string, v any) (notice string)
}

var _ Engine = (*Pipeline)(nil)

// AdapterState returns the value saved under key, "" when none was.
func (p *Pipeline) AdapterState(ctx context.Context, key string) (string, error) {
	v, err := p.opt.Store.Setting(ctx, key)
	if errors.Is(err, models.ErrNotFound) {
		return "", nil
	}
	return v, err
}

// SaveAdapterState saves value under key.
func (p *Pipeline) SaveAdapterState(ctx context.Context, key, value string) error {
	return p.opt.Store.PutSetting(ctx, key, value)
}

// StableID fits a platform id into the store's id columns: a short id is
// kept, a long one replaced by a stable stand-in, the same on every run.
func StableID(id string) string { return text.FitID(id, models.IDSize) }

// FitName fits a display name into the store's name columns.
func FitName(name string) string { return models.FitName(name, models.NameSize) }
