package telegram

import (
	"testing"

	"troupe/bot"
	"troupe/bot/bottest"
)

// TestUpdatePanicRecovered: a panic while the adapter handles an update is
// answered in its chat with a short notice and counted; polling goes on, so
// the same chat and another one are answered next, and the update is not
// handled again.
func TestUpdatePanicRecovered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	count := &bottest.PanicCount{}
	h.observer = count
	h.wrap = func(e bot.Engine) bot.Engine { return bottest.Panicky{Engine: e, Trigger: "crumbling"} }
	h.start()

	h.tg.SendText(alice, "The crumbling stair gives way.")
	h.waitText(alice.ID, "Something broke")
	h.tg.SendText(alice, "Hello there")
	h.waitText(alice.ID, `You said "Hello there"`)
	h.tg.SendText(bob, "Good evening")
	h.waitText(bob.ID, `You said "Good evening"`)
	if n := count.Get("telegram_update"); n != 1 {
		t.Errorf("panics counted at telegram_update: got %d, want 1", n)
	}
	// The update that panicked is finished, or it would panic again at
	// every start.
	waitFor(t, "no update left pending", func() bool { return len(h.inboxState().Pending) == 0 })
}
