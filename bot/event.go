package bot

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// EventKind says what an Event is.
type EventKind int

// Kinds of event.
const (
	// EventMessage is a new message: it is stored and waits for its turn.
	EventMessage EventKind = iota
	// EventEdit changes the text of a message still waiting for its turn;
	// one already answered is left alone.
	EventEdit
	// EventCommand runs Event.Command.
	EventCommand
	// EventButton answers the yes/no question Event.Token names, or, with
	// Event.Card set, chooses that card for the channel (a button of the
	// keyboard a CardChooser offered).
	EventButton
	// EventOpen opens a session in the channel (the console's start) with
	// the cards of Event.Cast: the channel is bound to them when it has no
	// chat or its chat plays another cast (several cards open a scene with
	// their group greetings), then the chat's opening is shown: a new
	// chat's greetings, or the last reply of the chat it resumes.
	EventOpen
)

// Event is one thing that happened in a channel, as an adapter hands it to
// the engine.
type Event struct {
	Kind EventKind
	// In is the message (or the edit's new text, the command's or the
	// button's author and channel).
	In Inbound
	// Command is the command of an EventCommand.
	Command Command
	// Token and Yes are the question and answer of an EventButton.
	Token string
	Yes   bool
	// Card is the card an EventButton chooses; empty for an answer.
	Card string
	// Cast is the cards an EventOpen opens the channel with, the lead
	// first; empty keeps the channel's card.
	Cast []string
}

// Receipt is what Submit hands back: when the event was admitted (stored, or
// answered with a notice) and how its work ended. The zero Receipt is not
// valid; Submit never returns one.
type Receipt struct{ r *receipt }

type receipt struct {
	admitOnce, doneOnce sync.Once
	admitted, done      chan struct{}
	admitErr, err       error
	revised, ignored    bool
}

func newReceipt() Receipt {
	return Receipt{&receipt{admitted: make(chan struct{}), done: make(chan struct{})}}
}

func (r Receipt) admit(err error) {
	r.r.admitOnce.Do(func() { r.r.admitErr = err; close(r.r.admitted) })
}

func (r Receipt) finish(err error) {
	r.admit(nil)
	r.r.doneOnce.Do(func() { r.r.err = err; close(r.r.done) })
}

