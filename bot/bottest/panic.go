// Package bottest holds test doubles that sit around the real pipeline in
// the adapters' tests: an engine with a bug, an observer that counts.
package bottest

import (
	"context"
	"strings"
	"sync"

	"troupe/bot"
)

// Panicky is an engine with a bug: Submit panics on a message holding
// Trigger, in the adapter's goroutine that handles the event.
type Panicky struct {
	bot.Engine
	Trigger string
}

// Submit panics on a message holding Trigger and passes every other event
// on.
func (e Panicky) Submit(ctx context.Context, ev bot.Event, s bot.Sink) bot.Receipt {
	if e.Trigger != "" && strings.Contains(ev.In.Text, e.Trigger) {
		words := strings.Fields(ev.In.Text)
		_ = words[len(words)] // one past the end, as an off-by-one would
	}
	return e.Engine.Submit(ctx, ev, s)
}

// PanicCount counts the panics the pipeline is told of, by where.
type PanicCount struct {
	mu sync.Mutex
	n  map[string]int
}

var _ bot.Observer = (*PanicCount)(nil)

// TurnObserved is not counted.
func (*PanicCount) TurnObserved(bot.TurnStats) {}

// Forgotten is not counted.
func (*PanicCount) Forgotten(string) {}

// SendFailed is not counted.
func (*PanicCount) SendFailed(string) {}

// Panicked counts a panic at where.
func (c *PanicCount) Panicked(where string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[where]++
}

// Get is how many panics were counted at where.
func (c *PanicCount) Get(where string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[where]
}
