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
	"troupe/config"
	"troupe/keyed"
	"troupe/memory"
	"troupe/models"
)

// Jobs is what the pipeline tells the job queue after it changes a chat.
type Jobs interface {
	// AfterTurn is called after a reply is stored.
	AfterTurn(ctx context.Context, t TurnDone) error
	// ChatEnded is called when /new, /card set, /start of another card or
	// a move to another space takes a channel off a chat: its recap is owed
	// now, and its last turn, which the recorder held back for /regen, is
	// recordable (the recap job records first).
	ChatEnded(ctx context.Context, chatID string) error
	// MemoryChanged is called when /forget or a hand edit changed a card's
	// memory in a space: its consolidation is owed.
	MemoryChanged(ctx context.Context, cardID, spaceID string) error
}

// TurnDone describes a finished turn for the job queue.
type TurnDone struct {
	ChatID  string
	CardID  string
	SpaceID string
	// CompactionDue is true when the compaction trigger holds.
	CompactionDue bool
	// Urgent is true when the prompt had to drop uncovered turns to fit.
	Urgent bool
}

// MemoryService is the memory work turns and commands run directly.
type MemoryService interface {
	Compact(ctx context.Context, chatID string, manual bool) (memory.Result, error)
	// FitResident returns a stored resident summary as injected, fitted to
	// what others characters leave of the envelope.
	FitResident(lang, stored string, others int) string
	ForgetChat(ctx context.Context, chatID string) (memory.Forgotten, error)
	Report(ctx context.Context, cardID, spaceID string) (memory.Report, error)
	// ChatReport is Report narrowed to what one chat's prompts may hold,
	// its resident fitted to what others characters leave.
	ChatReport(ctx context.Context, cardID, spaceID, chatID string, others int) (memory.Report, error)
	DeleteRecap(ctx context.Context, chatID, cardID string) ([]models.MemoryKey, error)
}

// Options configures a Pipeline.
type Options struct {
	Store        *models.Store
	Cards        *cards.Library
	Model        Model
	Jobs         Jobs
	Tokens       TokenCounter
	MemoryConfig config.Memory
	// Recorder: whether turns record their plain events, and the batch.
	Recorder config.Recorder
	// Scene bounds chats with several characters.
	Scene config.Scene
	// Recall: what the speaking character brings back each turn.
	Recall config.Recall
	// RecallVectors and Reranker, when set, add recall's vector source
	// (recall.embeddings) and its rerank (recall.rerank).
	RecallVectors *memory.Vectors
	Reranker      memory.Reranker
	// RecallDelay, when set, runs before each recall: a test holds recall
	// up with it to see the time cap leave the block out.
	RecallDelay func(ctx context.Context)
	// Memory runs memory work that a command asks for directly (/compact).
	Memory   MemoryService
	Language string
	// ContextWindow and MaxReplyTokens bound the prompt.
	ContextWindow  int
	MaxReplyTokens int
	Logger         *slog.Logger
	Now            func() time.Time
	// Observer receives metrics; nil observes nothing.
	Observer Observer
	// Locker serializes a channel's turns across processes; nil relies on
	// the in-process lanes alone (one serve process).
	Locker Locker
	// Limits bound what one user can ask, and the model's tokens.
	Limits Limits
	// NewByAnyone lets every member of a group end its shared chat with
	// /new (groups.new_needs_manager: false); by default only those who
	// may manage the channel can.
	NewByAnyone bool
	// Questions keeps open yes/no questions where every process can
	// answer them; nil keeps them in this process.
	Questions Questions
	// LoreConfig bounds what lorebooks add to a prompt.
	LoreConfig config.Lore
	// Worlds are the world-info files cards name (extensions.world).
	Worlds *cards.Worlds
	// Lore are books attached to every chat this pipeline serves (the
	// console's --lore).
	Lore []*cards.Book
	// Rand returns numbers in [0, 1) for lore probabilities and random
	// macros; nil uses math/rand/v2.
	Rand func() float64
	// ConcurrentTurns bounds how many turns do the pipeline's own work at
	// once (the model calls are not bounded); 0 means one per CPU.
	ConcurrentTurns int
	// PromptTraces is how many of a chat's latest replies keep the prompt
	// they were built from, for the web inspector (config web.prompts,
	// when web.token is set); 0 keeps none and computes none.
	PromptTraces int
	// ModelName names the chat model in the traces.
	ModelName string
	// InboxSweep is how often, once an adapter called Resume, the pipeline
	// looks for messages left in the inbox by a process that died while
	// this one kept running; 0 means every minute.
	InboxSweep time.Duration
	// Voicer speaks the replies of channels that turned /voice on (tts);
	// nil speaks none. Voice is the voice of cards that name none in their
	// extensions (tts.voice).
	Voicer Voicer
	Voice  string
	// Painter draws /picture's pictures (image); nil draws none.
	Painter Painter
	// Vision: Model sees pictures, each captioned once by CaptionModel
	// (nil: Model). Transcriber hears voice notes (nil: none). Media
	// bounds what players send and says what is kept (media_in.go).
	Vision       bool
	CaptionModel Model
	Transcriber  Transcriber
	Media        MediaOptions
}

