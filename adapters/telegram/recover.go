package telegram

// recovered, deferred, recovers a panic in the adapter's handling of ev
// (the zero event for work of no one update): the engine logs and counts
// it, ev's chat gets the engine's short notice and ev's update is finished,
// so that it is not handled again, and panics again, after a restart. The
// polling goroutine and the other chats go on.
func (a *Adapter) recovered(ev event) {
	v := recover()
	if v == nil {
		return
	}
	where := "telegram_update"
	if ev.chatID == 0 && ev.update.UpdateID == 0 {
		where = "telegram_task"
	}
	notice := a.p.Recovered(where, v)
	if ev.update.UpdateID != 0 {
		a.finish(ev)
	}
	if ev.chatID == 0 {
		return
	}
	ctx := a.work
	a.spawn(func() {
		if err := a.notice(ctx, ev.chatID, ev.replyTo, notice); err != nil {
			a.log.Warn("send the notice of a recovered panic", "chat_id", ev.chatID, "err", err)
		}
	})
}
