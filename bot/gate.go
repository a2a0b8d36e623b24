package bot

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// gate bounds how many turns do the pipeline's own work at once: reading the
// chat, storing messages, building the prompt and storing the reply. A turn
// holds no slot while the model writes, nor while it waits for its recall
// search (slot.await), so the bound costs nothing when the model is slow, and
// when the machine is saturated turns wait in line before
// they start instead of slowing each other down inside the database.
type gate struct {
	slots chan struct{}
}

// defaultConcurrentTurns is the gate's size when Options.ConcurrentTurns is 0:
// one turn per CPU. Measured with troupe bench on two CPUs shared with
// PostgreSQL and Redis, two slots kept the pipeline's p99 under 20 ms at
// about 350 turns/s; four gave 25% more turns at twice the p99.
func defaultConcurrentTurns() int { return runtime.GOMAXPROCS(0) }

func newGate(n int) gate {
	if n <= 0 {
		n = defaultConcurrentTurns()
	}
	return gate{slots: make(chan struct{}, n)}
}

// enter waits for a slot. It returns the slot's release, which may be called
// more than once, and how long the turn waited.
func (g gate) enter(ctx context.Context) (release func(), waited time.Duration, err error) {
	start := time.Now()
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return func() {}, time.Since(start), ctx.Err()
	}
	return sync.OnceFunc(func() { <-g.slots }), time.Since(start), nil
}

// ConcurrentTurns is how many turns may do the pipeline's own work at once.
func (p *Pipeline) ConcurrentTurns() int { return cap(p.gate.slots) }

// slot is a turn's hold on a gate slot. A turn gives it back while it waits
// on work that runs outside the gate (its recall search, which has its own
// connections and its own cap) and takes one again after, so that a slot
// is never held idle: with two slots and recall on, turns held theirs
// through most of the search, and the others queued behind them.
type slot struct {
	g  gate
	mu sync.Mutex
	// rel gives the slot back; nil while none is held.
	rel func()
	// waited is how long the turn waited for a slot again.
	waited time.Duration
}

// hold waits for a slot, as enter does.
func (g gate) hold(ctx context.Context) (*slot, time.Duration, error) {
	rel, waited, err := g.enter(ctx)
	if err != nil {
		return &slot{g: g}, waited, err
	}
	return &slot{g: g, rel: rel}, waited, nil
}

// release gives the slot back; it may be called more than once.
func (s *slot) release() {
	if s == nil {
		return
	}
	s.mu.Lock()
	rel := s.rel
	s.rel = nil
	s.mu.Unlock()
	if rel != nil {
		rel()
	}
}

// await waits until done or stop is closed. When neither is yet and the
// slot is held, the slot is given back for the wait and taken again after
// it, with ctx (the turn's).
func (s *slot) await(ctx context.Context, done, stop <-chan struct{}) {
	select {
	case <-done:
		return
	case <-stop:
		return
	default:
	}
	held := false
	if s != nil {
		s.mu.Lock()
		held = s.rel != nil
		s.mu.Unlock()
	}
	if held {
		s.release()
	}
	select {
	case <-done:
	case <-stop:
	case <-ctx.Done():
	}
	if !held {
		return
	}
	rel, waited, err := s.g.enter(ctx)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.rel, s.waited = rel, s.waited+waited
	s.mu.Unlock()
}

// rewaited is how long the turn waited to take its slot again.
func (s *slot) rewaited() time.Duration {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waited
}