// Locker hands out locks shared by every troupe process.
type Locker interface {
	// Lock waits for the lock on key and returns its release.
	Lock(ctx context.Context, key string) (func(), error)
}

// TokenCounter estimates the prompt tokens of a message list for a chat,
// and learns from the counts the API reports.
type TokenCounter interface {
	Estimate(key string, msgs []memory.Message) int
	// Precise is slower and closer; used near the limit.
	Precise(key string, msgs []memory.Message) int
	Observe(key string, estimated, actual int)
}

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
	binds   bindings
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
	return &Pipeline{opt: opt, log: opt.Logger.With("component", "bot"), lanes: map[string]*lane{}, rate: rateLimiter{perMin: opt.Limits.PerMinute},
		gate: newGate(opt.ConcurrentTurns), sinkFor: map[string]func(ChannelRef) (Sink, bool){}, stop: make(chan struct{}), tokens: newModelBudget(opt.Limits, opt.Tokens),
		inbound: newInMedia(), speech: keyed.Runner[string]{Limit: maxSpeechWaiting}}
}

// lane serializes the turns of one channel: messages that arrive while a
// reply is written wait in pending and become the next turn together. The
// messages themselves are in the store's inbox (see accept); pending holds
// who is waiting for an answer.
type lane struct {
	mu      sync.Mutex
	pending []pendingMsg
	running bool
	// taken is the newest inbox row of the batch the running turn took.
	taken string
	// busy is held while anything changes the channel's chat.
	busy sync.Mutex
}

type pendingMsg struct {
	in   Inbound
	sink Sink
	// resume marks a turn with no new message that picks up what a
	// process that stopped left in the inbox (Resume, the inbox sweep);
	// answerHead also answers a chat left on a stored but unanswered user
	// message (Resume at start).
	resume, answerHead bool
	// done, when set, learns how the turn that took the message ended.
	done func(error)
	// inboxID is the message's inbox row; "" when it was already waiting.
	inboxID string
	// work, when set, is a command or an answer that runs in the channel's
	// order instead of a message.
	work func() error
}

func (pm pendingMsg) finish(err error) {
	if pm.done != nil {
		pm.done(err)
	}
}

func (p *Pipeline) lane(key string) *lane {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.lanes[key]
	if !ok {
		l = &lane{}
		p.lanes[key] = l
	}
	return l
}

// Handle takes one inbound message. It stores the message first (in the
// inbox, before waiting for anything), so that a process that dies after
// Handle began keeps no accepted message only in memory. If a reply is
// being written in the channel, the message joins the next turn and Handle
// returns at once; otherwise Handle runs turns until the channel has
// nothing pending. Adapters call Submit, which does the same without
// blocking.
func (p *Pipeline) Handle(ctx context.Context, in Inbound, sink Sink) error {
	if err := p.begin(); err != nil {
		_ = sink.Notice(ctx, p.text(p.opt.Language, msgShuttingDown))
		return err
	}
	defer p.wg.Done()
	id, ok, err := p.admit(ctx, in, sink)
	if !ok {
		return err
	}
	return p.drive(ctx, pendingMsg{in: in, sink: sink, inboxID: id})
}

