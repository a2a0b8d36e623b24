package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

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
	err := p.withLane(ctx, in, func() error {
		st, err := p.resolve(ctx, in)
		if err != nil {
			return err
		}
		head = st.chat.HeadID
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
		return sink.Finish(ctx, m.Content)
	}
	return nil
}

// confirmation is a yes/no question waiting for its author's answer.
type confirmation struct {
	userKey string
	channel string
	expires time.Time
	// run is called with the answer; it writes the outcome to sink.
	run func(ctx context.Context, yes bool, sink Sink) error
}

// confirmations holds the open questions.
type confirmations struct {
	mu   sync.Mutex
	open map[string]confirmation
}

// ConfirmTTL is how long a yes/no question stays open.
const ConfirmTTL = 2 * time.Minute

func (c *confirmations) add(cf confirmation) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[string]confirmation{}
	}
	now := time.Now()
	for k, v := range c.open {
		if now.After(v.expires) {
			delete(c.open, k)
		}
	}
	c.open[token] = cf
	return token
}

func (c *confirmations) take(token string) (confirmation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cf, ok := c.open[token]
	delete(c.open, token)
	return cf, ok
}

// ask puts a yes/no question to the author of in: with buttons when the sink
// can, else as a notice answered by the next message.
func (p *Pipeline) ask(ctx context.Context, in Inbound, question string, sink Sink, run func(ctx context.Context, yes bool, sink Sink) error) error {
	expires := p.opt.Now().Add(ConfirmTTL)
	token := p.confirm.add(confirmation{userKey: in.UserKey(), channel: in.Channel.Key(), expires: expires, run: run})
	if c, ok := sink.(Confirmer); ok {
		return c.Confirm(ctx, question, token, expires)
	}
	return sink.Notice(ctx, question)
}

// Answer delivers the answer to a yes/no question. Expired, unknown or
// already answered questions, and answers from someone else, change nothing.
func (p *Pipeline) Answer(ctx context.Context, in Inbound, token string, yes bool, sink Sink) error {
	lang := p.langOf(in)
	cf, ok := p.confirm.take(token)
	switch {
	case !ok:
		return sink.Notice(ctx, p.text(lang, msgConfirmGone))
	case cf.userKey != in.UserKey() || cf.channel != in.Channel.Key():
		// Put it back: it is still its author's to answer.
		p.confirm.mu.Lock()
		p.confirm.open[token] = cf
		p.confirm.mu.Unlock()
		return sink.Notice(ctx, p.text(lang, msgNotYours))
	case p.opt.Now().After(cf.expires):
		return sink.Notice(ctx, p.text(lang, msgConfirmGone))
	case !yes:
		return sink.Notice(ctx, p.text(lang, msgCancelled))
	}
	return cf.run(ctx, true, sink)
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

// Revise replaces the text of a message still waiting for its turn (a user
// edited it before the reply started). It reports whether one was waiting.
func (p *Pipeline) Revise(in Inbound) bool {
	if in.MessageID == "" {
		return false
	}
	l := p.lane(in.Channel.Key())
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.pending {
		if l.pending[i].in.MessageID == in.MessageID && l.pending[i].in.AuthorID == in.AuthorID {
			l.pending[i].in.Text = in.Text
			return true
		}
	}
	return false
}
