package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"troupe/cards"
	"troupe/keyed"
	"troupe/models"
	"troupe/prompt"
)

// Pipeline is the shared turn pipeline.
type Pipeline struct {
	opt    Options
	log    *slog.Logger
	mu     sync.Mutex
	lanes  map[string]*lane
	closed bool
	wg     sync.WaitGroup
	rate   rateLimiter
	tokens *modelBudget
	gate   gate
	// recalls keeps each chat's last recall ranking, for turns under
	// load (recall_busy.go).
	recalls recallCache
	// notes are the recall records being written (recall_notes.go).
	notes recallNotes
	binds bindings
	// cardsStored maps a card id to the data of its row as this process
	// last wrote it.
	cardsStored sync.Map
	// missingWorlds holds the card id and world name of each linked world
	// not found, once it has been logged.
	missingWorlds sync.Map
	// sinkFor holds, per platform, how Resume reaches a channel; the inbox
	// sweep uses them. stop ends the sweep at Close.
	sinkFor  map[string]func(ChannelRef) (Sink, bool)
	sweeping bool
	stop     chan struct{}
	// speech holds each channel's replies waiting to be spoken, in
	// order (voice.go).
	speech keyed.Runner[string]
	// inbound holds the pixels of stored messages until their turn.
	inbound *inMedia
	// cmds runs the commands.
	cmds *commands
}

// New returns a pipeline; it starts nothing.
func New(opt Options) *Pipeline {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Rand == nil {
		opt.Rand = rand.Float64
	}
	if opt.Language == "" {
		opt.Language = "en"
	}
	if opt.Observer == nil {
		opt.Observer = nopObserver{}
	}
	if opt.Questions == nil {
		opt.Questions = &localQuestions{}
	}
	if opt.InboxSweep <= 0 {
		opt.InboxSweep = time.Minute
	}
	p := &Pipeline{opt: opt, log: opt.Logger.With("component", "bot"), lanes: map[string]*lane{}, rate: rateLimiter{perMin: opt.Limits.PerMinute},
		gate: newGate(opt.ConcurrentTurns), sinkFor: map[string]func(ChannelRef) (Sink, bool){}, stop: make(chan struct{}), tokens: newModelBudget(opt.Limits, opt.Tokens),
		inbound: newInMedia(), speech: keyed.Runner[string]{Limit: maxSpeechWaiting}}
	p.cmds = &commands{p: p, store: opt.Store, cards: opt.Cards, log: p.log}
	return p
}

// Close stops taking new turns and waits for the running ones, up to ctx.
func (p *Pipeline) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		close(p.stop)
	}
	p.closed = true
	p.mu.Unlock()
	done := make(chan struct{})
	// Turns queue their replies' speech before they end.
	go func() { p.wg.Wait(); p.speech.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("bot: close: turns still running: %w", ctx.Err())
	}
}

// chatState is a channel resolved to its card and current chat, with the
// speaking user's persona and the card's resident summary in the space.
type chatState struct {
	channel models.Channel
	card    cards.Card
	chat    models.Chat
	// user is the name the user plays under; persona describes them.
	user, persona string
	// resident is the stored resident summary, tags and all.
	resident string
	// inbox holds the messages waiting for the channel, oldest first.
	inbox []models.InboxMessage
	// ledger is the chat's ledger snapshot (the recorder's), "" for none.
	ledger string
	// cast is the chat's cast rows (removed members included; none for a
	// chat of an older database), lastSpeaker the card of the branch's
	// last reply, member who speaks now (see cast.go).
	cast        []models.CastMember
	lastSpeaker string
	member      models.CastMember
}