// admit checks a message and stores it in the inbox, returning its row id
// ("" when it was waiting already). Its attachments become text before it
// is stored (takeMedia, within MediaOptions.Timeout), so the stored text is
// the record. ok is false when it was refused with a notice (err is the
// notice's), left with nothing to say once its attachments were refused
// (err nil), or could not be stored (err wraps ErrNotStored).
func (p *Pipeline) admit(ctx context.Context, in Inbound, sink Sink) (id string, ok bool, err error) {
	if tooLong(in.Text, p.opt.Limits.MaxChars) {
		return "", false, sink.Notice(ctx, p.text(p.langOf(in), msgTooLong, p.opt.Limits.MaxChars))
	}
	if limited, err := p.overRate(ctx, in, sink); limited {
		return "", false, err
	}
	var held heldMedia
	if len(in.Media) > 0 {
		// Attachments become text first: the stored text is the record.
		var ok bool
		if in.Text, held, ok = p.takeMedia(ctx, in, sink); !ok {
			return "", false, nil
		}
	}
	id, err = p.accept(ctx, in)
	if err != nil {
		p.log.Error("accept message", "channel", in.Channel.Key(), "err", err)
		_ = sink.Notice(ctx, p.text(p.langOf(in), msgNotStored))
		return "", false, fmt.Errorf("%w: %w", ErrNotStored, err)
	}
	p.inbound.hold(id, held)
	return id, true, nil
}

// drive queues pm on its channel's lane and, unless a call already runs
// the lane, runs its turns until nothing is pending.
func (p *Pipeline) drive(ctx context.Context, pm pendingMsg) error {
	l, runner := p.enqueue(pm)
	if !runner {
		return nil
	}
	return p.run(ctx, l)
}

// enqueue adds pm to its channel's lane, in order; runner is true when no
// call runs the lane and the caller must. A second delivery of a message
// already pending is done at once.
func (p *Pipeline) enqueue(pm pendingMsg) (l *lane, runner bool) {
	l = p.lane(pm.in.Channel.Key())
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.pending {
		if pm.in.MessageID != "" && q.in.MessageID == pm.in.MessageID {
			pm.finish(nil)
			return l, false
		}
	}
	l.pending = append(l.pending, pm)
	if l.running {
		return l, false
	}
	l.running = true
	return l, true
}

