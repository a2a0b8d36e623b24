package bot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"troupe/models"
)

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
			lead := leadOf(batch)
			err = p.guard(ctx, "turn", lead.in, lead.sink, func() error { return p.turn(ctx, batch) })
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

// beforeCommand keeps, of the inbox rows a turn in space is about to
// store, those that came before the next command waiting in the channel,
// or before the next message that names another space: a message sent
// after /new belongs to the new chat, and one sent after the channel moved
// (a Discord channel made private) to the chat its own turn opens in the
// new space, not to the old space's chat of a turn that read the channel
// before (a resume, say). Without either it keeps them all.
func (p *Pipeline) beforeCommand(key, space string, rows []models.InboxMessage) []models.InboxMessage {
	p.mu.Lock()
	l := p.lanes[key]
	p.mu.Unlock()
	if l == nil {
		return rows
	}
	l.mu.Lock()
	cut, work := l.taken, false
	for _, pm := range l.pending {
		// A resume's space comes from stored rows (see leadOf).
		if pm.work != nil || (!pm.resume && pm.in.Channel.Space() != space) {
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

// leadOf is the message a batch's turn answers: its newest new message,
// else (a batch that only resumes) its last resume. A resume's channel
// comes from stored rows read before it was queued, and may name the
// space the channel was in then; a message that came from the platform
// names where the channel is now (made private meanwhile, say).
func leadOf(batch []pendingMsg) pendingMsg {
	lead := -1
	for i, b := range batch {
		// The newest stored, not the last in the lane: a message's call
		// stores it and then joins the lane, and a call that stored later
		// can join first.
		if !b.resume && (lead < 0 || b.inboxID >= batch[lead].inboxID) {
			lead = i
		}
	}
	if lead < 0 {
		return batch[len(batch)-1]
	}
	return batch[lead]
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