// Admitted waits until the event is stored or answered with a notice. An
// error wrapping ErrNotStored (or ErrClosed) means it was not, and the
// platform should deliver it again; ctx ends the wait.
func (r Receipt) Admitted(ctx context.Context) error {
	select {
	case <-r.r.admitted:
		return r.r.admitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done is closed when the event's work ended: the turn that took a message,
// a command, an answer.
func (r Receipt) Done() <-chan struct{} { return r.r.done }

// Wait waits for Done and returns how the work ended.
func (r Receipt) Wait(ctx context.Context) error {
	select {
	case <-r.r.done:
		return r.r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Revised reports, once Done, whether an EventEdit changed a waiting message.
func (r Receipt) Revised() bool {
	<-r.r.done
	return r.r.revised
}

// Ignored reports whether Submit left a message alone because the channel
// does not play for it (unbound, or mention-only and not mentioned). It is
// known when Submit returns.
func (r Receipt) Ignored() bool { return r.r.ignored }

// Submit orders ev in its channel and returns as soon as it is ordered.
// It first decides whether the channel plays for ev (see plays): a message
// the character should not hear is ignored (Receipt.Ignored) and a command
// that needs a character where none plays is refused with a notice. A
// message is then stored in the inbox and queued behind the channel's
// earlier events before Submit returns (two Submits in a row keep their
// order), and its turn runs on its own goroutine under ctx, which must live
// as long as the adapter. Messages that arrive while a reply is written
// become the next turn together; a second delivery of a message id is
// ignored. Commands and button answers wait in the same queue, so they act
// after the messages submitted before them. An edit changes what the
// character reads if the message still waits.
func (p *Pipeline) Submit(ctx context.Context, ev Event, sink Sink) Receipt {
	r := newReceipt()
	if ev.Kind == EventEdit {
		r.r.revised = p.revise(ev.In)
		r.finish(nil)
		return r
	}
	if err := p.begin(); err != nil {
		_ = sink.Notice(ctx, p.text(p.opt.Language, msgShuttingDown))
		r.admit(err)
		r.finish(err)
		return r
	}
	switch ev.Kind {
	case EventCommand, EventButton, EventOpen:
		return p.submitWork(ctx, ev, sink, r)
	}
	in := ev.In
	play, err := p.plays(ctx, in)
	if err != nil {
		p.log.Error("channel binding", "channel", in.Channel.Key(), "err", err)
		_ = sink.Notice(ctx, p.text(p.opt.Language, msgNotStored))
		err = fmt.Errorf("%w: %w", ErrNotStored, err)
		p.wg.Done()
		r.admit(err)
		r.finish(err)
		return r
	}
	if !play {
		p.wg.Done()
		r.r.ignored = true
		r.finish(nil)
		return r
	}
	p.store(ctx, in, sink, r)()
	return r
}

// store stores the message in the inbox and returns what queues its turn
// (a no-op when it was not stored: r then says why). Submit queues it at
// once; a message stored and queued later is one whose call was preempted
// between the two.
func (p *Pipeline) store(ctx context.Context, in Inbound, sink Sink, r Receipt) (queue func()) {
	id, ok, err := p.admit(ctx, in, sink)
	if !ok {
		p.wg.Done()
		if errors.Is(err, ErrNotStored) {
			r.admit(err)
		}
		r.finish(err)
		return func() {}
	}
	r.admit(nil)
	return func() { p.start(ctx, pendingMsg{in: in, sink: sink, inboxID: id, done: r.finish}) }
}

// submitWork queues a command, a button answer or an opening in its
// channel; p.begin was called.
func (p *Pipeline) submitWork(ctx context.Context, ev Event, sink Sink, r Receipt) Receipt {
	if ev.Kind == EventCommand && needsCard(ev.Command) {
		play, err := p.plays(ctx, Inbound{Channel: ev.In.Channel, Mentioned: true})
		if err != nil || !play {
			if err != nil {
				p.log.Error("channel binding", "channel", ev.In.Channel.Key(), "err", err)
			}
			p.wg.Done()
			r.admit(nil)
			r.finish(refuse(ctx, sink, p.text(p.langOf(ev.In), msgNoCard)))
			return r
		}
	}
	r.admit(nil)
	work := func() error {
		if ev.Kind == EventButton {
			// A press shares the user's rate with messages and commands,
			// as the command that offered the buttons did.
			if limited, err := p.overRate(ctx, ev.In, sink); limited {
				return err
			}
		}
		switch {
		case ev.Kind == EventCommand:
			return p.cmds.exec(ctx, ev.In, ev.Command, sink)
		case ev.Kind == EventOpen:
			return p.open(ctx, ev.In, ev.Cast, sink)
		case ev.Card != "":
			// A card button may switch the channel's chat, as /start
			// does: it took from the same rate above.
			return p.cmds.chooseCard(ctx, ev.In, ev.Card, sink)
		}
		return p.cmds.answer(ctx, ev.In, ev.Token, ev.Yes, sink)
	}
	p.start(ctx, pendingMsg{in: ev.In, sink: sink, work: work, done: r.finish})
	return r
}

// start queues pm in its channel's lane and, unless the lane runs, runs it
// on a goroutine; p.begin was called, and start ends it.
func (p *Pipeline) start(ctx context.Context, pm pendingMsg) {
	l, runner := p.enqueue(pm)
	if !runner {
		p.wg.Done()
		return
	}
	go func() {
		defer p.wg.Done()
		_ = p.run(ctx, l)
	}()
}

// needsCard reports whether a command only makes sense where a character
// plays: in a guild channel that plays nothing it is refused rather than
// binding the channel as a side effect.
func needsCard(cmd Command) bool {
	switch cmd.Name {
	case "card", "help", "persona", "start":
		return false
	}
	return true
}
