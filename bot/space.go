package bot

import (
	"context"

	"troupe/cards"
	"troupe/models"
)

// channelIn returns the stored channel of ref, creating it (bound to
// cardID) in ref's space if it is new, and moving it there if it is in
// another (see keepSpace).
func (p *Pipeline) channelIn(ctx context.Context, ref ChannelRef, cardID string) (models.Channel, error) {
	if err := p.opt.Store.EnsureSpace(ctx, models.Space{ID: ref.Space(), Platform: ref.Platform, Kind: ref.SpaceKind, ExternalID: ref.SpaceID}); err != nil {
		return models.Channel{}, err
	}
	ch, err := p.opt.Store.EnsureChannel(ctx, models.Channel{ID: ref.Key(), Platform: ref.Platform, ExternalID: ref.ID, SpaceID: ref.Space(), CardID: cardID})
	if err != nil {
		return ch, err
	}
	if _, err := p.keepSpace(ctx, &ch, ref); err != nil {
		return ch, err
	}
	return ch, nil
}

// keepSpace moves ch into ref's space when the platform now puts it in
// another: a Discord channel made private or public, or discord.space
// changed. The channel's current chat does not come along. Its story was
// told to the audience of the old space, and its memory (summary, recap,
// perceptions, beliefs) lives there; carried into the new space it would
// reach an audience that never saw it, or take a private story public. So
// the chat ends where it was (its recap is owed there, as after /new) and
// the channel's next turn opens a new chat in the new space. ch is updated;
// the chat that ended is returned ("" when the channel did not move).
// The space must exist.
func (p *Pipeline) keepSpace(ctx context.Context, ch *models.Channel, ref ChannelRef) (string, error) {
	if ch.SpaceID == ref.Space() {
		return "", nil
	}
	from := ch.SpaceID
	ended, moved, err := p.opt.Store.MoveChannel(ctx, ch.ID, ref.Space())
	if err != nil {
		return "", err
	}
	ch.SpaceID, ch.CurrentChatID = ref.Space(), ""
	if !moved {
		return "", nil
	}
	p.log.Info("channel moved to another memory space; its chat stays in the old one",
		"channel_id", ch.ID, "from_space", from, "to_space", ch.SpaceID, "ended_chat_id", ended)
	if ended != "" && p.opt.Jobs != nil {
		if err := p.opt.Jobs.ChatEnded(ctx, ended); err != nil {
			// The sweeper finds the owed recap.
			p.log.Warn("enqueue recap of a chat left in its space", "chat_id", ended, "err", err)
		}
	}
	return ended, nil
}

// openChat starts the channel's chat: of the cast a scene had before the
// channel moved (when it had several members still in the library), else
// of card alone.
func (p *Pipeline) openChat(ctx context.Context, ch models.Channel, card cards.Card, castBefore []string, user string) (models.Chat, []models.CastMember, error) {
	var cast []cards.Card
	for _, id := range castBefore {
		if c, ok := p.opt.Cards.Get(id); ok {
			cast = append(cast, c)
		}
	}
	if len(cast) > 1 {
		return p.startScene(ctx, ch, cast, user)
	}
	// The new chat's cast row names its card as the space knows it, which
	// may not be the card's name: the turn keys its memory by that row.
	return p.startChatCast(ctx, ch, card, user)
}
