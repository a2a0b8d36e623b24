package telegram

import (
	"context"
	"strings"
	"sync"
	"testing"

	"troupe/bot"
)

// panicky is the engine with a bug: Submit panics on a message holding
// trigger, as a broken adapter-side step would, in the adapter's goroutine.
type panicky struct {
	bot.Engine
	trigger string
}

func (e panicky) Submit(ctx context.Context, ev bot.Event, s bot.Sink) bot.Receipt {
	if e.trigger != "" && strings.Contains(ev.In.Text, e.trigger) {
		words := strings.Fields(ev.In.Text)
		_ = words[len(words)] // one past the end, as an off-by-one would
	}
	return e.Engine.Submit(ctx, ev, s)
}

// panicCount counts the panics the pipeline is told of, by where.
type panicCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (*panicCount) TurnObserved(bot.TurnStats) {}
func (*panicCount) Forgotten(string)           {}
func (*panicCount) SendFailed(string)          {}
func (c *panicCount) Panicked(where string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[where]++
}

func (c *panicCount) get(where string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[where]
}

// TestUpdatePanicRecovered: a panic while the adapter handles an update is
// answered in its chat with a short notice and counted; polling goes on, so
// the same chat and another one are answered next, and the update is not
// handled again.
func TestUpdatePanicRecovered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	count := &panicCount{}
	h.observer = count
	h.wrap = func(e bot.Engine) bot.Engine { return panicky{Engine: e, trigger: "crumbling"} }
	h.start()

	h.tg.SendText(alice, "The crumbling stair gives way.")
	h.waitText(alice.ID, "Something broke")
	h.tg.SendText(alice, "Hello there")
	h.waitText(alice.ID, `You said "Hello there"`)
	h.tg.SendText(bob, "Good evening")
	h.waitText(bob.ID, `You said "Good evening"`)
	if n := count.get("telegram_update"); n != 1 {
		t.Errorf("panics counted at telegram_update: got %d, want 1", n)
	}
	// The update that panicked is finished, or it would panic again at
	// every start.
	waitFor(t, "no update left pending", func() bool { return len(h.inboxState().Pending) == 0 })
}
