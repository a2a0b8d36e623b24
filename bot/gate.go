package bot

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// gate bounds how many turns do the pipeline's own work at once: reading the
// chat, storing messages, building the prompt and storing the reply. A turn
// holds no slot while the model writes, so the bound costs nothing when the
// model is slow, and when the machine is saturated turns wait in line before
// they start instead of slowing each other down inside the database.
type gate struct {
	slots chan struct{}
	// waiting counts the turns waiting for a slot: more than none means
	// the pipeline is busy, and recall gets cheaper (busyRecall).
	waiting *atomic.Int32
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
	return gate{slots: make(chan struct{}, n), waiting: new(atomic.Int32)}
}

// enter waits for a slot. It returns the slot's release, which may be called
// more than once, and how long the turn waited.
func (g gate) enter(ctx context.Context) (release func(), waited time.Duration, err error) {
	start := time.Now()
	select {
	case g.slots <- struct{}{}:
	default:
		g.waiting.Add(1)
		select {
		case g.slots <- struct{}{}:
			g.waiting.Add(-1)
		case <-ctx.Done():
			g.waiting.Add(-1)
			return func() {}, time.Since(start), ctx.Err()
		}
	}
	return sync.OnceFunc(func() { <-g.slots }), time.Since(start), nil
}

// busy reports whether turns are waiting for a slot.
func (g gate) busy() bool { return g.waiting.Load() > 0 }

// ConcurrentTurns is how many turns may do the pipeline's own work at once.
func (p *Pipeline) ConcurrentTurns() int { return cap(p.gate.slots) }
