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
//
// A turn comes to the gate twice: to start, and, once its model has
// answered, to store the reply. Both wait in one line, in the order they
// came, until the line of turns waiting to start is long (more than
// longLine): then a turn storing its reply goes first. A started turn holds
// its prompt, branch and recall until its reply is stored, where one not
// yet started holds only its message; behind a thousand waiting starts, a
// thousand busy channels kept a thousand prompts alive at once (troupe
// bench --channels 1000 --turns 10: 300 MiB of peak RSS, 149 MiB with this
// rule). Below that, the order of arrival stays: it is fairer, and under
// load it lets the memory jobs find more turns to record per scribe call
// (with finishing turns always first, 100 channels × 20 turns made 15%
// more recorder calls and doubled the jobs' drain after the run).
type gate struct{ *gateState }

type gateState struct {
	mu sync.Mutex
	n  int
	// longLine is how many turns may wait to start before turns storing
	// their reply go ahead of them.
	longLine int
	used     int
	seq      uint64
	// lines holds the waiting turns, each in the order they came.
	lines [2][]gateWaiter
	// waiting counts the turns waiting for a slot: more than none means
	// the pipeline is busy, and recall gets cheaper (busyRecall).
	waiting atomic.Int32
}

type gateWaiter struct {
	ready chan struct{}
	seq   uint64
}

const (
	lineFinish = iota
	lineStart
)

// defaultLongLine is gateState.longLine. A started turn holds about 100 kB
// (troupe bench's thousand channels had a live heap near 98 MB), so a long
// line holds some 25 MB of started turns, not a thousand turns' worth.
const defaultLongLine = 256

// defaultConcurrentTurns is the gate's size when Options.ConcurrentTurns is 0:
// one turn per CPU. Measured with troupe bench on two CPUs shared with
// PostgreSQL and Redis, two slots kept the pipeline's p99 under 20 ms at
// about 350 turns/s; four gave 25% more turns at twice the p99.
func defaultConcurrentTurns() int { return runtime.GOMAXPROCS(0) }

func newGate(n int) gate {
	if n <= 0 {
		n = defaultConcurrentTurns()
	}
	return gate{&gateState{n: n, longLine: defaultLongLine}}
}

// enter waits for a slot to start a turn. It returns the slot's release,
// which may be called more than once, and how long the turn waited.
func (g gate) enter(ctx context.Context) (release func(), waited time.Duration, err error) {
	return g.take(ctx, lineStart)
}

// enterToFinish is enter for a turn that has its reply and stores it.
func (g gate) enterToFinish(ctx context.Context) (release func(), waited time.Duration, err error) {
	return g.take(ctx, lineFinish)
}

func (g gate) take(ctx context.Context, line int) (func(), time.Duration, error) {
	start := time.Now()
	g.mu.Lock()
	if g.used < g.n {
		g.used++
		g.mu.Unlock()
		return sync.OnceFunc(g.release), 0, nil
	}
	ready := make(chan struct{})
	g.seq++
	g.lines[line] = append(g.lines[line], gateWaiter{ready, g.seq})
	g.waiting.Add(1)
	g.mu.Unlock()
	select {
	case <-ready:
		return sync.OnceFunc(g.release), time.Since(start), nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	for i, w := range g.lines[line] {
		if w.ready == ready {
			g.lines[line] = append(g.lines[line][:i], g.lines[line][i+1:]...)
			g.waiting.Add(-1)
			g.mu.Unlock()
			return func() {}, time.Since(start), ctx.Err()
		}
	}
	g.mu.Unlock()
	// The slot came as the wait ended: pass it on.
	g.release()
	return func() {}, time.Since(start), ctx.Err()
}

// release hands the slot to the turn whose turn it is (see gate), or frees
// it.
func (g gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	fin, st := g.lines[lineFinish], g.lines[lineStart]
	line := lineStart
	switch {
	case len(fin) == 0 && len(st) == 0:
		g.used--
		return
	case len(st) == 0, len(fin) > 0 && (len(st) > g.longLine || fin[0].seq < st[0].seq):
		line = lineFinish
	}
	q := g.lines[line]
	close(q[0].ready)
	g.lines[line] = q[1:]
	g.waiting.Add(-1)
}

// busy reports whether turns are waiting for a slot.
func (g gate) busy() bool { return g.waiting.Load() > 0 }

// Active reports whether any turn holds or waits for one of the
// pipeline's slots (limits.concurrent_turns): the process is answering,
// and its background work should do its own share one job at a time
// (jobs.WorkerOptions.TurnsActive). Holding jobs back only once the slots
// were all taken and as many turns waited let four of them work beside a
// stream of turns that never filled the line (see jobs' yieldToTurns).
func (p *Pipeline) Active() bool { return p.gate.active() }

func (g gate) active() bool {
	if g.waiting.Load() > 0 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used > 0
}

// ConcurrentTurns is how many turns may do the pipeline's own work at once.
func (p *Pipeline) ConcurrentTurns() int { return p.gate.n }
