package bot

import (
	"context"
	"errors"
	"sync"
	"time"

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
	defer p.forgetBinding(ref)
	return p.withLane(ctx, Inbound{Channel: ref}, func() error {
		ch, err := p.channelIn(ctx, ref, cardID)
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
		if _, err = p.startChat(ctx, ch, card, ""); err != nil {
			return err
		}
		p.chatEnded(ctx, ch.CurrentChatID)
		return nil
	})
}

// chatEnded tells the job queue that the chat ended (another card or cast
// took the channel): its recap is owed now and, with the recorder, its last
// turn, which no /regen can reach any more. A failed enqueue is found again
// by the sweeper.
func (p *Pipeline) chatEnded(ctx context.Context, chatID string) {
	if p.opt.Jobs == nil || chatID == "" {
		return
	}
	if err := p.opt.Jobs.ChatEnded(ctx, chatID); err != nil {
		p.log.Warn("enqueue the work an ended chat owes", "chat_id", chatID, "err", err)
	}
}

// open is an EventOpen's work: it binds the channel to cast (one card, or
// a scene of several) and shows the chat's opening. Binding keeps a chat
// that already plays cast, so reopening a session resumes it and shows its
// last reply instead of greeting again. An unknown card or a cast larger
// than scene.max_cast is an error: the session cannot open.
func (p *Pipeline) open(ctx context.Context, in Inbound, cast []string, sink Sink) error {
	if err := p.BindCast(ctx, in.Channel, cast); err != nil {
		return err
	}
	return p.Greet(ctx, in, sink)
}

// CardChooser is a Sink that can offer the card library as a choice (on
// Telegram, a keyboard whose buttons come back as an EventButton with
// Event.Card). /start without a card, where the library holds several,
// offers them through it; any other sink gets the greeting.
type CardChooser interface {
	ChooseCard(ctx context.Context, list []cards.Card) error
}

// cmdStart opens the channel's chat: "/start NAME" (a deep link) chooses
// that card first; without one, a sink that can offers the cards to choose
// from, and otherwise the current chat's last message is shown. An
// argument that names no card is treated as none.
func (cm *commands) cmdStart(ctx context.Context, in Inbound, args string, sink Sink) error {
	if args != "" {
		if c, ok := cm.cards.Find(args); ok {
			return cm.chooseCard(ctx, in, c.ID, sink)
		}
	}
	if cc, ok := sink.(CardChooser); ok {
		if list := cm.cards.List(); len(list) > 1 {
			return cc.ChooseCard(ctx, list)
		}
	}
	return cm.greet(ctx, in, sink)
}

// chooseCard makes cardID the channel's card and shows its greeting (or,
// when the channel already plays it, its last message). In a group only
// those who may manage the channel choose.
func (cm *commands) chooseCard(ctx context.Context, in Inbound, cardID string, sink Sink) error {
	lang := cm.p.langOf(in)
	if in.Channel.Group && !in.CanManage {
		return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
	}
	err := cm.p.Bind(ctx, in.Channel, cardID)
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, cm.p.text(lang, msgUnknownCard, cardID))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "choose card", err)
	}
	return cm.greet(ctx, in, sink)
}

// greet is Greet for a command: a failure is told to the user as well.
func (cm *commands) greet(ctx context.Context, in Inbound, sink Sink) error {
	if err := cm.p.Greet(ctx, in, sink); err != nil {
		return cm.p.internal(ctx, sink, "greet", err)
	}
	return nil
}

// Greet shows the last message of the channel's current chat (the greeting
// of a new chat), starting the chat if there is none.
func (p *Pipeline) Greet(ctx context.Context, in Inbound, sink Sink) error {
	var head string
	var card cards.Card
	var cs chatState
	err := p.withLane(ctx, in, func() (err error) {
		cs, err = p.resolve(ctx, in)
		if err != nil {
			return err
		}
		head, card = cs.chat.HeadID, cs.card
		return nil
	})
	if err == nil && cs.scene() {
		return p.greetScene(ctx, cs, sink)
	}
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
		speak(ctx, sink, card, false)
		p.offerGreeting(ctx, sink, card, m, cs.user)
		return sink.Finish(ctx, m.Content)
	}
	return nil
}

// bindingTTL bounds how stale a cached binding may be: /card set and Bind
// in this process clear the channel's entry at once; a change another
// process made shows after at most this long.
const bindingTTL = 30 * time.Second

// maxBindings bounds the cache; past it the cache starts over.
const maxBindings = 10000

// binding is a channel's card ("" when none) and mention setting, as read
// at some time.
type binding struct {
	cardID      string
	mentionOnly bool
	at          time.Time
}

// bindings caches recent bindings so that busy channels cost no query per
// message.
type bindings struct {
	mu sync.Mutex
	m  map[string]binding
	// gen counts forgets, so that a lookup that raced one is not cached.
	gen uint64
}

// binding returns the channel's binding; a channel troupe has never seen
// is unbound.
func (p *Pipeline) binding(ctx context.Context, ref ChannelRef) (binding, error) {
	key, c := ref.Key(), &p.binds
	c.mu.Lock()
	b, ok := c.m[key]
	gen := c.gen
	c.mu.Unlock()
	if ok && time.Since(b.at) < bindingTTL {
		return b, nil
	}
	b = binding{at: time.Now()}
	ch, err := p.opt.Store.Channel(ctx, key)
	switch {
	case err == nil:
		b.cardID, b.mentionOnly = ch.CardID, ch.MentionOnly
	case !errors.Is(err, models.ErrNotFound):
		return binding{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		if c.m == nil || len(c.m) >= maxBindings {
			c.m = map[string]binding{}
		}
		c.m[key] = b
	}
	return b, nil
}

// forgetBinding drops the cached binding of ref after this process changed
// it.
func (p *Pipeline) forgetBinding(ref ChannelRef) {
	p.binds.mu.Lock()
	delete(p.binds.m, ref.Key())
	p.binds.gen++
	p.binds.mu.Unlock()
}

// plays decides whether the character hears in. A guild channel plays only
// when a card is bound to it; a thread without a card of its own takes its
// parent channel's (ChannelRef.ParentID) and keeps it. Elsewhere (direct
// messages, private chats, the console) the channel always plays, with the
// default card until one is chosen. In a group channel set to mention-only,
// only messages that mention the character or reply to it (Mentioned)
// count. Errors come from the store.
func (p *Pipeline) plays(ctx context.Context, in Inbound) (bool, error) {
	ref := in.Channel
	guild := ref.guild()
	if !guild && (!ref.Group || in.Mentioned) {
		return true, nil
	}
	b, err := p.binding(ctx, ref)
	if err != nil {
		return false, err
	}
	if guild && b.cardID == "" {
		if ref.ParentID == "" {
			return false, nil
		}
		parent := ref
		parent.ID, parent.ParentID = ref.ParentID, ""
		pb, err := p.binding(ctx, parent)
		if err != nil || pb.cardID == "" {
			return false, err
		}
		if err := p.Bind(ctx, ref, pb.cardID); err != nil {
			return false, err
		}
		b = binding{cardID: pb.cardID}
	}
	return !ref.Group || !b.mentionOnly || in.Mentioned, nil
}
