package bot

import (
	"context"
	"errors"
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
	// EventButton answers the yes/no question Event.Token names.
	EventButton
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
}

// Receipt is what Submit hands back: when the event was admitted (stored, or
// answered with a notice) and how its work ended. The zero Receipt is not
// valid; Submit never returns one.
type Receipt struct{ r *receipt }

type receipt struct {
	admitOnce, doneOnce sync.Once
	admitted, done      chan struct{}
	admitErr, err       error
	revised             bool
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

// Submit orders ev in its channel and returns as soon as it is ordered: a
// message is stored in the inbox and queued behind the channel's earlier
// messages before Submit returns (two Submits in a row keep their order), and
// its turn runs on its own goroutine under ctx, which must live as long as the
// adapter. Messages that arrive while a reply is written become the next turn
// together; a second delivery of a message id is ignored. An edit changes what
// the character reads if the message still waits. Commands and button
// answers run on their own goroutine.
func (p *Pipeline) Submit(ctx context.Context, ev Event, sink Sink) Receipt {
	r := newReceipt()
	switch ev.Kind {
	case EventEdit:
		r.r.revised = p.revise(ev.In)
		r.finish(nil)
		return r
	case EventCommand, EventButton:
		if err := p.begin(); err != nil {
			r.finish(err)
			return r
		}
		r.admit(nil)
		go func() {
			defer p.wg.Done()
			if ev.Kind == EventCommand {
				r.finish(p.Exec(ctx, ev.In, ev.Command, sink))
			} else {
				r.finish(p.Answer(ctx, ev.In, ev.Token, ev.Yes, sink))
			}
		}()
		return r
	}
	in := ev.In
	if err := p.begin(); err != nil {
		ackStored(in)
		_ = sink.Notice(ctx, p.text(p.opt.Language, msgShuttingDown))
		r.admit(err)
		r.finish(err)
		return r
	}
	ok, err := p.admit(ctx, in, sink)
	ackStored(in)
	if !ok {
		p.wg.Done()
		if errors.Is(err, ErrNotStored) {
			r.admit(err)
		}
		r.finish(err)
		return r
	}
	r.admit(nil)
	l, runner := p.enqueue(pendingMsg{in: in, sink: sink, done: r.finish})
	if !runner {
		p.wg.Done()
		return r
	}
	go func() {
		defer p.wg.Done()
		_ = p.run(ctx, l)
	}()
	return r
}
