package bot

import (
	"context"
	"errors"

	"troupe/cards"
	"troupe/models"
)

// Bind makes cardID the channel's card; if the channel's current chat plays
// another card, a new chat of cardID starts. An empty cardID changes nothing.
func (p *Pipeline) Bind(ctx context.Context, ref ChannelRef, cardID string) error {
	if cardID == "" {
		return nil
	}
	card, ok := p.opt.Cards.Get(cardID)
	if !ok {
		return ErrNoCard
	}
	return p.withLane(ctx, Inbound{Channel: ref}, func() error {
		if err := p.opt.Store.EnsureSpace(ctx, models.Space{ID: ref.Space(), Platform: ref.Platform, Kind: ref.SpaceKind, ExternalID: ref.SpaceID}); err != nil {
			return err
		}
		ch, err := p.opt.Store.EnsureChannel(ctx, models.Channel{ID: ref.Key(), Platform: ref.Platform, ExternalID: ref.ID, SpaceID: ref.Space(), CardID: cardID})
		if err != nil {
			return err
		}
		if ch.CardID == cardID && ch.CurrentChatID != "" {
			return nil
		}
		if err := p.opt.Store.SetChannelCard(ctx, ch.ID, cardID); err != nil {
			return err
		}
		if ch.CurrentChatID == "" {
			return nil
		}
		cur, err := p.opt.Store.Chat(ctx, ch.CurrentChatID)
		if err == nil && cur.CardID == cardID {
			return nil
		}
		_, err = p.startChat(ctx, ch, card, "")
		return err
	})
}

// Greet shows the last message of the channel's current chat (the greeting
// of a new chat), starting the chat if there is none.
func (p *Pipeline) Greet(ctx context.Context, in Inbound, sink Sink) error {
	var head string
	var card cards.Card
	err := p.withLane(ctx, in, func() error {
		cs, err := p.resolve(ctx, in)
		if err != nil {
			return err
		}
		head, card = cs.chat.HeadID, cs.card
		return nil
	})
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, p.text(p.opt.Language, msgNoCard))
	}
	if err != nil || head == "" {
		return err
	}
	m, err := p.opt.Store.Message(ctx, head)
	if err != nil {
		return err
	}
	if m.Role == "assistant" {
		speak(ctx, sink, card)
		return sink.Finish(ctx, m.Content)
	}
	return nil
}

// ChannelBinding returns the card bound to a channel ("" when none) and
// whether only mentions and replies count there. A channel troupe has never
// seen is unbound.
func (p *Pipeline) ChannelBinding(ctx context.Context, ref ChannelRef) (string, bool, error) {
	ch, err := p.opt.Store.Channel(ctx, ref.Key())
	if errors.Is(err, models.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return ch.CardID, ch.MentionOnly, nil
}
