package telegram

import (
	"context"
	"errors"
	"time"

	"troupe/bot"
)

// chatQueue holds one chat's events. One goroutine at a time handles them
// in order; different chats run at once.
type chatQueue struct {
	events   []event
	draining bool
	// live counts the chat's submitted messages whose turn has not ended,
	// and idle is closed when that count falls back to zero.
	live int
	idle chan struct{}
}

// dispatch queues ev for its chat. The pipeline applies the per-user limits
// (rate and length) that every platform shares.
func (a *Adapter) dispatch(ev event) {
	switch ev.kind {
	case evCallback:
		// Answer at once: the client shows a spinner until then, and
		// Telegram refuses answers that come late.
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := a.answerCallback(a.work, ev.callbackID, ev.notice); err != nil {
				a.log.Warn("answer callback", "chat_id", ev.chatID, "err", err)
			}
		}()
		if ev.notice != "" {
			a.finish(ev)
			return
		}
	}
	a.qmu.Lock()
	defer a.qmu.Unlock()
	q := a.queues[ev.chatID]
	if q == nil {
		q = &chatQueue{}
		a.queues[ev.chatID] = q
	}
	q.events = append(q.events, ev)
	if !q.draining {
		q.draining = true
		a.wg.Add(1)
		go a.drainChat(ev.chatID, q)
	}
}

// drainChat handles a chat's events until none is left. After the work is
// cancelled the rest stay pending for the next start.
func (a *Adapter) drainChat(chatID int64, q *chatQueue) {
	defer a.wg.Done()
	for {
		a.qmu.Lock()
		if len(q.events) == 0 || a.work.Err() != nil {
			q.draining = false
			a.forgetIdle(chatID, q)
			a.qmu.Unlock()
			return
		}
		ev := q.events[0]
		q.events = q.events[1:]
		a.qmu.Unlock()
		a.process(q, ev)
	}
}

// forgetIdle drops a chat's queue when nothing of it runs; a.qmu is held.
func (a *Adapter) forgetIdle(chatID int64, q *chatQueue) {
	if !q.draining && len(q.events) == 0 && q.live == 0 && a.queues[chatID] == q {
		delete(a.queues, chatID)
	}
}

func (a *Adapter) process(q *chatQueue, ev event) {
	ctx := a.work
	switch ev.kind {
	case evNotice:
		if err := a.notice(ctx, ev.chatID, ev.replyTo, ev.notice); err != nil {
			a.log.Warn("send notice", "chat_id", ev.chatID, "err", err)
		}
		a.finish(ev)
	case evText:
		a.text(ctx, q, ev)
	case evCommand:
		a.waitIdle(ctx, q)
		a.settle(ev, a.command(ctx, ev))
	case evCallback:
		a.waitIdle(ctx, q)
		a.settle(ev, a.button(ctx, ev))
	}
}

// text submits a message to the engine, which stores it and queues it in
// the chat's order before Submit returns: the chat's next message joins
// the turn behind it in order. The update is settled once the turn that
// took the message ended.
func (a *Adapter) text(ctx context.Context, q *chatQueue, ev event) {
	s := a.newSink(ev)
	a.qmu.Lock()
	if q.live == 0 {
		q.idle = make(chan struct{})
	}
	q.live++
	a.qmu.Unlock()
	rc := a.p.Submit(ctx, bot.Event{Kind: bot.EventMessage, In: ev.in}, s)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		err := rc.Wait(context.Background())
		if err != nil {
			a.log.Warn("turn failed", "chat_id", ev.chatID, "update_id", ev.update.UpdateID, "err", err)
		}
		s.close()
		a.settle(ev, err)
		a.qmu.Lock()
		if q.live--; q.live == 0 {
			close(q.idle)
		}
		a.forgetIdle(ev.chatID, q)
		a.qmu.Unlock()
	}()
}

// waitIdle waits until no turn of the chat runs, so a command or a
// button acts after the messages sent before it.
func (a *Adapter) waitIdle(ctx context.Context, q *chatQueue) {
	a.qmu.Lock()
	idle := q.idle
	busy := q.live > 0
	a.qmu.Unlock()
	if !busy {
		return
	}
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// settle finishes ev unless the pipeline refused it because it is shutting
// down: then the update stays pending and is handled after the restart.
func (a *Adapter) settle(ev event, err error) {
	if errors.Is(err, bot.ErrClosed) {
		return
	}
	a.finish(ev)
}

// finish records ev's update as handled. After the work was cancelled it
// stays pending, to be handled again on the next start.
func (a *Adapter) finish(ev event) {
	if a.inbox == nil || a.work.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.inbox.done(ctx, ev.update.UpdateID); err != nil {
		a.log.Error("record handled update", "update_id", ev.update.UpdateID, "err", err)
	}
}