// run takes the lane's pending messages as turns, and its commands one by
// one in their place, until none is left.
func (p *Pipeline) run(ctx context.Context, l *lane) error {
	var firstErr error
	for {
		l.mu.Lock()
		if len(l.pending) == 0 {
			l.running = false
			l.taken = ""
			l.mu.Unlock()
			return firstErr
		}
		if w := l.pending[0]; w.work != nil {
			l.pending = l.pending[1:]
			l.mu.Unlock()
			w.finish(p.guard(ctx, "command", w.in, w.sink, w.work))
			continue
		}
		n := 1
		for n < len(l.pending) && l.pending[n].work == nil {
			n++
		}
		batch := l.pending[:n:n]
		l.pending = l.pending[n:]
		l.taken = maxInboxID("", batch)
		l.mu.Unlock()
		key := batch[0].in.Channel.Key()
		l.busy.Lock()
		unlock, ok := p.channelLock(ctx, "channel:"+key, resuming(batch))
		var err error
		if ok {
			batch = p.joinWaiting(l, batch)
			last := batch[len(batch)-1]
			err = p.guard(ctx, "turn", last.in, last.sink, func() error { return p.turn(ctx, batch) })
			if errors.Is(err, ErrPanicked) {
				p.setAside(ctx, key, batch)
			}
			unlock()
		}
		l.busy.Unlock()
		for _, b := range batch {
			b.finish(err)
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
}

// joinWaiting adds to batch the messages that came to the lane while it
// waited for the channel's lock: the turn about to run takes their inbox
// rows anyway, and its notices and reply should answer the newest of them
// (a turn resumed at start-up would otherwise answer a message that
// arrived meanwhile without replying to it).
func (p *Pipeline) joinWaiting(l *lane, batch []pendingMsg) []pendingMsg {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for n < len(l.pending) && l.pending[n].work == nil {
		n++
	}
	if n == 0 {
		return batch
	}
	batch = append(batch, l.pending[:n]...)
	l.pending = l.pending[n:]
	l.taken = maxInboxID(l.taken, batch)
	return batch
}

// setAside drops from the inbox the messages of a batch whose turn
// panicked (those it had not stored in the chat yet): taken again, they
// would most likely panic again, turn after turn. Their authors were told
// to send them again.
func (p *Pipeline) setAside(ctx context.Context, key string, batch []pendingMsg) {
	upTo := maxInboxID("", batch)
	if upTo == "" {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	rows, err := p.opt.Store.Inbox(dctx, key)
	if err == nil {
		var ids []string
		for _, r := range rows {
			if r.ID <= upTo {
				ids = append(ids, r.ID)
			}
		}
		err = p.opt.Store.DropInbox(dctx, ids)
	}
	if err != nil {
		p.log.Warn("set aside the messages of a turn that panicked", "channel", key, "err", err)
	}
}

// maxInboxID is the newest inbox row among from and the messages of pms.
func maxInboxID(from string, pms []pendingMsg) string {
	for _, pm := range pms {
		if pm.inboxID > from {
			from = pm.inboxID
		}
	}
	return from
}

// beforeCommand keeps, of the inbox rows a turn is about to store, those
// that came before the next command waiting in the channel: a message sent
// after /new belongs to the new chat. Without a waiting command it keeps
// them all.
func (p *Pipeline) beforeCommand(key string, rows []models.InboxMessage) []models.InboxMessage {
	p.mu.Lock()
	l := p.lanes[key]
	p.mu.Unlock()
	if l == nil {
		return rows
	}
	l.mu.Lock()
	cut, work := l.taken, false
	for _, pm := range l.pending {
		if pm.work != nil {
			work = true
			break
		}
		cut = maxInboxID(cut, []pendingMsg{pm})
	}
	l.mu.Unlock()
	if !work {
		return rows
	}
	keep := rows[:0:0]
	for _, r := range rows {
		if r.ID <= cut {
			keep = append(keep, r)
		}
	}
	return keep
}

// resuming reports whether a batch only resumes (no new message).
func resuming(batch []pendingMsg) bool {
	for _, b := range batch {
		if !b.resume {
			return false
		}
	}
	return true
}

func (p *Pipeline) begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.wg.Add(1)
	return nil
}

// crossLock takes the channel's lock shared with other processes. If Redis
// is unreachable the turn goes on under the in-process lane alone: answering
// matters more than the rare race the lock prevents, and the store's head
// check still refuses a conflicting write.
func (p *Pipeline) crossLock(ctx context.Context, key string) func() {
	unlock, _ := p.channelLock(ctx, key, false)
	return unlock
}

// channelLock is crossLock for a turn; one that only resumes gives up (ok
// false) when a live process keeps the lock past the wait: that process is
// answering the channel.
func (p *Pipeline) channelLock(ctx context.Context, key string, resume bool) (unlock func(), ok bool) {
	if p.opt.Locker == nil {
		return func() {}, true
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	unlock, err := p.opt.Locker.Lock(lctx, key)
	if err != nil {
		if resume && errors.Is(err, context.DeadlineExceeded) {
			return nil, false
		}
		p.log.Warn("cross-process lock unavailable; going on without it", "key", key, "err", err)
		return func() {}, true
	}
	return unlock, true
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
	out := chatState{channel: ts.Channel, chat: ts.Chat, resident: ts.Resident, inbox: p.beforeCommand(ref.Key(), ts.Inbox), ledger: ts.Ledger, cast: ts.Cast, lastSpeaker: ts.LastSpeaker}
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
		opening = &models.Message{Role: memory.RoleAssistant, AuthorName: card.Name, Content: g}
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
