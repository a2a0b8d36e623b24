package jobs

import (
	"context"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"troupe/memory"
)

// yieldToTurns lets a memory job do its own work (reading the story,
// building prompts, installing what the scribe wrote) only in the jobs'
// one lane while this process's turns are active; an urgent task (a chat
// ended with /new, a recap that needs the record) never waits. The job
// gives the lane back while it waits for the scribe or for a lock another
// job holds (it is the job's memory.Pacer), so jobs still wait for the
// model side by side, and takes it again after.
// Jobs share the CPU and the database with the turns. Holding them back
// only while the turns filled every slot left troupe bench's stream of 100
// channels (--latency 2s --seed-perceptions 10000, PostgreSQL) with four
// jobs working beside turns that never filled the line: pipeline p99
// 22.0–25.8 ms in six runs, 16.7–22.5 ms with this. Once no turn is
// active, jobs work side by side again.
func (w *Worker) yieldToTurns(next asynq.Handler) asynq.Handler {
	if w.opt.TurnsActive == nil {
		return next
	}
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		if q, _ := asynq.GetQueueName(ctx); q == QueueUrgent {
			return next.ProcessTask(ctx, t)
		}
		h := &laneHold{w: w}
		if err := h.take(ctx, 0); err != nil {
			return err
		}
		defer h.release()
		return next.ProcessTask(memory.WithPacer(ctx, h), t)
	})
}

// yieldCheck is how often a job held back by yieldToTurns looks whether
// turns are still active.
const yieldCheck = 20 * time.Millisecond

// laneHold is one job's hold on the worker's lane, and the job's
// memory.Pacer: the lane goes back while the job waits (for the scribe,
// for a lock). Its waits may overlap (a reflection's belief checks): the
// lane goes back when the first begins and is taken again when the last
// ends.
type laneHold struct {
	w     *Worker
	mu    sync.Mutex
	held  bool
	calls int
}

// take waits until no turn is active (and holds nothing) or the lane is
// free (and holds it). With bound above 0 (a job whose wait ended, see
// Waiting) it gives up after bound and goes on without the lane: the job
// may hold a lock the one in the lane waits for. A wait that began
// meanwhile gets the lane back at once.
func (h *laneHold) take(ctx context.Context, bound time.Duration) error {
	tick := time.NewTicker(yieldCheck)
	defer tick.Stop()
	var until <-chan time.Time
	if bound > 0 {
		t := time.NewTimer(bound)
		defer t.Stop()
		until = t.C
	}
	for h.w.opt.TurnsActive() {
		select {
		case h.w.lane <- struct{}{}:
			h.mu.Lock()
			if h.calls > 0 {
				<-h.w.lane
			} else {
				h.held = true
			}
			h.mu.Unlock()
			return nil
		case <-tick.C:
		case <-until:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// laneRetake bounds how long a job whose wait ended waits for the lane
// (Worker.retake). Every lock wait of the memory service gives the lane
// back, so this only undoes a wait nobody foresaw; jobs that went on
// without the lane after a short bound (1 s) cost SQLite's troupe bench 5%
// of its turns while the turns held every slot.
const laneRetake = 10 * time.Second

func (h *laneHold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		h.held = false
		<-h.w.lane
	}
}

// Waiting gives the lane back until the job's last wait ends.
func (h *laneHold) Waiting(ctx context.Context) (done func()) {
	h.mu.Lock()
	h.calls++
	first := h.calls == 1
	h.mu.Unlock()
	if first {
		h.release()
	}
	return func() {
		h.mu.Lock()
		h.calls--
		last := h.calls == 0
		h.mu.Unlock()
		if last {
			// A job whose context ended fails at its next read anyway.
			_ = h.take(ctx, h.w.retake)
		}
	}
}