// resolve finds (or creates) the space, channel, card and current chat of
// in's channel, with the persona of in's author. In steady state it is one
// query.
func (p *Pipeline) resolve(ctx context.Context, in Inbound) (chatState, error) {
	store, ref := p.opt.Store, in.Channel
	if err := store.EnsureSpace(ctx, models.Space{ID: ref.Space(), Platform: ref.Platform, Kind: ref.SpaceKind, ExternalID: ref.SpaceID}); err != nil {
		return chatState{}, err
	}
	ts, err := store.TurnState(ctx, ref.Key(), in.UserKey())
	if errors.Is(err, models.ErrNotFound) {
		if ts.Channel, err = store.CreateChannel(ctx, models.Channel{ID: ref.Key(), Platform: ref.Platform, ExternalID: ref.ID, SpaceID: ref.Space()}); err == nil {
			ts.Persona, ts.HasPersona, err = p.lookupPersona(ctx, in)
		}
		if err == nil {
			ts.Inbox, err = store.Inbox(ctx, ref.Key())
		}
	}
	if err != nil {
		return chatState{}, err
	}
	var castBefore []string
	if ts.Channel.SpaceID != ref.Space() {
		for _, m := range ts.Cast {
			if m.Active() {
				castBefore = append(castBefore, m.CardID)
			}
		}
		if _, err := p.keepSpace(ctx, &ts.Channel, ref); err != nil {
			return chatState{}, err
		}
		ts.Chat, ts.HasChat, ts.Resident, ts.Ledger, ts.Cast, ts.LastSpeaker = models.Chat{}, false, "", "", nil, ""
	}
	out := chatState{channel: ts.Channel, chat: ts.Chat, resident: ts.Resident, inbox: p.beforeCommand(ref.Key(), ref.Space(), ts.Inbox), ledger: ts.Ledger, cast: ts.Cast, lastSpeaker: ts.LastSpeaker}
	out.user, out.persona = personaOf(in, ts.Persona, ts.HasPersona)
	if out.card, err = p.channelCard(ts.Channel); err != nil {
		return chatState{}, err
	}
	out.user = p.apartFromCast(out, out.user)
	if ts.HasChat {
		return out, nil
	}
	if out.chat, out.cast, err = p.openChat(ctx, out.channel, out.card, castBefore, out.user); err != nil {
		return chatState{}, err
	}
	out.channel.CurrentChatID = out.chat.ID
	out.channel.CardID = out.card.ID
	// A new chat's card may have a resident summary from earlier chats.
	if out.resident, err = store.Resident(ctx, out.card.ID, out.chat.SpaceID); err != nil {
		p.log.Warn("load resident summary", "chat_id", out.chat.ID, "err", err)
	}
	return out, nil
}

func (p *Pipeline) channelCard(ch models.Channel) (cards.Card, error) {
	if ch.CardID != "" {
		if c, ok := p.opt.Cards.Get(ch.CardID); ok {
			return c, nil
		}
	}
	if c, ok := p.opt.Cards.Default(); ok {
		return c, nil
	}
	return cards.Card{}, ErrNoCard
}

// startChat opens a new chat of card in the channel with the card's greeting.
func (p *Pipeline) startChat(ctx context.Context, ch models.Channel, card cards.Card, userName string) (models.Chat, error) {
	chat, _, err := p.startChatCast(ctx, ch, card, userName)
	return chat, err
}

// startChatCast is startChat returning the new chat's cast row too.
func (p *Pipeline) startChatCast(ctx context.Context, ch models.Channel, card cards.Card, userName string) (models.Chat, []models.CastMember, error) {
	// A card's row is written once per process and version, not per chat.
	row := cardRow(card)
	if stored, ok := p.cardsStored.Load(card.ID); !ok || stored != row.Data {
		if err := p.opt.Store.UpsertCard(ctx, row); err != nil {
			return models.Chat{}, nil, err
		}
		p.cardsStored.Store(card.ID, row.Data)
	}
	if chat, cast, ok, err := p.openEmpty(ctx, ch, []string{card.ID}); ok || err != nil {
		return chat, cast, err
	}
	name := fmt.Sprintf("%s %s", models.FitName(card.Name, models.NameSize-17), p.opt.Now().UTC().Format("2006-01-02 15:04"))
	var opening *models.Message
	if g := p.greeting(card, card.FirstMes, userName); g != "" {
		opening = &models.Message{Role: prompt.RoleAssistant, AuthorName: card.Name, Content: g}
	}
	cs := models.ChatStart{ChannelID: ch.ID, SpaceID: ch.SpaceID, Name: name, Cast: []models.CastMember{{CardID: card.ID, Name: card.Name}}}
	if opening != nil {
		cs.Openings = []*models.Message{opening}
	}
	chat, cast, err := p.opt.Store.StartScene(ctx, cs)
	if err == nil {
		p.ensureLore(ctx, ch.SpaceID, card)
	}
	return chat, cast, err
}

// openEmpty takes up again, as the channel's current chat, a chat of the
// channel's space whose cast is cardIDs and that no player wrote in yet:
// switching cards back and forth, or /new on a chat nobody played, then
// leaves no trail of empty chats. ok is false when there is none.
func (p *Pipeline) openEmpty(ctx context.Context, ch models.Channel, cardIDs []string) (models.Chat, []models.CastMember, bool, error) {
	chat, cast, err := p.opt.Store.ReopenEmptyChat(ctx, ch.ID, ch.SpaceID, cardIDs)
	if errors.Is(err, models.ErrNotFound) {
		return models.Chat{}, nil, false, nil
	}
	if err != nil {
		return models.Chat{}, nil, false, err
	}
	p.log.Debug("took up an empty chat again", "channel", ch.ID, "chat_id", chat.ID)
	return chat, cast, true, nil
}

// language picks the prompt language: the card's, else the configured one.
func (p *Pipeline) language(c cards.Card) string {
	if c.Language != "" {
		return c.Language
	}
	return p.opt.Language
}

// Cards returns the card library.
func (p *Pipeline) Cards() *cards.Library { return p.opt.Cards }
